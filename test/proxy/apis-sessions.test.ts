// Sessions and receipts work the same for the three APIs the proxy records:
// a deployed service's session gets chat, Responses and Anthropic Messages
// calls, by the session's own key (as Bearer or x-api-key) or by naming it
// with the control key; every answer carries its receipt, and the session's
// trajectory holds the calls in order.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { type RecordingProxy, startRecordingProxy } from "trajectory-recorder/proxy";
import { TrajectoryStore } from "trajectory-recorder/store";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type MessagesUpstream, startMessagesUpstream } from "../endpoint/messages-upstream.js";
import { type ResponsesServer, startResponsesServer } from "../helpers/responses-server.js";

const KEY = "control-key-0123456789";
let responses: ResponsesServer;
let messages: MessagesUpstream;
let front: Server;
let proxy: RecordingProxy;
let dir: string;
let store: TrajectoryStore;

beforeAll(async () => {
  responses = await startResponsesServer({
    answer: () => ({
      output: [
        {
          type: "message",
          id: "msg_r",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "From Responses.", annotations: [] }],
        },
      ],
    }),
  });
  messages = await startMessagesUpstream(() => ({
    content: [{ type: "text", text: "From Messages." }],
    stop_reason: "end_turn",
  }));
  // One upstream that speaks both: each path goes on to its server.
  front = createServer((req, res) => {
    const target = new URL(req.url?.endsWith("/messages") ? messages.root : responses.baseURL);
    const out = request(
      {
        hostname: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(out);
  });
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
  dir = mkdtempSync(path.join(tmpdir(), "apis-sessions-"));
  store = await TrajectoryStore.open({ dir });
  proxy = await startRecordingProxy({
    upstream: {
      baseURL: `http://127.0.0.1:${(front.address() as AddressInfo).port}/v1`,
      apiKey: "up-key-123456",
    },
    apiKey: KEY,
    store,
    logger: { warn: () => {} },
  });
});
afterAll(async () => {
  await proxy.close();
  await store.close();
  await new Promise<void>((r) => front.close(() => r()));
  await responses.close();
  await messages.close();
  rmSync(dir, { recursive: true, force: true });
});

it("records Responses and Messages calls into a session, by its own key or by name, each with its receipt", async () => {
  const opened = await fetch(`${proxy.url}/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ id: "conv-1" }),
  });
  expect(opened.status).toBe(201);
  const session = await opened.json();
  expect(session.anthropic_base_url).toBe(proxy.anthropicBaseURL);
  expect(session.base_url).toBe(`${proxy.anthropicBaseURL}/v1`);

  // The session's own key, as the Anthropic SDK sends it.
  const anthropic = new Anthropic({
    baseURL: session.anthropic_base_url,
    apiKey: session.api_key,
    maxRetries: 0,
  });
  const { data: message, response: first } = await anthropic.messages
    .create({
      model: "claude-teacher",
      max_tokens: 32,
      messages: [{ role: "user", content: "one" }],
    })
    .withResponse();
  expect(message.content).toEqual([{ type: "text", text: "From Messages." }]);
  expect(first.headers.get("x-trajectory-id")).toBe(session.trajectory_id);
  expect(first.headers.get("x-trajectory-call")).toBe("1");

  // The control key naming the session, as the openai SDK sends it.
  const openai = new OpenAI({
    baseURL: session.base_url,
    apiKey: KEY,
    defaultHeaders: { "x-trajectory-session": "conv-1" },
    maxRetries: 0,
  });
  const { data: reply, response: second } = await openai.responses
    .create({ model: "teacher", input: "two" })
    .withResponse();
  expect(reply.output_text).toBe("From Responses.");
  expect(second.headers.get("x-trajectory-id")).toBe(session.trajectory_id);
  expect(second.headers.get("x-trajectory-call")).toBe("2");

  // The control key as x-api-key, naming the session, streamed.
  const streamed = await fetch(`${session.anthropic_base_url}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": KEY,
      "x-trajectory-session": "conv-1",
    },
    body: JSON.stringify({
      model: "claude-teacher",
      max_tokens: 32,
      stream: true,
      messages: [{ role: "user", content: "three" }],
    }),
  });
  expect(streamed.status).toBe(200);
  expect(streamed.headers.get("x-trajectory-call")).toBe("3");
  expect(await streamed.text()).toContain("event: message_stop");

  // Naming a session needs the control key, however it is sent.
  const refused = await fetch(`${session.anthropic_base_url}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "not-the-key-123",
      "x-trajectory-session": "conv-1",
    },
    body: JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }] }),
  });
  expect(refused.status).toBe(401);

  const read = await fetch(`${proxy.url}/v1/sessions/conv-1`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  const got = await read.json();
  expect(got.calls).toBe(3);
  const said = JSON.stringify(got.trajectory);
  for (const text of ["one", "two", "three", "From Messages.", "From Responses."])
    expect(said).toContain(text);
  expect(said).not.toContain(KEY);
  expect(said).not.toContain(session.api_key);

  const ended = await fetch(`${proxy.url}/v1/sessions/conv-1/end`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(ended.status).toBe(200);
  const stored = await fetch(`${proxy.url}/v1/trajectories/${session.trajectory_id}`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(stored.status).toBe(200);
  expect(JSON.stringify(await stored.json())).toContain("From Responses.");
});
