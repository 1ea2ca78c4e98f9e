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
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () =>
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
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
