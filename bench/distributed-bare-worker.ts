// One worker process of the bare BullMQ flow in bench/distributed.ts: what
// the rollouts cost through BullMQ alone. Each job runs the same
// conversation as a RolloutWorker's rollout (a plain client, no recorder) and
// returns a result whose JSON is as long as a recorded trajectory's. Prints
// its CPU time on SIGTERM.
import { Worker } from "bullmq";
import OpenAI from "openai";
import { converse } from "./distributed-conversation.js";
import { reportCpuOnSigterm } from "./worker-exit.js";

const [port, baseURL, concurrency, queue, resultChars, turns = "1"] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string?,
];
const openai = new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 });
// `{"pad":"…"}`: 10 characters around the padding.
const pad = "x".repeat(Math.max(0, Number(resultChars) - 10));
const worker = new Worker(
  queue,
  async () => {
    await converse(openai, Number(turns));
    return { pad };
  },
  { connection: { host: "127.0.0.1", port: Number(port) }, concurrency: Number(concurrency) },
);
await worker.waitUntilReady();
reportCpuOnSigterm(worker);
