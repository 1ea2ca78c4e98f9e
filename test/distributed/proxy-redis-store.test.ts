// `trajectory-recorder proxy --store redis://`: two proxy processes share one
// Redis store. A session recorded on one takes its feedback on the other; the
// first is killed with SIGKILL mid-stream and started again on the same
// Redis: nothing recorded before the kill is lost and the cut call is kept
// as far as it got, marked interrupted.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { start, waitForOutput } from "../cli/run.js";
import { type RedisServer, startRedis } from "./redis-server.js";

const KEY = "control-key-0123456789";
let redis: RedisServer;
let raw: Redis;
let upstream: Server;
let upstreamURL: string;

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.connection);
  upstream = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const { model, stream } = JSON.parse(body);
      const base = { id: "c1", created: 1, model };
      if (!stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            ...base,
            object: "chat.completion",
            choices: [
              {
                index: 0,
                finish_reason: "stop",
                message: { role: "assistant", content: "short answer" },
                logprobs: null,
              },
            ],
          }),
        );
        return;
      }
      // A stream that never ends by itself: the proxy is killed in it.
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        const delta = { content: `w${i++} ` };
        res.write(
          `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
        );
      }, 30);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamURL = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  raw.disconnect();
  await redis.close();
  upstream.closeAllConnections();
  await new Promise<void>((r) => upstream.close(() => r()));
});

function startProxy() {
  const child = start(
    [
      "proxy",
      "--upstream",
      upstreamURL,
      "--port",
      "0",
      "--store",
      `redis://127.0.0.1:${redis.port}/0`,
      "--store-prefix",
      "cli",
    ],
    { PROXY_CONTROL_KEY: KEY },
  );
  const shown = waitForOutput(child, /Recording proxy listening on (\S+)[\s\S]*store: +(.*)\n/);
  return {
    child,
    url: shown.then((out) => /Recording proxy listening on (\S+)/.exec(out)?.[1] as string),
    store: shown.then((out) => /store: +(.*)\n/.exec(out)?.[1] as string),
  };
}

const call = (base: string, body: object, session: string) =>
  fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      "x-trajectory-session": session,
    },
    body: JSON.stringify({ model: "m", ...body }),
  });
const post = (to: string, body: unknown) =>
  fetch(to, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
    body: JSON.stringify(body),
  });
const read = (base: string, id: string) =>
  fetch(`${base}/v1/trajectories/${id}`, { headers: { authorization: `Bearer ${KEY}` } }).then(
    (r) => r.json() as Promise<any>,
  );

it("shares one Redis store between proxy processes and keeps everything across a SIGKILL", async () => {
  const one = startProxy();
  const two = startProxy();
  const procs = [one.child, two.child];
  try {
    const [url1, url2] = await Promise.all([one.url, two.url]);
    expect(await one.store).toBe(`redis 127.0.0.1:${redis.port} (prefix cli)`);
    const first = await call(url1, { messages: [{ role: "user", content: "hi" }] }, "s-cli");
    expect(first.status).toBe(200);
    const id = first.headers.get("x-trajectory-id") as string;
    await first.json();
    // Feedback by receipt on the other proxy process.
    const fb = await post(`${url2}/v1/feedback`, {
      trajectory_id: id,
      reward: 1,
      idempotency_key: "k",
    });
    expect(fb.status).toBe(201);
    expect((await read(url2, id)).trajectory.messages_and_choices).toHaveLength(2);
    // A long stream on the first proxy, killed once some words arrived (and were written as progress).
    const stream = await call(
      url1,
      {
        stream: true,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "short answer" },
          { role: "user", content: "tell a long story" },
        ],
      },
      "s-cli",
    );
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    let got = "";
    while (!got.includes("w12")) got += new TextDecoder().decode((await reader.read()).value);
    await new Promise((r) => setTimeout(r, 600));
    one.child.kill("SIGKILL");
    await new Promise((r) => one.child.once("exit", r));
    reader.cancel().catch(() => {});
    // Its lease would run out in 30 s; the test lets it lapse now. The other proxy's is renewed.
    for (const k of await raw.keys("cli:owner:*")) await raw.del(k);
    const again = startProxy();
    procs.push(again.child);
    const url3 = await again.url;
    const t = await read(url3, id);
    expect(t).toMatchObject({ interrupted: true, calls: 2, reward: 1, session: "s-cli" });
    const items = t.trajectory.messages_and_choices as { role?: string; content?: string }[];
    expect(items).toHaveLength(4);
    expect(items[2]).toEqual({ role: "user", content: "tell a long story" });
    expect(items[3]?.content).toMatch(/^w0 w1 w2 /);
    expect(t.trajectory.logs.at(-1)).toMatch(/call 2 was interrupted/);
    // The resend on the restarted proxy is idempotent; other content is 409 naming the field.
    const resend = await post(`${url3}/v1/feedback`, {
      trajectory_id: id,
      reward: 1,
      idempotency_key: "k",
    });
    expect(resend.status).toBe(200);
    const conflict = await post(`${url3}/v1/feedback`, {
      trajectory_id: id,
      reward: 0,
      idempotency_key: "k",
    });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as any).error.param).toBe("reward");
  } finally {
    for (const p of procs) if (p.exitCode === null) p.kill("SIGKILL");
  }
}, 240_000);
