// Anthropic's POST /v1/messages through the recording endpoint: an agent on
// @anthropic-ai/sdk in its own process, given only ANTHROPIC_BASE_URL =
// t.anthropicBaseURL and ANTHROPIC_API_KEY = t.apiKey, is recorded; the key
// arrives as x-api-key, anthropic-version and anthropic-beta go upstream as
// sent, the upstream gets its own key as x-api-key; what cannot be recorded
// is refused before it is sent.
import { execFile } from "node:child_process";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";
import { Recorder } from "trajectory-recorder";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type MessagesUpstream, startMessagesUpstream } from "./messages-upstream.js";

const UPSTREAM_KEY = "upstream-key-123456";
const AGENT = fileURLToPath(new URL("./fixtures/anthropic-agent.mjs", import.meta.url));

let upstream: MessagesUpstream;
beforeAll(async () => {
  upstream = await startMessagesUpstream();
});
afterAll(() => upstream.close());

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

function recorderFor(baseURL = upstream.baseURL) {
  const recorder = new Recorder({
    upstream: { baseURL, apiKey: UPSTREAM_KEY },
    endpoint: { logger: { warn: () => {} } },
  });
  closers.push(() => recorder.close());
  return recorder;
}

/** Runs the Node agent as a subprocess, given the rollout's endpoint in its environment. */
function runAgent(env: Record<string, string>): Promise<{ answer: string | null; id: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [AGENT],
      { env: { PATH: process.env.PATH, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`anthropic-agent.mjs failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"));
      },
    );
  });
}

/** A POST sent with its path exactly as written (fetch would normalise dot segments). */
function rawPost(root: string, path: string, headers: Record<string, string>, body: string) {
  const { hostname, port } = new URL(root);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ hostname, port, path, method: "POST", headers }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const ask = {
  model: "claude-teacher",
  max_tokens: 64,
  messages: [{ role: "user", content: "What is 2+3?" }],
};

describe("POST /v1/messages through t.anthropicBaseURL", () => {
  for (const stream of [false, true])
    it(`records an @anthropic-ai/sdk tool loop in a child process${stream ? ", streamed" : ""}`, async () => {
      const recorder = recorderFor();
      const sent = upstream.requests.length;
      let out: { answer: string | null; id: string } | undefined;
      const t = await recorder.rollout(async (t) => {
        expect(t.anthropicBaseURL).toBe(t.baseURL.replace(/\/v1$/, ""));
        out = await runAgent({
          ANTHROPIC_BASE_URL: t.anthropicBaseURL,
          ANTHROPIC_API_KEY: t.apiKey,
          STREAM: stream ? "1" : "0",
        });
      });
      // The agent got the upstream's own answers.
      expect(out).toEqual({ answer: "It is 5.", id: `msg_${sent + 2}` });
      const history = t.messages_and_choices as unknown as Array<Record<string, unknown>>;
      expect(history[0]).toEqual({ role: "system", content: "Use the tools." });
      expect(history[1]).toMatchObject({ role: "user" });
      expect(history[2]).toMatchObject({
        role: "assistant",
        tool_calls: [
          {
            id: "toolu_1",
            type: "function",
            function: { name: "add", arguments: '{"a":2,"b":3}' },
          },
        ],
      });
      expect(history[3]).toMatchObject({ role: "tool", tool_call_id: "toolu_1", content: "5" });
      expect(history.at(-1)).toEqual({ role: "assistant", content: "It is 5." });
      expect(t.additional_histories).toHaveLength(0);
      expect(t.tools?.[0]).toMatchObject({ type: "function", function: { name: "add" } });
      // Upstream: its own key as x-api-key, the SDK's path, nothing of the rollout's key.
      for (const r of upstream.requests.slice(sent)) {
        expect(r.path).toBe("/v1/messages");
        expect(r.headers["x-api-key"]).toBe(UPSTREAM_KEY);
        expect(r.headers.authorization).toBeUndefined();
        expect(r.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(JSON.stringify(r.headers)).not.toContain("trr-");
      }
    });

  it("passes headers both ways: anthropic-version and anthropic-beta up, request-id and the receipt back", async () => {
    const recorder = recorderFor();
    const sent = upstream.requests.length;
    const t = await recorder.rollout(async (t) => {
      const got = await fetch(`${t.anthropicBaseURL}/v1/messages`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": t.apiKey,
          "anthropic-version": "2023-06-01",
          "anthropic-beta": "interleaved-thinking-2025-05-14",
        },
        body: JSON.stringify(ask),
      });
      expect(got.status).toBe(200);
      expect(got.headers.get("request-id")).toBe(`req_${sent + 1}`);
      expect(got.headers.get("x-trajectory-id")).toBe(t.id);
      expect(got.headers.get("x-trajectory-call")).toBe("1");
      const body = await got.json();
      expect(body).toMatchObject({
        id: `msg_${sent + 1}`,
        type: "message",
        stop_reason: "tool_use",
      });
    });
    const r = upstream.requests[sent];
    expect(r?.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");
    expect(r?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(r?.headers["x-api-key"]).toBe(UPSTREAM_KEY);
    expect(r?.body).toEqual(ask);
    expect(t.messages_and_choices.at(-1)).toMatchObject({
      role: "assistant",
      content: "Let me add them.",
      tool_calls: [{ id: "toolu_1" }],
    });
  });

  it("refuses a body it cannot record (400 naming the field), a bad key and path tricks, sending nothing", async () => {
    const recorder = recorderFor();
    const sent = upstream.requests.length;
    let root = "";
    let key = "";
    await recorder.rollout(async (t) => {
      root = t.anthropicBaseURL;
      key = t.apiKey;
      const headers = {
        "content-type": "application/json",
        "x-api-key": t.apiKey,
        "anthropic-version": "2023-06-01",
      };
      for (const [body, param] of [
        [{ model: "m", max_tokens: 8 }, "messages"],
        [{ ...ask, messages: [{ role: "user" }] }, "messages.0.content"],
        [{ ...ask, messages: [{ role: "user", content: [{ text: "hi" }] }] }, "messages.0.content"],
        [{ ...ask, system: 5 }, "system"],
        [{ ...ask, stream: "yes" }, "stream"],
      ] as const) {
        const got = await rawPost(root, "/v1/messages", headers, JSON.stringify(body));
        expect(got.status).toBe(400);
        // Shaped as Anthropic's errors are, with OpenAI's fields too.
        const parsed = JSON.parse(got.body);
        expect(parsed.type).toBe("error");
        const error = parsed.error;
        expect(error.type).toBe("invalid_request_error");
        expect(error.param).toBe(param);
        expect(error.message).toContain(param);
      }
      // The Anthropic SDK reads the refusal as it reads the API's own errors.
      const guessing = new Anthropic({ baseURL: root, apiKey: "trr-guess", maxRetries: 0 });
      await expect(guessing.messages.create(ask as never)).rejects.toMatchObject({
        status: 401,
        error: { type: "error", error: { type: "invalid_request_error" } },
      });
      const body = JSON.stringify(ask);
      const keyless = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
      expect((await rawPost(root, "/v1/messages", keyless, body)).status).toBe(401);
      expect(
        (await rawPost(root, "/v1/messages", { ...keyless, "x-api-key": "trr-guess" }, body))
          .status,
      ).toBe(401);
      for (const path of [
        "/v1/messages/",
        "/v1//messages",
        "/v1/x/../messages",
        "/v1/%2e%2e/v1/messages",
        "/messages",
        "/v1/messages/count_tokens",
        "/v1/complete",
      ])
        expect((await rawPost(root, path, headers, body)).status).toBe(404);
    });
    const after = await rawPost(
      root,
      "/v1/messages",
      { "content-type": "application/json", "x-api-key": key },
      JSON.stringify(ask),
    );
    expect(after.status).toBe(409);
    expect(upstream.requests.length).toBe(sent);
  });

  it("hands the agent the upstream's error as it came, with the upstream's key taken out", async () => {
    const failing = await startMessagesUpstream(() => {
      throw new Error("unused");
    });
    await failing.close();
    // Nothing listens there now: the endpoint says the upstream could not be reached.
    const recorder = new Recorder({
      upstream: { baseURL: failing.baseURL, apiKey: UPSTREAM_KEY },
      endpoint: { logger: { warn: () => {} }, maxRetries: 0 },
    });
    closers.push(() => recorder.close());
    const t = await recorder.rollout(async (t) => {
      const got = await fetch(`${t.anthropicBaseURL}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": t.apiKey },
        body: JSON.stringify(ask),
      });
      expect(got.status).toBe(502);
      const text = await got.text();
      expect(text).toContain("upstream_unreachable");
      expect(text).not.toContain(UPSTREAM_KEY);
    });
    expect(t.logs.join("\n")).toMatch(/fail|error|reach/i);
  });

  it("holds message_stop until the call is recorded, for an agent that stops reading there", async () => {
    // The upstream sends message_stop, then keeps the connection a while before ending it.
    const up = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const send = (event: Record<string, unknown>) =>
          res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
        send({
          type: "message_start",
          message: {
            id: "msg_h",
            type: "message",
            role: "assistant",
            model: "m",
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 3, output_tokens: 1 },
          },
        });
        send({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
        send({
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: "Held." },
        });
        send({ type: "content_block_stop", index: 0 });
        send({
          type: "message_delta",
          delta: { stop_reason: "end_turn" },
          usage: { output_tokens: 2 },
        });
        send({ type: "message_stop" });
        setTimeout(() => res.end(), 300);
      });
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise((r) => up.close(r)));
    const recorder = recorderFor(`http://127.0.0.1:${(up.address() as AddressInfo).port}/v1`);
    const t = await recorder.rollout(async (t) => {
      const client = new Anthropic({
        baseURL: t.anthropicBaseURL,
        apiKey: t.apiKey,
        maxRetries: 0,
      });
      const stream = await client.messages.create({
        ...ask,
        stream: true,
      } as never as Anthropic.MessageCreateParamsStreaming);
      for await (const event of stream) if (event.type === "message_stop") break;
    });
    expect(t.messages_and_choices).toEqual([
      { role: "user", content: "What is 2+3?" },
      { role: "assistant", content: "Held." },
    ]);
  });
});
