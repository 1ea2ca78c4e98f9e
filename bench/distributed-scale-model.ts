// The simulated model of bench/distributed-scale.ts, in its own process (a
// model server is another machine): every chat completion is answered after
// LATENCY_MS. A request's model is `m-<calls>`: the model asks for a look-up
// tool until the conversation holds calls - 1 tool results, then answers.
// Prints its URL, then its CPU time on SIGTERM.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const latencyMs = Number(process.argv[2] ?? 1000);

function answer(request: string): string {
  const calls = Number(/"model":"m-(\d+)"/.exec(request)?.[1] ?? 1);
  const results = request.split('"role":"tool"').length - 1;
  const more = results < calls - 1;
  const message = more
    ? {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: `call_${results}`,
            type: "function",
            function: {
              name: "read_file",
              arguments: JSON.stringify({ path: `src/f${results}.ts` }),
            },
          },
        ],
      }
    : { role: "assistant", content: "The fix is in src/f3.ts: the loop ends one step early." };
  const prompt = Math.round(request.length / 4);
  return JSON.stringify({
    id: `c${results}`,
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, finish_reason: more ? "tool_calls" : "stop", logprobs: null, message }],
    usage: { prompt_tokens: prompt, completion_tokens: 16, total_tokens: prompt + 16 },
  });
}

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (d: Buffer) => parts.push(d));
  req.on("end", () =>
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(answer(Buffer.concat(parts).toString("utf8")));
    }, latencyMs),
  );
});
// Clients keep their sockets for the next call of a rollout: a socket the
// server closed just as a call went out on it would be a connection error.
server.keepAliveTimeout = 120_000;
const start = process.cpuUsage();
server.listen(0, "127.0.0.1", () => {
  console.log(`url http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
});
process.on("SIGTERM", () => {
  const cpu = process.cpuUsage(start);
  console.log(`cpu ${(cpu.user + cpu.system) / 1000}`);
  process.exit(0);
});
