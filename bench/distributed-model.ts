// The simulated model of bench/distributed.ts, in its own process as a real
// model server would be on its own machine: each chat completion is answered
// after LATENCY_MS. Prints its URL, then its CPU time on SIGTERM.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const latencyMs = Number(process.argv[2] ?? 20);
const body = JSON.stringify({
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
});
// With tools (the multi-turn shape of bench/distributed-conversation.ts):
// a look-up call while fewer than 3 tool results were sent, then the answer.
const TOOL_CALLS = 3;
function answer(request: string): string {
  if (!request.includes('"tools"')) return body;
  const results = request.split('"role":"tool"').length - 1;
  const message =
    results < TOOL_CALLS
      ? {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: `call_${results}`,
              type: "function",
              function: { name: "lookup", arguments: JSON.stringify({ key: "abc"[results] }) },
            },
          ],
        }
      : { role: "assistant", content: "a is 42, b is 42 and c is 42." };
  const finish_reason = results < TOOL_CALLS ? "tool_calls" : "stop";
  return JSON.stringify({
    id: `c${results}`,
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, finish_reason, logprobs: null, message }],
    usage: {
      prompt_tokens: 40 + 20 * results,
      completion_tokens: 12,
      total_tokens: 52 + 20 * results,
    },
  });
}
const server = createServer((req, res) => {
  let request = "";
  req.setEncoding("utf8");
  req.on("data", (d: string) => {
    request += d;
  });
  req.on("end", () =>
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(answer(request));
    }, latencyMs),
  );
});
const start = process.cpuUsage();
server.listen(0, "127.0.0.1", () => {
  console.log(`url http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
});
process.on("SIGTERM", () => {
  const cpu = process.cpuUsage(start);
  console.log(`cpu ${(cpu.user + cpu.system) / 1000}`);
  process.exit(0);
});
