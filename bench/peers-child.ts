// One system of bench/peers.ts, in a process of its own: the OpenTelemetry
// instrumentations patch the `openai` module's classes for the whole
// process, so each system runs beside a raw client made from a second copy
// of the SDK that nothing patched (`openai-raw` in the scratch prefix; the
// system gets the repo's `openai`). Raw and recorded calls are interleaved,
// rotating which goes first, against a loopback server that answers as
// bench/logprobs.ts's does; every caller asks for `logprobs: true,
// top_logprobs: 5`. The result goes to stdout as one JSON line after
// RESULT_MARK.
//
// Environment: PEERS_SYSTEM (a key of SYSTEMS), PEERS_SINK (the sink's URL),
// PEERS_PREFIX (the scratch prefix), BENCH_PEERS_SCALE.
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  type Ask,
  CHUNKS,
  CONCURRENT,
  completion,
  LONG_TOKENS,
  LOOP_TOKENS,
  LOOP_TURNS,
  streamed,
  TOP,
} from "./logprobs.js";
import {
  type ChatClient,
  type OpenAIModule,
  RESULT_MARK,
  SYSTEMS,
  type System,
} from "./peers-systems.js";

// A model the peers know: Traceloop counts a stream's tokens with tiktoken
// for it (and logs "Unknown model" for a made-up name). The server tells
// the kinds of call apart by the last message.
const MODEL = "gpt-4o-mini";
const LONG = "write at length";
const SCALE = Number(process.env.BENCH_PEERS_SCALE ?? 1);
const n = (rounds: number) => Math.max(2, Math.round(rounds * SCALE));

const name = process.env.PEERS_SYSTEM ?? "";
const sink = process.env.PEERS_SINK ?? "";
const prefix = process.env.PEERS_PREFIX ?? "";
const setup = SYSTEMS[name];
if (!setup || !sink || !prefix) throw new Error(`peers-child: bad environment (${name})`);

// Answers made once: plain token texts for callers who ask (the peers send
// the caller's request as it is), vLLM's `token_id:N` when the request asks
// for it (ours adds `return_tokens_as_token_ids`, as it does for users).
const plain: Ask = { ids: false, top: TOP };
const ids: Ask = { ids: true, top: TOP };
const answers = new Map<string, string>();
for (const [spelling, ask] of [
  ["plain", plain],
  ["ids", ids],
] as const) {
  // The answer builders name the model "m"; Traceloop looks the answer's model up.
  const named = (answer: string) => answer.replaceAll('"model":"m"', `"model":"${MODEL}"`);
  answers.set(`loop/${spelling}`, named(completion(ask, LOOP_TOKENS)));
  answers.set(`long/${spelling}`, named(completion(ask, LONG_TOKENS)));
  answers.set(`stream/${spelling}`, named(streamed(ask)));
}
const server = createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    const body = JSON.parse(raw);
    if (body.logprobs !== true || body.top_logprobs !== TOP)
      throw new Error("peers-child: a request without the caller's logprobs");
    const stream = body.stream === true;
    const spelling = body.return_tokens_as_token_ids === true ? "ids" : "plain";
    const kind = stream ? "stream" : body.messages.at(-1)?.content === LONG ? "long" : "loop";
    res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
    res.end(answers.get(`${kind}/${spelling}`));
  });
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

// OpenTelemetry's warnings (a batch processor that drops spans when its
// queue is full says so here): a system that drops records does less work.
const warnings: string[] = [];
try {
  const otel = createRequire(join(prefix, "package.json"))("@opentelemetry/api") as {
    diag: { setLogger(logger: object, level: number): void };
    DiagLogLevel: { WARN: number };
  };
  const keep = (...parts: unknown[]) => warnings.push(parts.map(String).join(" "));
  const skip = () => {};
  otel.diag.setLogger(
    { error: keep, warn: keep, info: skip, debug: skip, verbose: skip },
    otel.DiagLogLevel.WARN,
  );
} catch {}

// The system first (its instrumentations are set up before anything calls),
// on the repo's `openai`; the raw side on the prefix's copy.
const repoRequire = createRequire(import.meta.url);
const peersRequire = createRequire(join(prefix, "package.json"));
const systemOpenAI = repoRequire("openai") as OpenAIModule;
const rawOpenAI = peersRequire("openai-raw") as OpenAIModule;
if (rawOpenAI.OpenAI === systemOpenAI.OpenAI) throw new Error("peers-child: one copy of openai");
const system: System = await setup({
  baseURL,
  sink,
  openai: systemOpenAI,
  peers: peersRequire,
});
const raw = new rawOpenAI.OpenAI({ apiKey: "k", baseURL });

const now = () => Number(process.hrtime.bigint()) / 1000;
const median = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

type Side = "raw" | "sys";
type Times = Record<Side, number[]>;
const clientOf = (side: Side): ChatClient => (side === "raw" ? raw : system.client);
/** Runs `work` as a rollout of the system on its side, bare on the raw side. */
const rollout = (side: Side, work: () => Promise<unknown>) =>
  side === "raw" ? work().then(() => {}) : system.rollout(work);

/** `rounds` rounds of both sides, alternating which goes first. */
async function rotated(rounds: number, run: (side: Side) => Promise<number>): Promise<Times> {
  const out: Times = { raw: [], sys: [] };
  for (let i = 0; i < rounds; i++)
    for (const side of i % 2 ? (["raw", "sys"] as const) : (["sys", "raw"] as const))
      out[side].push(await run(side));
  return out;
}
const added = (t: Times, per = 1) => median(t.sys.map((x, i) => (x - (t.raw[i] ?? x)) / per));
const ratio = (t: Times) => median(t.sys.map((x, i) => x / (t.raw[i] ?? x)));

interface Answer {
  choices: { message: { content: string | null }; logprobs: { content: unknown[] } | null }[];
}
/** Calls made on the system's side: what it should have exported. */
let recordedCalls = 0;
const call = (side: Side, messages: object[]) => {
  if (side === "sys") recordedCalls++;
  return clientOf(side).chat.completions.create({
    model: MODEL,
    messages,
    logprobs: true,
    top_logprobs: TOP,
  }) as Promise<Answer>;
};

/** A 4-turn agent loop, each call timed as its caller waits into `into`. */
async function loop(side: Side, into: number[]) {
  const messages: object[] = [{ role: "system", content: "be brief" }];
  for (let turn = 0; turn < LOOP_TURNS; turn++) {
    messages.push({ role: "user", content: `question ${turn}` });
    const t0 = now();
    const res = await call(side, messages);
    into.push(now() - t0);
    if (res.choices[0]?.logprobs?.content.length !== LOOP_TOKENS)
      throw new Error(`peers-child: ${side} got no logprobs`);
    messages.push({ role: "assistant", content: res.choices[0]?.message.content ?? "" });
  }
}
const loops = async (rounds: number) => {
  const out: Times = { raw: [], sys: [] };
  await rotated(rounds, async (side) => {
    await rollout(side, () => loop(side, out[side]));
    return 0;
  });
  return out;
};
/** Times `work` as its caller waits, inside the rollout (its end not timed). */
const inside = (work: (side: Side) => Promise<unknown>) => async (side: Side) => {
  let took = 0;
  await rollout(side, async () => {
    const t0 = now();
    await work(side);
    took = now() - t0;
  });
  return took;
};
/** Times the whole rollout, its start and end included. */
const whole = (work: (side: Side) => Promise<unknown>) => async (side: Side) => {
  const t0 = now();
  await rollout(side, () => work(side));
  return now() - t0;
};
const long = (side: Side) => call(side, [{ role: "user", content: LONG }]);
const stream = async (side: Side) => {
  if (side === "sys") recordedCalls++;
  const s = (await clientOf(side).chat.completions.create({
    model: MODEL,
    messages: [{ role: "user", content: "go" }],
    stream: true,
    logprobs: true,
    top_logprobs: TOP,
  })) as AsyncIterable<unknown>;
  let chunks = 0;
  for await (const _ of s) chunks++;
  if (chunks !== CHUNKS) throw new Error(`peers-child: ${side} read ${chunks} chunks`);
};
const concurrent = async (side: Side) => {
  const sink: number[] = [];
  const t0 = now();
  await Promise.all(
    Array.from({ length: CONCURRENT }, () => rollout(side, () => loop(side, sink))),
  );
  return now() - t0;
};
/**
 * Process CPU per call (µs) of `rollouts` rollouts of `calls` calls each; on
 * the system's side the flush that exports them is included.
 */
const cpu =
  (rollouts: number, work: (side: Side) => Promise<unknown>, calls: number) =>
  async (side: Side) => {
    // The other side's garbage collected first, so that each side pays for its own.
    global.gc?.();
    const c0 = process.cpuUsage();
    for (let i = 0; i < rollouts; i++) await rollout(side, () => work(side));
    if (side === "sys") await system.flush();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / (rollouts * calls);
  };

/** What the sink has received from this process so far. */
async function sinkCount(): Promise<{ requests: number; bytes: number }> {
  const res = await fetch(`${sink}/__count`);
  return (await res.json()) as { requests: number; bytes: number };
}

// The raw side unpatched: a few raw calls of every kind, flushed, leave no
// traffic at the sink; one recorded loop, flushed, does.
await system.rollout(() => loop("sys", []));
await system.flush();
const before = await sinkCount();
for (let i = 0; i < 5; i++) {
  await loop("raw", []);
  await long("raw");
  await stream("raw");
}
await system.flush();
const afterRaw = await sinkCount();
if (afterRaw.requests !== before.requests)
  throw new Error(`peers-child: ${name}: raw calls reached the sink`);
await system.rollout(() => loop("sys", []));
await system.flush();
const afterOne = await sinkCount();
if (afterOne.requests === afterRaw.requests)
  throw new Error(`peers-child: ${name}: a recorded loop sent nothing to the sink`);
const proto = (m: OpenAIModule) =>
  (m.OpenAI as unknown as { Chat: { Completions: { prototype: { create: object } } } }).Chat
    .Completions.prototype.create as { __wrapped?: boolean };

// Warm-up: every path, until V8 has optimized what runs on it.
await loops(n(100));
await rotated(n(30), inside(long));
await rotated(n(30), inside(stream));
await rotated(n(15), whole(long));
await rotated(
  n(30),
  whole((side) => loop(side, [])),
);
await rotated(1, concurrent);
await system.flush();

/** A measured phase, then the system's flush (not timed). */
async function phase(run: () => Promise<Times>): Promise<Times> {
  const t = await run();
  await system.flush();
  return t;
}
const loopTimes = await phase(() => loops(n(150)));
const wholeLoop = await phase(() =>
  rotated(
    n(150),
    whole((side) => loop(side, [])),
  ),
);
const longTimes = await phase(() => rotated(n(60), inside(long)));
const wholeLong = await phase(() => rotated(n(60), whole(long)));
const walls = await phase(() => rotated(n(3), concurrent));
const streams = await phase(() => rotated(n(75), inside(stream)));
const cpuLoop = await phase(() =>
  rotated(
    n(6),
    cpu(25, (side) => loop(side, []), LOOP_TURNS),
  ),
);
const cpuLong = await phase(() => rotated(n(6), cpu(10, long, 1)));
server.close();
const total = await sinkCount();

const result = {
  system: name,
  loopAdded: added(loopTimes),
  loopRatio: ratio(loopTimes),
  loopRaw: median(loopTimes.raw),
  rolloutAdded: added(wholeLoop),
  rolloutRatio: ratio(wholeLoop),
  longAdded: added(longTimes),
  longRatio: ratio(longTimes),
  longRaw: median(longTimes.raw),
  wholeLongRatio: ratio(wholeLong),
  concurrentRatio: ratio(walls),
  concurrentRaw: median(walls.raw),
  chunkAdded: added(streams, CHUNKS),
  cpuLoopRatio: ratio(cpuLoop),
  cpuLoopAdded: added(cpuLoop),
  cpuLongRatio: ratio(cpuLong),
  cpuLongAdded: added(cpuLong),
  sink: total,
  recordedCalls,
  warnings: [...new Set(warnings)].slice(0, 5),
  dropped: warnings.reduce((k, w) => k + Number(/Dropped (\d+) spans/.exec(w)?.[1] ?? 0), 0),
  rawPatched: proto(rawOpenAI).__wrapped === true,
  systemPatched: proto(systemOpenAI).__wrapped === true,
};
console.log(`${RESULT_MARK}${JSON.stringify(result)}`);
process.exit(0);
