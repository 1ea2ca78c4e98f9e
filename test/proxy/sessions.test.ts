// The proxy's sessions and feedback, in process: who may name a session,
// per-session keys, reading an open session, ending it, and feedback that
// arrives while its call is still streaming (it waits for the record).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { type RecordingProxy, startRecordingProxy } from "trajectory-recorder/proxy";
import { TrajectoryStore } from "trajectory-recorder/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const KEY = "control-key-0123456789";
let upstream: Server;
let upstreamURL: string;
/** Streams held open until the test releases them. */
const held: Array<() => void> = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => {
      raw += d;
    });
    req.on("end", () => {
      const body = JSON.parse(raw);
      if (body.stream) return stream(res, body.model);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 1,
          model: body.model,
          choices: [
            {
              index: 0,
              finish_reason: "stop",
              message: { role: "assistant", content: "ok" },
              logprobs: null,
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamURL = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

function stream(res: ServerResponse, model: string): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: "assistant", content: "part" }));
  held.push(() => res.end(`${chunk({}, "stop")}data: [DONE]\n\n`));
}

let dir: string;
let store: TrajectoryStore;
let proxy: RecordingProxy;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "trr-proxy-sessions-"));
  store = await TrajectoryStore.open({ dir });
  proxy = await startRecordingProxy({
    upstream: { baseURL: upstreamURL },
    apiKey: KEY,
    store,
    feedback: { secret: "feedback-secret-0123456789" },
  });
});
afterAll(async () => {
  await proxy.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (url: string, body: unknown, key: string | null = KEY) =>
  fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify(body),
  });

describe("sessions through the proxy", () => {
  it("needs the control key to name a session in a header", async () => {
    const noKey = new OpenAI({
      baseURL: proxy.baseURL,
      apiKey: "not-the-key",
      maxRetries: 0,
      defaultHeaders: { "x-trajectory-session": "h-1" },
    });
    await expect(
      noKey.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 401 });
    const bad = new OpenAI({
      baseURL: proxy.baseURL,
      apiKey: KEY,
      maxRetries: 0,
      defaultHeaders: { "x-trajectory-session": "no spaces allowed" },
    });
    await expect(
      bad.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 400 });
    expect(proxy.recorder.getSession("h-1")).toBeUndefined();
  });

  it("opens a session with a key of its own, reads it while open, and ends it", async () => {
    const opened = await post(`${proxy.url}/v1/sessions`, {
      id: "own-1",
      metadata: { user: "u7" },
    });
    expect(opened.status).toBe(201);
    const s = (await opened.json()) as { id: string; trajectory_id: string; api_key: string };
    expect(s.id).toBe("own-1");
    // The session's key alone: no header, no control key.
    const agent = new OpenAI({ baseURL: proxy.baseURL, apiKey: s.api_key, maxRetries: 0 });
    const { response } = await agent.chat.completions
      .create({ model: "m", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(response.headers.get("x-trajectory-id")).toBe(s.trajectory_id);
    expect(response.headers.get("x-trajectory-call")).toBe("1");
    const read = await fetch(`${proxy.url}/v1/sessions/own-1`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const open = (await read.json()) as { status: string; calls: number; trajectory: any };
    expect(open).toMatchObject({ status: "open", calls: 1 });
    expect(open.trajectory.metadata).toEqual({ user: "u7", session_id: "own-1" });
    const ended = await post(`${proxy.url}/v1/sessions/own-1/end`, {});
    expect(ended.status).toBe(200);
    expect(((await ended.json()) as { status: string }).status).toBe("finished");
    expect(store.get(s.trajectory_id)?.status).toBe("finished");
    expect((await post(`${proxy.url}/v1/sessions/own-1/end`, {})).status).toBe(404);
    const unknown = await fetch(`${proxy.url}/v1/sessions/nope`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(unknown.status).toBe(404);
  });

  it("takes feedback sent while the call is still streaming once its record is written", async () => {
    const agent = new OpenAI({
      baseURL: proxy.baseURL,
      apiKey: KEY,
      maxRetries: 0,
      defaultHeaders: { "x-trajectory-session": "early-1" },
    });
    const { data: streamed, response } = await agent.chat.completions
      .create({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    const id = response.headers.get("x-trajectory-id") as string;
    expect(id).toMatch(/^trj_/);
    // The receipt arrived with the headers; the record is written when the answer ends.
    const feedback = post(`${proxy.url}/v1/feedback`, { trajectory_id: id, reward: 0.75 });
    await new Promise((r) => setTimeout(r, 100));
    held.shift()?.();
    for await (const _ of streamed);
    const answer = await feedback;
    expect(answer.status).toBe(201);
    expect(store.get(id)?.trajectory.reward).toBe(0.75);
    const trajectory = await fetch(`${proxy.url}/v1/trajectories/${id}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const record = (await trajectory.json()) as { feedback: unknown[]; trajectory: any };
    expect(record.feedback).toHaveLength(1);
    expect(record.trajectory.messages_and_choices.at(-1).message.content).toBe("part");
  });

  it("refuses feedback from a page of an origin not allowed, even as a simple request with no preflight", async () => {
    const agent = new OpenAI({
      baseURL: proxy.baseURL,
      apiKey: KEY,
      maxRetries: 0,
      defaultHeaders: { "x-trajectory-session": "origin-1" },
    });
    const { response } = await agent.chat.completions
      .create({ model: "toy-model", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    const id = response.headers.get("x-trajectory-id") as string;
    const signed = (await (
      await post(`${proxy.url}/v1/trajectories/${id}/feedback-url`, {})
    ).json()) as { url: string };
    const simple = await fetch(signed.url, {
      method: "POST",
      headers: { origin: "http://evil.example", "content-type": "text/plain" },
      body: JSON.stringify({ reward: 1 }),
    });
    expect(simple.status).toBe(403);
    expect(store.get(id)?.feedback).toHaveLength(0);
    // The proxy's own pages are same-origin.
    const own = await fetch(signed.url, {
      method: "POST",
      headers: { origin: proxy.url, "content-type": "application/json" },
      body: JSON.stringify({ reward: 1 }),
    });
    expect(own.status).toBe(201);
    expect(store.get(id)?.model).toBe("toy-model");
  });

  it("answers 405 for a known path with another method, and refuses other /v1 routes", async () => {
    const wrong = await fetch(`${proxy.url}/v1/feedback`, {
      method: "GET",
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toContain("POST");
    expect(wrong.headers.get("x-should-retry")).toBe("false");
    const other = await fetch(`${proxy.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "x-trajectory-session": "emb-1" },
      body: "{}",
    });
    expect(other.status).toBe(404);
    expect(proxy.recorder.getSession("emb-1")).toBeUndefined();
    expect(((await other.json()) as any).error.message).toMatch(/not served/);
  });
});
