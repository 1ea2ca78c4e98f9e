// Wrapped vs raw openai client against a loopback server, in one run.
// Run with `npm run bench`. It builds dist/ first, but tsx follows the root
// tsconfig's paths, so "trajectory-recorder" loads src/ here, as the rows that
// take internals from src/ need (dist/'s classes are others: a CompactLogprobs
// from dist/ is not one to src/'s wire writer). dist/ can differ: a retention
// of every parsed answer showed in dist/ only (docs/performance.md).
// BENCH_WARMUP=n changes the warm-up.
//
// Every figure compares the two clients under the same load: raw and
// recorded calls are interleaved, alternating which goes first, so both see
// the same machine, JIT state and heap. The warm-up runs every path a few
// thousand times first: until V8 has optimized the recorder's functions they
// run in the interpreter, and the figures would measure that instead.
import { AsyncLocalStorage, executionAsyncId } from "node:async_hooks";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { Recorder } from "trajectory-recorder";
import { shippingBench } from "./shipping.js";

const CHUNKS = 200;
const CALLS = 2000;
const TURNS = 4;
const STREAMS = 400;
const KEPT = 2000;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
// BENCH_ONLY=percall, responses, logprobs, lineage, shipping, distributed, report, cli or proxy runs those rows alone;
// BENCH_ONLY=distributed-scale runs the 400-in-flight run (minutes long, so only when named);
// BENCH_ONLY=peers runs the side-by-side with the five peer recorders (it installs them into
// .bench/peers on its first run, so only when named).
const ONLY = process.env.BENCH_ONLY;

const json = JSON.stringify({
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [
    {
      index: 0,
      finish_reason: "stop",
      logprobs: null,
      message: { role: "assistant", content: "hello" },
    },
  ],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});
const sse = `${Array.from(
  { length: CHUNKS },
  (_, i) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "x" }, finish_reason: i === CHUNKS - 1 ? "stop" : null }] })}\n\n`,
).join("")}data: [DONE]\n\n`;

const server = createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    const stream = JSON.parse(raw).stream;
    res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
    res.end(stream ? sse : json);
  });
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

/**
 * A fetch that answers in memory, doing the server's share of the work (it
 * parses the request) without sockets. Against it, what the recorder adds is
 * its own work on the caller's path and little else: steadier than the
 * loopback figures, which also carry what the extra code, objects and request
 * bytes cost around the network path (caches, the server on the same thread).
 */
const memoryFetch = async (_url: unknown, init?: { body?: unknown }) => {
  JSON.parse(String(init?.body));
  return new Response(json, { headers: { "content-type": "application/json" } });
};

const recorder = new Recorder();
const raw = new OpenAI({ apiKey: "k", baseURL });
const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
const rawInMemory = new OpenAI({ apiKey: "k", baseURL, fetch: memoryFetch });
const wrappedInMemory = recorder.wrap(new OpenAI({ apiKey: "k", baseURL, fetch: memoryFetch }));
const hi: ChatCompletionMessageParam[] = [{ role: "user", content: "hi" }];

const now = () => Number(process.hrtime.bigint()) / 1000;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0;

/** Runs `a` and `b` `rounds` times, alternating which goes first. */
async function interleave(rounds: number, a: () => Promise<void>, b: () => Promise<void>) {
  for (let i = 0; i < rounds; i++) {
    if (i % 2) {
      await a();
      await b();
    } else {
      await b();
      await a();
    }
  }
}

/** Samples of the raw and the recorded client; the i-th of each were taken side by side. */
interface Times {
  raw: number[];
  rec: number[];
}
const times = (): Times => ({ raw: [], rec: [] });

/** One call, raw, against one call in a rollout of its own (the rollout's start and end included). */
async function ownRollout(rounds: number): Promise<Times> {
  const out = times();
  await interleave(
    rounds,
    async () => {
      const t0 = now();
      await raw.chat.completions.create({ model: "m", messages: hi });
      out.raw.push(now() - t0);
    },
    async () => {
      const t0 = now();
      await recorder.rollout(() => wrapped.chat.completions.create({ model: "m", messages: hi }));
      out.rec.push(now() - t0);
    },
  );
  return out;
}

/** Runs a recorded loop in its context: a rollout, or for the reference rows a bare store. */
type Context = (loop: () => Promise<void>) => Promise<unknown>;
const inRollout: Context = (loop) => recorder.rollout(loop);

/**
 * A bare AsyncLocalStorage around the loop, switched off after it as the
 * recorder switches its own off when no rollout runs. Where the store works
 * through async_hooks (Node 20; Node 22 without
 * --experimental-async-context-frame) every promise pays a hook while it is on.
 */
const bare = new AsyncLocalStorage<object>();
const inBareStore: Context = async (loop) => {
  await bare.run({}, loop);
  bare.disable();
};

/**
 * An agent loop of {@link TURNS} calls, each extending the conversation; the
 * recorded loop runs in a rollout. Each call is timed on its own, so the
 * rollout's start and end are not in these figures (see {@link ownRollout}).
 */
async function agentLoops(
  rounds: number,
  recorded: OpenAI = wrapped,
  context: Context = inRollout,
  reference: OpenAI = raw,
): Promise<Times> {
  const out = times();
  const loop = async (client: OpenAI, into: number[]) => {
    const messages: ChatCompletionMessageParam[] = [{ role: "system", content: "be brief" }];
    for (let turn = 0; turn < TURNS; turn++) {
      messages.push({ role: "user", content: `question ${turn}` });
      const t0 = now();
      const res = await client.chat.completions.create({ model: "m", messages });
      into.push(now() - t0);
      messages.push(res.choices[0]!.message);
    }
  };
  await interleave(
    rounds,
    () => loop(reference, out.raw),
    () => context(() => loop(recorded, out.rec)).then(() => {}),
  );
  return out;
}

/**
 * The least any recorder built on the SDK's public surface pays on this
 * machine: a wrapper that only copies the body to add the training fields and
 * hooks the SDK's parse step to see the response, recording nothing. Run in a
 * bare store (any recorder needs one to tell concurrent rollouts apart), it
 * is the floor; the recorder's own work is what it adds beyond this.
 */
function floorClient(): OpenAI {
  const client = new OpenAI({ apiKey: "k", baseURL });
  const completions = client.chat.completions as unknown as {
    create: (body: object, options?: object) => { parseResponse: (...a: unknown[]) => unknown };
  };
  const create = completions.create.bind(completions);
  const seen: unknown[] = [];
  completions.create = (body, options) => {
    const training = { logprobs: true, return_token_ids: true, return_tokens_as_token_ids: true };
    const promise = create({ ...training, ...body }, options);
    const parse = promise.parseResponse;
    promise.parseResponse = function (this: unknown, ...a: unknown[]) {
      return (parse.apply(this, a) as Promise<unknown>).then((res) => {
        seen[0] = res;
        return res;
      });
    };
    return promise;
  };
  return client;
}

/**
 * A streamed call read to its end, raw and in a rollout (the clock starts
 * inside it). `first` runs from the call to the first chunk; `tee` from the
 * moment the caller holds the Stream to its first chunk, which is what the
 * recorder's tee of the stream adds on its own.
 */
async function streams(rounds: number): Promise<{ first: Times; tee: Times; total: Times }> {
  const out = { first: times(), tee: times(), total: times() };
  const read = async (client: OpenAI, into: "raw" | "rec") => {
    const t0 = now();
    const s = await client.chat.completions.create({ model: "m", messages: hi, stream: true });
    const t1 = now();
    let firstAt = 0;
    for await (const _ of s) if (!firstAt) firstAt = now();
    out.first[into].push(firstAt - t0);
    out.tee[into].push(firstAt - t1);
    out.total[into].push(now() - t0);
  };
  await interleave(
    rounds,
    () => read(raw, "raw"),
    async () => {
      await recorder.rollout(() => read(wrapped, "rec"));
    },
  );
  return out;
}

/** Whether the store works through async_hooks: then each await resumes under a new async id. */
const storeNeedsHooks = await inBareStore(async () => {
  await null;
  const first = executionAsyncId();
  await null;
  if (first !== executionAsyncId()) throw new Error("hooks");
}).then(
  () => false,
  () => true,
);

/** The per-call rows: the recorder on the caller's path. */
async function perCallBench(): Promise<void> {
  await ownRollout(WARMUP);
  await agentLoops(WARMUP / TURNS);
  await agentLoops(WARMUP / TURNS, raw, inBareStore);
  await agentLoops(WARMUP / TURNS, floorClient(), inBareStore);
  await agentLoops(WARMUP / TURNS, wrappedInMemory, inRollout, rawInMemory);
  await agentLoops(WARMUP / TURNS, rawInMemory, inBareStore, rawInMemory);
  await streams(WARMUP / 10);

  const own = await ownRollout(CALLS);
  const loops = await agentLoops(CALLS / TURNS);
  const storeOnly = await agentLoops(CALLS / TURNS, raw, inBareStore);
  const floor = await agentLoops(CALLS / TURNS, floorClient(), inBareStore);
  const inMemory = await agentLoops(CALLS / TURNS, wrappedInMemory, inRollout, rawInMemory);
  const storeInMemory = await agentLoops(CALLS / TURNS, rawInMemory, inBareStore, rawInMemory);
  const s = await streams(STREAMS);

  global.gc?.();
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  const kept = [];
  for (let i = 0; i < KEPT; i++)
    kept.push(
      await recorder.rollout(() => wrapped.chat.completions.create({ model: "m", messages: hi })),
    );
  global.gc?.();
  global.gc?.();
  const perTrajectory = (process.memoryUsage().heapUsed - before) / kept.length;

  const us = (n: number) => `${n.toFixed(2)} µs`;
  /**
   * The median of the paired differences: each recorded sample against the raw
   * one taken next to it, which cancels the machine's drift over the run.
   */
  const added = (t: Times, per = 1) =>
    us(
      pct(
        t.rec.map((r, i) => (r - (t.raw[i] ?? r)) / per),
        0.5,
      ),
    );
  /** Tails compared as distributions (pairs say nothing about tails). */
  const addedTail = (t: Times, p: number) => us(pct(t.rec, p) - pct(t.raw, p));

  console.table({
    "per call in a rollout, p50 (added)": { value: added(loops) },
    "per call in a rollout, p99 (added)": { value: addedTail(loops, 0.99) },
    "  of which Node's AsyncLocalStorage alone, p50": { value: added(storeOnly) },
    "  floor: store + training fields + parse hook, p50": { value: added(floor) },
    "per call in a rollout, in-memory fetch (no sockets), p50 (added)": { value: added(inMemory) },
    "  of which Node's AsyncLocalStorage alone, in memory, p50": { value: added(storeInMemory) },
    "one call in its own rollout, p50 (added)": { value: added(own) },
    "one call in its own rollout, p99 (added)": { value: addedTail(own, 0.99) },
    "per streamed chunk, p50 (added)": { value: added(s.total, CHUNKS) },
    "time to first chunk, p50 (added)": { value: added(s.first) },
    "  of which after the Stream is returned, p50": { value: added(s.tee) },
    "memory per recorded trajectory": {
      value: `${(perTrajectory / 1024).toFixed(2)} KiB${global.gc ? "" : " (no --expose-gc, rough)"}`,
    },
    "raw call p50 (reference)": { value: us(pct(loops.raw, 0.5)) },
    "raw call with the in-memory fetch p50 (reference)": { value: us(pct(inMemory.raw, 0.5)) },
    ...(await import("./validate.js")).benchValidate(),
  });
  console.log(
    `Node ${process.version}; AsyncLocalStorage ${storeNeedsHooks ? "through async_hooks" : "through AsyncContextFrame (no hooks)"}`,
  );
}

if (ONLY === undefined || ONLY === "percall") await perCallBench();
server.close();
if (ONLY === undefined || ONLY === "responses")
  console.table(
    await (await import("./responses.js")).benchResponses({ warmup: WARMUP, calls: CALLS }),
  );
if (ONLY === undefined || ONLY === "logprobs") {
  console.table(await (await import("./logprobs.js")).benchLogprobs());
  console.log(`Node ${process.version}`);
}
if (ONLY === undefined || ONLY === "lineage")
  console.table(await (await import("./lineage.js")).benchLineage());
if (ONLY === undefined || ONLY === "shipping") await shippingBench();
if (ONLY === undefined || ONLY === "distributed")
  await (await import("./distributed.js")).benchDistributed();
if (ONLY === "distributed-scale")
  await (await import("./distributed-scale.js")).benchDistributedScale();
if (ONLY === "peers") await (await import("./peers.js")).benchPeers();
if (ONLY === undefined || ONLY === "report") await (await import("./report.js")).benchReport();
if (ONLY === undefined || ONLY === "cli") await (await import("./cli.js")).benchCli();
if (ONLY === undefined || ONLY === "proxy") await (await import("./proxy.js")).benchProxy();
if (ONLY === undefined || ONLY === "production")
  await (await import("./production.js")).benchProduction();
if (ONLY === undefined || ONLY === "store")
  console.table(await (await import("./store.js")).benchStore());
