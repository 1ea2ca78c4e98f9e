// The server side of bench/proxy.ts, in its own process so that its CPU is
// its own: `recording` is a Recorder's endpoint (t.baseURL) forwarding to the
// upstream; `bare` a node:http forwarder of the same bytes. Commands come on
// stdin, one per line; answers go to stdout as JSON lines.
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import OpenAI from "openai";
import { Recorder, type Trajectory } from "trajectory-recorder";

const [mode, upstream] = process.argv.slice(2) as ["recording" | "bare", string];
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

if (mode === "bare") {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const out = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  say({ ready: true, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
} else {
  const recorder = new Recorder({ upstream: { baseURL: upstream, apiKey: "upstream-key" } });
  say({ ready: true, baseURL: await recorder.startEndpoint() });
  let open: Array<{ end: () => void; done: Promise<Trajectory> }> = [];
  const commands: Record<string, (arg: number) => Promise<unknown> | unknown> = {
    heap: () => ({ heap: heap() }),
    async open(n) {
      const keys: string[] = [];
      for (let i = 0; i < n; i++) {
        let end!: () => void;
        const ended = new Promise<void>((r) => (end = r));
        let started!: () => void;
        const ready = new Promise<void>((r) => (started = r));
        const done = recorder.rollout((t) => {
          keys.push(t.apiKey);
          started();
          return ended;
        });
        await ready;
        open.push({ end, done });
      }
      return { keys };
    },
    async finish() {
      for (const r of open) r.end();
      const ts = await Promise.all(open.map((r) => r.done));
      open = [];
      const choices = ts.flatMap((t) => t.messages_and_choices.filter((m) => "finish_reason" in m));
      const tokens = choices.reduce(
        (a, c) => a + ((c as { token_ids?: number[] }).token_ids?.length ?? 0),
        0,
      );
      return {
        trajectories: ts.length,
        choices: choices.length,
        tokens,
        logs: ts.filter((t) => t.logs.length).length,
      };
    },
    // The same calls from a wrapped client in this process: the in-process figure.
    async inproc(n) {
      const local = new Recorder();
      const openai = local.wrap(
        new OpenAI({ baseURL: upstream, apiKey: "upstream-key", maxRetries: 0 }),
      );
      const before = heap();
      let answered = 0;
      let release!: () => void;
      const all = new Promise<void>((r) => (release = r));
      let measured = 0;
      const ts = await Promise.all(
        Array.from({ length: n }, () =>
          local.rollout(async () => {
            await openai.chat.completions.create({
              model: "m",
              messages: [{ role: "user", content: "hi" }],
              max_tokens: 64,
            });
            if (++answered === n) {
              measured = heap() - before;
              release();
            }
            await all;
          }),
        ),
      );
      const tokens = ts.reduce(
        (a, t) =>
          a + ((t.messages_and_choices[1] as { token_ids?: number[] })?.token_ids?.length ?? 0),
        0,
      );
      return { bytesPerToken: measured / tokens, tokens };
    },
  };
  createInterface({ input: process.stdin }).on("line", async (line) => {
    const [name, arg] = line.trim().split(" ");
    if (name === "cpu") return say({ cpu: process.cpuUsage() });
    say(await commands[name as string]?.(Number(arg)));
  });
}
if (mode === "bare")
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line.trim() === "cpu") say({ cpu: process.cpuUsage() });
  });
