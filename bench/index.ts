// Wrapped vs raw openai client against a loopback server, in one run.
// Run with `npm run bench`.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { Recorder } from "../src/recorder/index.js";

const CHUNKS = 200;
const CALLS = 2000;
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
const sse =
  Array.from(
    { length: CHUNKS },
    (_, i) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "x" }, finish_reason: i === CHUNKS - 1 ? "stop" : null }] })}\n\n`,
  ).join("") + "data: [DONE]\n\n";

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

async function calls(client: OpenAI, inRollout: boolean): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = process.hrtime.bigint();
    if (inRollout)
      await recorder.rollout(() => client.chat.completions.create({ model: "m", messages }));
    else await client.chat.completions.create({ model: "m", messages });
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return times;
}

async function streams(client: OpenAI, inRollout: boolean) {
  const total: number[] = [];
  const first: number[] = [];
  for (let i = 0; i < 200; i++) {
    const run = async () => {
      const t0 = process.hrtime.bigint();
      const s = await client.chat.completions.create({ model: "m", messages, stream: true });
      let firstAt = 0n;
      for await (const _ of s) if (!firstAt) firstAt = process.hrtime.bigint();
      first.push(Number(firstAt - t0) / 1000);
      total.push(Number(process.hrtime.bigint() - t0) / 1000);
    };
    if (inRollout) await recorder.rollout(run);
    else await run();
  }
  return { total, first };
}

await calls(raw, false);
await calls(wrapped, true); // warm-up
const rawCalls = await calls(raw, false);
const recCalls = await calls(wrapped, true);
let inOne: number[] = [];
await recorder.rollout(async () => {
  inOne = await calls(wrapped, false);
});
await streams(raw, false);
await streams(wrapped, true);
const rawS = await streams(raw, false);
const recS = await streams(wrapped, true);

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
  "call + its own rollout p50 (added)": { value: us(pct(recCalls, 0.5) - pct(rawCalls, 0.5)) },
  "call + its own rollout p99 (added)": { value: us(pct(recCalls, 0.99) - pct(rawCalls, 0.99)) },
  "call in an open rollout p50 (added)": { value: us(pct(inOne, 0.5) - pct(rawCalls, 0.5)) },
  "per streamed chunk (added, p50)": {
    value: us((pct(recS.total, 0.5) - pct(rawS.total, 0.5)) / CHUNKS),
  },
  "time to first chunk p50 (added)": { value: us(pct(recS.first, 0.5) - pct(rawS.first, 0.5)) },
  "memory per recorded trajectory": {
    value: `${(perTrajectory / 1024).toFixed(1)} KiB${global.gc ? "" : " (no --expose-gc, rough)"}`,
  },
  "raw call p50 (reference)": { value: us(pct(rawCalls, 0.5)) },
});
server.close();
