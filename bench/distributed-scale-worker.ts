// One rollout worker process of bench/distributed-scale.ts: each rollout is
// an agent's tool loop of 10–40 calls (the range given) against the
// simulated model, starting from a long prompt and adding a long tool result
// each turn, as a coding agent reading files does. On SIGTERM prints its CPU
// time and its event loop's delay (p50, p99, max in ms) since it was ready.
import { monitorEventLoopDelay } from "node:perf_hooks";
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import { RolloutWorker } from "trajectory-recorder/bullmq";
import { reportCpuOnSigterm } from "./worker-exit.js";

const [port, baseURL, concurrency, name, promptChars, resultChars, minCalls, maxCalls] =
  process.argv.slice(2) as [string, string, string, string, string, string, string, string];

const READ_FILE = {
  type: "function" as const,
  function: {
    name: "read_file",
    description: "Reads a file of the repository.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};
const text = (chars: number, seed: string) => {
  const line = `// ${seed}: the loop reads each entry, checks its bounds and writes it back.\n`;
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars);
};

/** How many calls a rollout makes: spread over the range by its group and index. */
function callsOf(groupId: string, index: number): number {
  let h = index * 31;
  for (const c of groupId) h = (h * 33 + c.charCodeAt(0)) >>> 0;
  const min = Number(minCalls);
  return min + (h % (Number(maxCalls) - min + 1));
}

const recorder = new Recorder();
// The SDK's default retries, as a user has them (the loopback server is not what is measured).
const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
const worker = await RolloutWorker.start({
  connection: { host: "127.0.0.1", port: Number(port) },
  name,
  recorder,
  concurrency: Number(concurrency),
  logger: { info: () => {}, warn: console.warn, error: console.error },
  rollout: async ({ trajectory, index, groupId }) => {
    const calls = callsOf(groupId, index);
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: "Fix the failing test. Read files with read_file." },
      { role: "user", content: text(Number(promptChars), `task ${groupId}`) },
    ];
    for (let call = 0; call < calls; call++) {
      const r = await openai.chat.completions.create({
        model: `m-${calls}`,
        messages,
        tools: [READ_FILE],
      });
      const message = r.choices[0]?.message;
      if (!message) break;
      messages.push(message);
      if (!message.tool_calls?.length) break;
      for (const c of message.tool_calls)
        messages.push({
          role: "tool",
          tool_call_id: c.id,
          content: text(Number(resultChars), c.id),
        });
    }
    trajectory.reward = index;
    trajectory.metrics.calls = calls;
  },
});
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
reportCpuOnSigterm(worker, () => {
  // The histogram counts from one sample to the next: the 10 ms between them are not delay.
  const ms = (ns: number) => Math.max(0, ns / 1e6 - 10).toFixed(1);
  return [`eld ${ms(delay.percentile(50))} ${ms(delay.percentile(99))} ${ms(delay.max)}`];
});
