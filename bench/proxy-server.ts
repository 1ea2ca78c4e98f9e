// The server side of bench/proxy.ts, in its own process so that its CPU is
// its own: `recording` is a Recorder's endpoint (t.baseURL) forwarding to the
// upstream; `bare` a node:http forwarder of the same bytes; `sdk` a forwarder
// that goes through the `openai` SDK as a hand-written proxy would (parse the
// body, `create`, write the parsed answer back), recording nothing; `floor`
// the least any endpoint recording from the bytes must do beside forwarding
// them (parse the agent's body, add the training fields, send it through a
// keep-alive agent, buffer the answer, scan its logprobs and parse the rest,
// write the upstream's bytes back), with no rollouts, trajectories or SDK.
// Commands come on stdin, one per line; answers go to stdout as JSON lines.
import { Agent, createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import OpenAI from "openai";
import { Recorder, type Trajectory } from "trajectory-recorder";
// Not public: the scan the endpoint reads an answer's logprobs with.
import { scanAnswer } from "../src/logprobs/index.js";

/** What the endpoint adds to a chat call for training. */
const TRAINING_FIELDS = {
  logprobs: true,
  return_token_ids: true,
  return_tokens_as_token_ids: true,
};

const [mode, upstream] = process.argv.slice(2) as ["recording" | "bare" | "sdk" | "floor", string];
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
/** Listens on loopback and tells the parent where. */
async function serve(server: Server): Promise<void> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  say({ ready: true, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
}
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
  await serve(server);
} else if (mode === "floor") {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  // What was read, kept a while as a recorder keeps its trajectories.
  const kept: unknown[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      const sent = JSON.stringify({ ...body, ...TRAINING_FIELDS });
      const out = request(
        {
          host: target.hostname,
          port: target.port,
          method: "POST",
          path: `${target.pathname}/chat/completions`,
          agent,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(sent),
            authorization: "Bearer upstream-key",
          },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (d: Buffer) => parts.push(d));
          answer.on("end", () => {
            const bytes = Buffer.concat(parts);
            const text = bytes.toString("utf8");
            const scanned = scanAnswer(text, true);
            kept.push({ body, answer: JSON.parse(scanned ? scanned.text : text), scanned });
            if (kept.length > 400) kept.length = 0;
            res.writeHead(answer.statusCode ?? 502, {
              "content-type": "application/json",
              "content-length": bytes.length,
            });
            res.end(bytes);
          });
        },
      );
      out.end(sent);
    });
  });
  await serve(server);
} else if (mode === "sdk") {
  const client = new OpenAI({ baseURL: upstream, apiKey: "upstream-key", maxRetries: 0 });
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", async () => {
      try {
        const { data, response } = await client.chat.completions
          .create(JSON.parse(body))
          .withResponse();
        res.writeHead(response.status, { "content-type": "application/json" });
        res.end(JSON.stringify(data));
      } catch (error) {
        res.writeHead((error as { status?: number }).status ?? 502);
        res.end(String(error));
      }
    });
  });
  await serve(server);
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
if (mode !== "recording")
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line.trim() === "cpu") say({ cpu: process.cpuUsage() });
  });
