// The done-when of issue #45: agents in other processes (the Python openai
// SDK, curl) record calls with x-trajectory-session through
// `trajectory-recorder proxy --store DIR`; the proxy is killed with SIGKILL
// mid-stream and restarted on the same store; feedback posted later by the
// receipts attaches to the right trajectories, nothing recorded before the
// kill is lost, the cut call is marked, a resend is idempotent and a
// conflicting one gets 409.
import { type ChildProcess, execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { start, waitForOutput } from "../cli/run.js";
import { python } from "./helpers.js";

const AGENT = fileURLToPath(new URL("./fixtures/session_agent.py", import.meta.url));
const KEY = "control-key-0123456789";

/** An OpenAI-compatible upstream: answers at once, or streams one word every 60 ms. */
let upstream: Server;
let upstreamURL: string;
beforeAll(async () => {
  upstream = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => {
      raw += d;
    });
    req.on("end", () => {
      const body = JSON.parse(raw);
      const last = body.messages.at(-1).content as string;
      const words = last === "tell a long story" ? 200 : 4;
      const text = Array.from({ length: words }, (_, i) => `w${i}`);
      const base = { id: "chatcmpl-1", created: 1, model: body.model };
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            ...base,
            object: "chat.completion",
            choices: [
              {
                index: 0,
                finish_reason: "stop",
                message: { role: "assistant", content: text.join(" ") },
                logprobs: null,
              },
            ],
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: "assistant", content: "" }));
      let i = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        if (i < text.length) {
          res.write(chunk({ content: `${i ? " " : ""}${text[i++]}` }));
          return;
        }
        clearInterval(timer);
        res.end(`${chunk({}, "stop")}data: [DONE]\n\n`);
      }, 60);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamURL = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

function startProxy(store: string): { child: ChildProcess; url: Promise<string> } {
  const child = start(
    [
      "proxy",
      "--upstream",
      upstreamURL,
      "--port",
      "0",
      "--store",
      store,
      "--allow-origin",
      "https://shop.example",
    ],
    { PROXY_CONTROL_KEY: KEY, PROXY_FEEDBACK_SECRET: "feedback-secret-0123456789" },
  );
  const url = waitForOutput(child, /Recording proxy listening on (\S+)/).then(
    (shown) => /Recording proxy listening on (\S+)/.exec(shown)?.[1] as string,
  );
  return { child, url };
}

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      file,
      args,
      { env: { PATH: process.env.PATH, ...env }, timeout: 60_000 },
      (e, out, err) => (e ? reject(new Error(`${e.message}\n${out}\n${err}`)) : resolve(out)),
    ),
  );
}

/** curl, returning the status, headers and body. */
async function curl(
  args: string[],
): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const out = await run("curl", ["-sS", "-D", "-", ...args]);
  const [head, ...rest] = out.split("\r\n\r\n");
  const lines = (head as string).split("\r\n");
  const status = Number((lines[0] as string).split(" ")[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  const text = rest.join("\r\n\r\n");
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status, headers, body };
}

const json = (url: string, body: unknown, key: string | null = KEY) => [
  "-X",
  "POST",
  url,
  "-H",
  "content-type: application/json",
  ...(key ? ["-H", `authorization: Bearer ${key}`] : []),
  "--data",
  JSON.stringify(body),
];

it("records sessions from Python and curl, survives a SIGKILL mid-stream, and takes feedback by receipt", async () => {
  const store = mkdtempSync(path.join(tmpdir(), "trr-production-"));
  let proxy = startProxy(store);
  try {
    const url = await proxy.url;
    // The Python openai SDK, its session in a default header.
    const py = JSON.parse(
      (
        await run(python(), [AGENT], {
          PROXY_BASE_URL: `${url}/v1`,
          PROXY_KEY: KEY,
          SESSION: "py-1",
        })
      )
        .trim()
        .split("\n")
        .at(-1) as string,
    );
    expect(py.first).toBe("w0 w1 w2 w3");
    expect(py.second).toBe("w0 w1 w2 w3");
    const pyId = py.receipts[0].id as string;
    expect(pyId).toMatch(/^trj_[0-9a-f]{24}$/);
    expect(py.receipts).toEqual([
      { id: pyId, call: "1" },
      { id: pyId, call: "2" },
    ]);

    // curl: one call recorded, then a long stream cut by SIGKILL.
    const first = await curl(
      json(`${url}/v1/chat/completions`, {
        model: "m",
        messages: [{ role: "user", content: "hi" }],
      }).concat(["-H", "x-trajectory-session: curl-1"]),
    );
    expect(first.status).toBe(200);
    const curlId = first.headers["x-trajectory-id"] as string;
    expect(curlId).toMatch(/^trj_/);
    expect(first.headers["x-trajectory-call"]).toBe("1");
    const streaming = curl(
      json(`${url}/v1/chat/completions`, {
        model: "m",
        stream: true,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "w0 w1 w2 w3" },
          { role: "user", content: "tell a long story" },
        ],
      }).concat(["-H", "x-trajectory-session: curl-1", "-N"]),
    ).catch((e: Error) => ({ status: -1, headers: {}, body: e.message }));
    // Let a second of the story arrive (progress is written every 250 ms), then kill.
    await new Promise((r) => setTimeout(r, 1200));
    const exited = new Promise((r) => proxy.child.once("exit", r));
    proxy.child.kill("SIGKILL");
    await streaming;
    await exited;

    // Restarted on the same store: everything before the kill is there.
    proxy = startProxy(store);
    const url2 = await proxy.url;
    const read = (id: string) =>
      curl([`${url2}/v1/trajectories/${id}`, "-H", `authorization: Bearer ${KEY}`]);
    const pyRecord = (await read(pyId)).body;
    expect(pyRecord.session).toBe("py-1");
    const pyItems = pyRecord.trajectory.messages_and_choices;
    expect(pyItems.filter((m: any) => m.finish_reason === "stop")).toHaveLength(2);
    const cut = (await read(curlId)).body;
    expect(cut.session).toBe("curl-1");
    const items = cut.trajectory.messages_and_choices;
    // The recorded call is a Choice; the cut one is a plain message, never trained on.
    expect(items[1].finish_reason).toBe("stop");
    const partial = items.at(-1);
    expect(partial.role).toBe("assistant");
    expect(partial.finish_reason).toBeUndefined();
    expect(partial.content).toMatch(/^w0 w1 w2/);
    expect(partial.content).not.toContain("w199");
    expect(cut.trajectory.logs.join("\n")).toMatch(/interrupted/);

    // Feedback by receipt: created, resent (same record), conflicting (409 names the field).
    const fb = { trajectory_id: pyId, reward: 1, comment: "solved", idempotency_key: "ticket-7" };
    const created = await curl(json(`${url2}/v1/feedback`, fb));
    expect(created.status).toBe(201);
    const again = await curl(json(`${url2}/v1/feedback`, fb));
    expect(again.status).toBe(200);
    expect(again.body.created).toBe(false);
    expect(again.body.feedback).toEqual(created.body.feedback);
    const conflict = await curl(json(`${url2}/v1/feedback`, { ...fb, reward: 0 }));
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.param).toBe("reward");
    const unknown = await curl(
      json(`${url2}/v1/feedback`, { trajectory_id: "trj_000000000000000000000000", reward: 1 }),
    );
    expect(unknown.status).toBe(404);
    const bad = await curl(json(`${url2}/v1/feedback`, { trajectory_id: pyId, reward: "high" }));
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/reward/);
    const noKey = await curl(json(`${url2}/v1/feedback`, { trajectory_id: pyId, reward: 1 }, null));
    expect(noKey.status).toBe(401);
    expect((await read(pyId)).body.trajectory.reward).toBe(1);

    // A signed URL: no key needed; the allowed origin gets CORS; a tampered one is refused.
    const signed = await curl(json(`${url2}/v1/trajectories/${curlId}/feedback-url`, {}));
    expect(signed.status).toBe(201);
    const browser = await curl(
      json(signed.body.url, { reward: 0.5 }, null).concat(["-H", "origin: https://shop.example"]),
    );
    expect(browser.status).toBe(201);
    expect(browser.headers["access-control-allow-origin"]).toBe("https://shop.example");
    const tampered = await curl(json(`${signed.body.url.slice(0, -3)}abc`, { reward: 1 }, null));
    expect(tampered.status).toBe(403);
    const widened = await curl(json(signed.body.url, { reward: 1, metrics: { x: 1 } }, null));
    expect(widened.status).toBe(403);
    expect(widened.body.error.param).toBe("metrics");
    const preflight = await curl([
      "-X",
      "OPTIONS",
      `${url2}/v1/feedback`,
      "-H",
      "origin: https://evil.example",
    ]);
    expect(preflight.status).toBe(403);
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    const curlRecord = (await read(curlId)).body;
    expect(curlRecord.trajectory.reward).toBe(0.5);
    expect(curlRecord.feedback).toHaveLength(1);
  } finally {
    proxy.child.kill("SIGKILL");
    rmSync(store, { recursive: true, force: true });
  }
}, 120_000);
