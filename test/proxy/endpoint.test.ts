// The recording endpoint behind t.baseURL, from the agent's side: what it
// passes through, what it refuses, and what it records.
import { execFile, spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { Recorder, TrainableModel, TrainingClient } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { afterEach, expect, it } from "vitest";
import { startVllmServer } from "../helpers/vllm-server.js";

const UPSTREAM_KEY = "emu-key-123456";
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

/** A node:http upstream answering with `handler`, keeping each request body. */
async function rawUpstream(
  handler: (req: IncomingMessage, res: ServerResponse, body: any) => void,
) {
  const bodies: any[] = [];
  const headers: IncomingMessage["headers"][] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = raw ? JSON.parse(raw) : undefined;
      bodies.push(body);
      headers.push(req.headers);
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => server.close(r)));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    bodies,
    headers,
    server,
  };
}

function recorderFor(baseURL: string, extra: Record<string, unknown> = {}) {
  const warnings: string[] = [];
  const recorder = new Recorder({
    upstream: { baseURL, apiKey: UPSTREAM_KEY },
    endpoint: { logger: { warn: (m: string) => warnings.push(m) }, ...extra },
  });
  closers.push(() => recorder.close());
  return { recorder, warnings };
}

const post = (
  url: string,
  key: string | undefined,
  body: string,
  headers: Record<string, string> = {},
) =>
  fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body,
  });

it("passes the upstream's answer through: status, error body, x-request-id and rate-limit headers, /v1/models; adds only the logprob and token-id fields", async () => {
  let fail = true;
  const up = await rawUpstream((req, res, body) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_models" });
      res.end(
        JSON.stringify({
          object: "list",
          data: [{ id: "m", object: "model", created: 1, owned_by: "me" }],
        }),
      );
      return;
    }
    const headers = {
      "content-type": "application/json",
      "x-request-id": "req_abc123",
      "x-ratelimit-remaining-requests": "41",
      "x-ratelimit-reset-tokens": "6s",
    };
    if (fail) {
      res.writeHead(429, headers);
      res.end(
        JSON.stringify({
          error: {
            message: `Rate limit reached for ${UPSTREAM_KEY}`,
            type: "rate_limit",
            code: "rate_limit_exceeded",
            param: null,
          },
        }),
      );
      return;
    }
    res.writeHead(200, headers);
    res.end(
      JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: body.model,
        choices: [0, 1].map((index) => ({
          index,
          message: { role: "assistant", content: `answer ${index}` },
          finish_reason: "stop",
          logprobs: null,
        })),
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      }),
    );
  });
  const { recorder, warnings } = recorderFor(up.baseURL);
  const sent = { model: "m", messages: [{ role: "user", content: "hi" }], n: 2, temperature: 0.5 };
  const t = await recorder.rollout(async (t) => {
    const limited = await post(t.baseURL, t.apiKey, JSON.stringify(sent), { "x-custom": "kept" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("x-request-id")).toBe("req_abc123");
    expect(limited.headers.get("x-ratelimit-remaining-requests")).toBe("41");
    const error = await limited.json();
    expect(error.error.code).toBe("rate_limit_exceeded");
    // Any key in an error body is the upstream's: the agent never sees it.
    expect(error.error.message).toBe("Rate limit reached for [redacted]");
    fail = false;
    const ok = await post(t.baseURL, t.apiKey, JSON.stringify(sent));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-reset-tokens")).toBe("6s");
    const json = await ok.json();
    expect(json.choices.map((c: any) => c.message.content)).toEqual(["answer 0", "answer 1"]);
    // GET /v1/models goes to the upstream with its key, unrecorded.
    const models = await fetch(`${t.baseURL}/models`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(models.headers.get("x-request-id")).toBe("req_models");
    expect((await models.json()).data[0].id).toBe("m");
  });
  // What the upstream got: the agent's body plus the fields a wrapped client adds, nothing else.
  expect(up.bodies[1]).toEqual({
    ...sent,
    logprobs: true,
    return_token_ids: true,
    return_tokens_as_token_ids: true,
  });
  expect(up.headers[1]?.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  expect(up.headers[0]?.["x-custom"]).toBe("kept");
  // n = 2: the first choice continues the conversation, the second is an additional history.
  expect(t.messages_and_choices.at(-1)).toMatchObject({ message: { content: "answer 0" } });
  expect(t.additional_histories[0]?.messages_and_choices.at(-1)).toMatchObject({
    message: { content: "answer 1" },
  });
  // The 429 is in the logs, without the key.
  expect(t.logs.some((l) => l.includes("error") && l.includes("429"))).toBe(true);
  expect(JSON.stringify(t) + warnings.join("\n")).not.toContain(UPSTREAM_KEY);
});

it("forwards SSE chunk by chunk to curl (the usage chunk and [DONE] included) and records the stream", async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const chunk = (delta: object, extra: object = {}) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null, logprobs: null }], ...extra })}\n\n`;
  const up = await rawUpstream(async (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "x-request-id": "req_sse" });
    res.write(chunk({ role: "assistant", content: "Hel" }));
    await released; // the rest only once curl has shown the first chunk
    res.write(chunk({ content: "lo" }));
    res.write(
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`,
    );
    res.write(
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })}\n\n`,
    );
    res.end("data: [DONE]\n\n");
  });
  const { recorder } = recorderFor(up.baseURL);
  let output = "";
  const t = await recorder.rollout(async (t) => {
    const curl = spawn("curl", [
      "-sN",
      "-D",
      "-",
      `${t.baseURL}/chat/completions`,
      "-H",
      `authorization: Bearer ${t.apiKey}`,
      "-H",
      "content-type: application/json",
      "-d",
      JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    ]);
    curl.stdout.on("data", (d) => {
      output += d;
      if (output.includes('"Hel"')) release();
    });
    await new Promise((r) => curl.on("close", r));
  });
  expect(output).toMatch(/x-request-id: req_sse/i);
  const events = output.split("\n").filter((l) => l.startsWith("data: "));
  expect(events).toHaveLength(5);
  expect(events[3]).toContain('"usage"');
  expect(events[4]).toBe("data: [DONE]");
  const last = t.messages_and_choices.at(-1) as any;
  expect(last.message.content).toBe("Hello");
  expect(last.finish_reason).toBe("stop");
});

it("refuses what it should, with OpenAI-style errors: no key 401, unknown key 401, finished rollout 409, body too large 413, bad JSON 400, other routes 404, never a key in a log", async () => {
  const up = await startVllmServer({ respond: () => ({ content: "ok" }) });
  closers.push(() => up.close());
  const { recorder, warnings } = recorderFor(up.baseURL, { maxBodyBytes: 2000 });
  let key = "";
  let url = "";
  const t = await recorder.rollout(async (t) => {
    key = t.apiKey;
    url = t.baseURL;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const missing = await post(url, undefined, "{}");
    expect(missing.status).toBe(401);
    expect((await missing.json()).error.code).toBe("missing_api_key");
    const unknown = await post(url, "trr-not-a-key", "{}");
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_api_key",
    });
    const big = await post(
      url,
      key,
      JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(5000) }] }),
    );
    expect(big.status).toBe(413);
    expect((await big.json()).error.message).toContain("2000 bytes");
    const bad = await post(url, key, '{"model": "m", "messages": [');
    expect(bad.status).toBe(400);
    const badError = (await bad.json()).error;
    expect(badError.code).toBe("invalid_json");
    expect(badError.message).toMatch(/JSON/);
    const array = await post(url, key, "[]");
    expect((await array.json()).error.message as string).toContain("not an array");
    const other = await fetch(`${url}/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: "{}",
    });
    expect(other.status).toBe(404);
    expect((await other.json()).error.message).toContain("POST /v1/chat/completions");
    const wrongMethod = await fetch(`${url}/chat/completions`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(wrongMethod.status).toBe(405);
    const ok = await post(
      url,
      key,
      JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(ok.status).toBe(200);
  });
  expect(t.messages_and_choices).toHaveLength(2);
  const finished = await post(url, key, JSON.stringify({ model: "m", messages: [] }));
  expect(finished.status).toBe(409);
  expect((await finished.json()).error.code).toBe("rollout_finished");
  // The openai SDKs would retry a 409 twice: told not to.
  expect(finished.headers.get("x-should-retry")).toBe("false");
  expect(warnings.filter((w) => w.includes("/v1/completions"))).toHaveLength(1);
  expect(warnings.join("\n")).not.toContain(key);
  expect(JSON.stringify(t)).not.toContain(key);
});

it("keeps rollouts apart: each key records into its own rollout only", async () => {
  const up = await startVllmServer({
    respond: (body) => ({ content: `echo ${body.messages[0].content}` }),
  });
  closers.push(() => up.close());
  const { recorder } = recorderFor(up.baseURL);
  const both = await Promise.all(
    ["a", "b"].map((name) =>
      recorder.rollout(async (t) => {
        const openai = new OpenAI({ baseURL: t.baseURL, apiKey: t.apiKey });
        await openai.chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: name }],
        });
      }),
    ),
  );
  expect(both.map((t) => (t.messages_and_choices.at(-1) as any).message.content)).toEqual([
    "echo a",
    "echo b",
  ]);
  expect(both[0]!.apiKey).not.toBe(both[1]!.apiKey);
});

it("listens on loopback only, unless allowRemote is given", () => {
  expect(
    () =>
      new Recorder({
        upstream: { baseURL: "http://127.0.0.1:1/v1" },
        endpoint: { host: "0.0.0.0" },
      }),
  ).toThrow(
    /endpoint\.host: 0\.0\.0\.0 can be reached from other machines; pass allowRemote: true/,
  );
  expect(() => new Recorder({ upstream: { baseURL: "not a url" } })).toThrow(/upstream\.baseURL/);
  expect(
    () =>
      new Recorder({
        upstream: { baseURL: "http://127.0.0.1:1/v1" },
        endpoint: { host: "0.0.0.0", allowRemote: true },
      }),
  ).not.toThrow();
});

it("answers 502 when the upstream cannot be reached (after its retries) and 504 past the deadline", async () => {
  const dead = await rawUpstream(() => {});
  const deadURL = dead.baseURL;
  await new Promise((r) => dead.server.close(r));
  const { recorder, warnings } = recorderFor(deadURL, { maxRetries: 1 });
  await recorder.rollout(async (t) => {
    const r = await post(t.baseURL, t.apiKey, JSON.stringify({ model: "m", messages: [] }));
    expect(r.status).toBe(502);
    expect((await r.json()).error).toMatchObject({ code: "upstream_unreachable" });
  });
  expect(warnings.some((w) => w.includes("could not be reached"))).toBe(true);
  const slow = await rawUpstream(() => {}); // never answers
  const { recorder: r2 } = recorderFor(slow.baseURL, { timeoutMs: 300 });
  const t = await r2.rollout(async (t) => {
    const r = await post(
      t.baseURL,
      t.apiKey,
      JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(r.status).toBe(504);
    expect((await r.json()).error.message).toContain("300 ms");
  });
  expect(t.logs.some((l) => /timed out/i.test(l))).toBe(true);
  slow.server.closeAllConnections();
});

it("records a stream the agent stopped reading as far as it got, noted in the logs", async () => {
  const up = await rawUpstream(async (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < 200 && !res.destroyed; i++) {
      res.write(
        `data: ${JSON.stringify({ id: "c9", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: `w${i} ` }, finish_reason: null }] })}\n\n`,
      );
      await new Promise((r) => setTimeout(r, 5));
    }
    res.end();
  });
  const { recorder } = recorderFor(up.baseURL);
  const t = await recorder.rollout(async (t) => {
    const openai = new OpenAI({ baseURL: t.baseURL, apiKey: t.apiKey });
    const stream = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "count" }],
      stream: true,
    });
    let n = 0;
    for await (const _ of stream) if (++n === 3) break;
    // The endpoint sees the disconnect and records what it had read.
    await new Promise((r) => setTimeout(r, 300));
  });
  const last = t.messages_and_choices.at(-1) as any;
  expect(last.role).toBe("assistant");
  expect(last.content).toMatch(/^w0 w1 w2 /);
  expect("finish_reason" in last).toBe(false); // kept as a plain message, never trained on
  expect(t.logs.some((l) => /completion c9 (aborted|incomplete)/.test(l))).toBe(true);
});

it('forwards to a TrainableModel as model.openai() does: model "" is the latest checkpoint, every Choice the policy\'s; /v1/models forwarded', async () => {
  const emu = await startEmulator({ port: 0, apiKeys: ["emu-key-123456"] });
  closers.push(() => emu.close());
  const model = await TrainableModel.register(
    new TrainingClient({ apiKey: "emu-key-123456", baseURL: emu.url }),
    {
      project: "p",
      name: "proxy-agent",
      baseModel: "toy",
    },
  );
  const recorder = new Recorder({ upstream: model, policy: ["some-other-model"] });
  closers.push(() => recorder.close());
  const t = await recorder.rollout(async (t) => {
    const openai = new OpenAI({ baseURL: t.baseURL, apiKey: t.apiKey });
    const r = await openai.chat.completions.create({
      model: "",
      messages: [{ role: "user", content: "say hi" }],
      max_tokens: 3,
    });
    expect(r.model).toContain("proxy-agent");
  });
  const choice = t.messages_and_choices.at(-1) as any;
  expect(choice.finish_reason).toBeDefined();
  expect(choice.logprobs.content.length).toBeGreaterThan(0);
  expect(JSON.stringify(t)).not.toContain("emu-key-123456");
});

it("serves the openai Node SDK in a child process, stream and n > 1", async () => {
  const emu = await startEmulator({ port: 0, apiKeys: ["emu-key-123456"] });
  closers.push(() => emu.close());
  const { recorder } = recorderFor(emu.url);
  const script = fileURLToPath(new URL("./fixtures/node-agent.mjs", import.meta.url));
  const t = await recorder.rollout(async (t) => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [script],
        { env: { ...process.env, OPENAI_BASE_URL: t.baseURL, OPENAI_API_KEY: t.apiKey } },
        (e, stdout, stderr) => (e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    expect(out.trim()).toBe("3 answers");
  });
  // The streamed call continues main; the n = 2 call's second choice is an additional history.
  expect(t.messages_and_choices.filter((m: any) => m.finish_reason)).toHaveLength(2);
  expect(t.additional_histories).toHaveLength(1);
  expect(t.additional_histories[0]?.messages_and_choices.at(-1)).toHaveProperty("logprobs.content");
});
