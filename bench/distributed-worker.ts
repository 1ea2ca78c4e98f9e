// One rollout worker process of bench/distributed.ts: each rollout is the
// conversation of bench/distributed-conversation.ts (1 or `turns` calls)
// against the simulated model; with a directory, trajectories go to a
// DirectoryPayloadStore there instead of Redis. Prints its CPU time on SIGTERM.
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import { DirectoryPayloadStore, RolloutWorker } from "trajectory-recorder/bullmq";
import { converse } from "./distributed-conversation.js";
import { reportCpuOnSigterm } from "./worker-exit.js";

const [port, baseURL, concurrency, name, turns = "1", payloadDir] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string?,
  string?,
];
const recorder = new Recorder();
const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 }));
const worker = await RolloutWorker.start({
  connection: { host: "127.0.0.1", port: Number(port) },
  name,
  recorder,
  concurrency: Number(concurrency),
  logger: { info: () => {}, warn: console.warn, error: console.error },
  ...(payloadDir ? { payloads: new DirectoryPayloadStore({ dir: payloadDir }) } : {}),
  rollout: async ({ trajectory, index }) => {
    await converse(openai, Number(turns));
    trajectory.reward = index;
  },
});
reportCpuOnSigterm(worker);
