// Wrapped vs raw openai client against a loopback server, in one run.
// Run with `npm run bench`.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { Recorder } from "../src/recorder/index.js";

const CHUNKS = 200;
const CALLS = 2000;
const CHUNK_ROUNDS = 400;
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

const recorder = new Recorder();
const raw = new OpenAI({ apiKey: "k", baseURL });
const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
const messages = [{ role: "user" as const, content: "hi" }];
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0;

const time = async (fn: () => Promise<unknown>) => {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1000;
};

/**
 * Raw and wrapped calls interleaved (alternating which goes first), so both
 * see the same machine load, JIT state and heap: the gap is the recorder's.
 */
async function calls(inRollout: boolean): Promise<{ raw: number[]; rec: number[] }> {
  const out = { raw: [] as number[], rec: [] as number[] };
  const rawCall = () => raw.chat.completions.create({ model: "m", messages });
  const recCall = inRollout
    ? () => recorder.rollout(() => wrapped.chat.completions.create({ model: "m", messages }))
    : () => wrapped.chat.completions.create({ model: "m", messages });
  for (let i = 0; i < CALLS; i++) {
    if (i % 2) {
      out.raw.push(await time(rawCall));
      out.rec.push(await time(recCall));
    } else {
      out.rec.push(await time(recCall));
      out.raw.push(await time(rawCall));
    }
  }
  return out;
}

interface StreamTimes {
  total: number[];
  first: number[];
}

async function stream(client: OpenAI, into: StreamTimes): Promise<void> {
  const t0 = process.hrtime.bigint();
  const s = await client.chat.completions.create({ model: "m", messages, stream: true });
  let firstAt = 0n;
  for await (const _ of s) if (!firstAt) firstAt = process.hrtime.bigint();
  into.first.push(Number(firstAt - t0) / 1000);
  into.total.push(Number(process.hrtime.bigint() - t0) / 1000);
}

/** Raw and recorded streams interleaved, as {@link calls} does. */
async function streams(rounds: number): Promise<{ raw: StreamTimes; rec: StreamTimes }> {
  const out = { raw: { total: [], first: [] }, rec: { total: [], first: [] } };
  const rawRun = () => stream(raw, out.raw);
  const recRun = () => recorder.rollout(() => stream(wrapped, out.rec));
  for (let i = 0; i < rounds; i++) {
    for (const run of i % 2 ? [rawRun, recRun] : [recRun, rawRun]) await run();
  }
  return out;
}

await calls(true); // warm-up
const own = await calls(true);
let inOne = { raw: [] as number[], rec: [] as number[] };
await recorder.rollout(async () => {
  inOne = await calls(false);
});
await streams(100); // warm-up
const { raw: rawS, rec: recS } = await streams(CHUNK_ROUNDS);

global.gc?.();
const before = process.memoryUsage().heapUsed;
const kept = [];
for (let i = 0; i < 500; i++)
  kept.push(
    await recorder.rollout(() => wrapped.chat.completions.create({ model: "m", messages })),
  );
global.gc?.();
const perTrajectory = (process.memoryUsage().heapUsed - before) / kept.length;

const us = (n: number) => `${n.toFixed(2)} µs`;
console.table({
  "call + its own rollout p50 (added)": { value: us(pct(own.rec, 0.5) - pct(own.raw, 0.5)) },
  "call + its own rollout p99 (added)": { value: us(pct(own.rec, 0.99) - pct(own.raw, 0.99)) },
  "call in an open rollout p50 (added)": { value: us(pct(inOne.rec, 0.5) - pct(inOne.raw, 0.5)) },
  "per streamed chunk (added, p50)": {
    value: us((pct(recS.total, 0.5) - pct(rawS.total, 0.5)) / CHUNKS),
  },
  "time to first chunk p50 (added)": { value: us(pct(recS.first, 0.5) - pct(rawS.first, 0.5)) },
  "memory per recorded trajectory": {
    value: `${(perTrajectory / 1024).toFixed(1)} KiB${global.gc ? "" : " (no --expose-gc, rough)"}`,
  },
  "raw call p50 (reference)": { value: us(pct(own.raw, 0.5)) },
});
server.close();
