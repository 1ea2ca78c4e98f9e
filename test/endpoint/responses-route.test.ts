// POST /v1/responses through the recording endpoint (t.baseURL), from the
// agent's side with the openai Node SDK: the upstream's answer passes
// through (streamed events as they arrive), the call is recorded as plain
// assistant messages, previous_response_id is resolved from what was
// recorded, and what cannot be recorded is refused before it is sent.
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  functionCall,
  message,
  type ResponsesServer,
  startResponsesServer,
  tools,
} from "../helpers/responses-server.js";

type Item = Record<string, unknown>;
const UPSTREAM_KEY = "upstream-key-123456";

const expected = [
  { role: "system", content: "Use the tools." },
  { role: "user", content: "What is 2+3?" },
  {
    role: "assistant",
    content: "",
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } },
    ],
  },
  { role: "tool", tool_call_id: "call_1", content: "5" },
  { role: "assistant", content: "It is 5." },
];

let server: ResponsesServer;
beforeAll(async () => {
  server = await startResponsesServer({
    answer: (body) => {
      const input = Array.isArray(body.input) ? (body.input as Item[]) : [];
      const answered = input.some((i) => i.type === "function_call_output");
      return { output: answered ? [message("It is 5.")] : [functionCall] };
    },
  });
});
afterAll(() => server.close());

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

/** A POST sent with its path exactly as written (fetch would normalise dot segments). */
function rawPost(url: string, path: string, headers: Record<string, string>, body: string) {
  const { hostname, port } = new URL(url);
  return new Promise<number>((resolve, reject) => {
    const req = request({ hostname, port, path, method: "POST", headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function recorderFor(baseURL: string) {
  const warnings: string[] = [];
  const recorder = new Recorder({
    upstream: { baseURL, apiKey: UPSTREAM_KEY },
    endpoint: { logger: { warn: (m: string) => warnings.push(m) } },
  });
  closers.push(() => recorder.close());
  return { recorder, warnings };
}

/** One call as the agent makes it, streamed or not; the SDK's final response. */
async function create(openai: OpenAI, body: Item, stream: boolean) {
  const params = body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  if (!stream) return openai.responses.create(params);
  const events: string[] = [];
  let final: OpenAI.Responses.Response | undefined;
  for await (const event of await openai.responses.create({ ...params, stream: true })) {
    events.push(event.type);
    if (event.type === "response.completed") final = event.response;
  }
  if (!final) throw new Error(`no response.completed among ${events.join(", ")}`);
  return final;
}

async function agentLoop(openai: OpenAI, stream: boolean, chained: boolean) {
  const input: Item[] = [{ role: "user", content: "What is 2+3?" }];
  const base = { model: "teacher-large", instructions: "Use the tools.", tools };
  const first = await create(openai, { ...base, input }, stream);
  const outputs = first.output
    .filter((i) => i.type === "function_call")
    .map((i) => ({
      type: "function_call_output",
      call_id: (i as unknown as Item).call_id,
      output: "5",
    }));
  const next = chained
    ? { ...base, previous_response_id: first.id, input: outputs }
    : { ...base, input: [...input, ...first.output, ...outputs] };
  return create(openai, next, stream);
}

describe("POST /v1/responses through t.baseURL", () => {
  for (const stream of [false, true])
    for (const chained of [false, true])
      it(`records the openai SDK's responses.create tool loop${stream ? ", streamed," : ""} ${chained ? "chained by previous_response_id" : "sending the items again"}`, async () => {
        const { recorder } = recorderFor(server.baseURL);
        const sent = server.requests.length;
        let final: OpenAI.Responses.Response | undefined;
        const t = await recorder.rollout(async (t) => {
          const openai = new OpenAI({ baseURL: t.baseURL, apiKey: t.apiKey, maxRetries: 0 });
          final = await agentLoop(openai, stream, chained);
        });
        // The agent got the upstream's own response.
        expect(final?.id).toBe(`resp_${sent + 2}`);
        expect(final?.output).toEqual([message("It is 5.")]);
        expect(t.messages_and_choices).toEqual(expected);
        expect(t.tools).toEqual([
          {
            type: "function",
            function: {
              name: "add",
              description: "Adds two numbers.",
              parameters: tools[0]?.parameters,
              strict: true,
            },
          },
        ]);
        expect(t.additional_histories).toHaveLength(0);
        // Forwarded as the agent wrote it: nothing chat-specific added.
        for (const body of server.requests.slice(sent)) {
          expect(body).not.toHaveProperty("logprobs");
          expect(body).not.toHaveProperty("return_token_ids");
        }
        expect(server.requests[sent + 1]?.previous_response_id).toBe(
          chained ? `resp_${sent + 1}` : undefined,
        );
      });

  it("answers with the upstream's headers plus the receipt, and sends the upstream's key, never the rollout's", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const up = createServer((req, res) => {
      seen.push({ ...req.headers });
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_r1" });
        res.end(JSON.stringify({ id: "resp_x", object: "response", output: [message("hi")] }));
      });
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise((r) => up.close(r)));
    const { recorder } = recorderFor(`http://127.0.0.1:${(up.address() as AddressInfo).port}/v1`);
    let key = "";
    const t = await recorder.rollout(async (t) => {
      key = t.apiKey;
      const got = await fetch(`${t.baseURL}/responses`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${t.apiKey}`,
          "openai-beta": "responses=v1",
        },
        body: JSON.stringify({ model: "m", input: "hello" }),
      });
      expect(got.status).toBe(200);
      expect(got.headers.get("x-request-id")).toBe("req_r1");
      expect(got.headers.get("x-trajectory-id")).toBe(t.id);
      expect(got.headers.get("x-trajectory-call")).toBe("1");
      expect((await got.json()).id).toBe("resp_x");
    });
    expect(seen[0]?.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(seen[0]?.["openai-beta"]).toBe("responses=v1");
    expect(JSON.stringify(seen)).not.toContain(key);
    expect(t.messages_and_choices).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: "hi" },
    ]);
  });

  it("refuses a body it cannot record, naming the field, and sends nothing", async () => {
    const { recorder } = recorderFor(server.baseURL);
    const sent = server.requests.length;
    await recorder.rollout(async (t) => {
      const post = (body: unknown) =>
        fetch(`${t.baseURL}/responses`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${t.apiKey}` },
          body: JSON.stringify(body),
        });
      for (const [body, param] of [
        [{ model: "m", input: 42 }, "input"],
        [{ model: "m", input: ["hi"] }, "input"],
        [{ model: "m", input: "hi", stream: "yes" }, "stream"],
        [{ model: "m", input: "hi", tools: [{ name: "f" }] }, "tools.0.type"],
        [{ model: "m", input: "hi", previous_response_id: 7 }, "previous_response_id"],
      ] as const) {
        const got = await post(body);
        expect(got.status).toBe(400);
        const error = (await got.json()).error;
        expect(error.param).toBe(param);
        expect(error.message).toContain(param);
      }
    });
    expect(server.requests.length).toBe(sent);
  });

  it("checks the key as for chat completions, and matches the path exactly", async () => {
    const { recorder } = recorderFor(server.baseURL);
    const sent = server.requests.length;
    let base = "";
    let key = "";
    await recorder.rollout(async (t) => {
      base = t.baseURL;
      key = t.apiKey;
      const body = JSON.stringify({ model: "m", input: "hi" });
      const post = (path: string, headers: Record<string, string>) =>
        fetch(`${t.baseURL}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body,
        });
      expect((await post("/responses", {})).status).toBe(401);
      expect((await post("/responses", { authorization: "Bearer trr-nope" })).status).toBe(401);
      for (const path of [
        "/v1/responses/",
        "/v1//responses",
        "/v1/x/../responses",
        "/v1/%2e%2e/v1/responses",
        "/v1/responses%2F..%2Fchat%2Fcompletions",
      ])
        expect(
          await rawPost(
            t.baseURL,
            path,
            { "content-type": "application/json", authorization: `Bearer ${t.apiKey}` },
            body,
          ),
        ).toBe(404);
      // Routes of the Responses API that would reach the model unrecorded are refused.
      const other = await post("/responses/resp_1/cancel", { authorization: `Bearer ${t.apiKey}` });
      expect(other.status).toBe(404);
      // The key as an Anthropic SDK sends it is the same key.
      expect((await post("/responses", { "x-api-key": t.apiKey })).status).toBe(200);
    });
    const after = await fetch(`${base}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "m", input: "hi" }),
    });
    expect(after.status).toBe(409);
    expect(server.requests.length).toBe(sent + 1);
  });

  it("holds a stream's terminal event until the call is recorded, for an agent that stops there", async () => {
    // The upstream sends its last event, then keeps the connection a while
    // before ending it: the call is recorded only once the stream ends.
    const done = {
      id: "resp_h",
      object: "response",
      status: "completed",
      model: "m",
      output: [message("Held.")],
    };
    const up = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const send = (event: Item) =>
          res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
        send({
          type: "response.created",
          response: { ...done, status: "in_progress", output: [] },
        });
        send({ type: "response.output_item.done", output_index: 0, item: message("Held.") });
        send({ type: "response.completed", response: done });
        setTimeout(() => res.end(), 300);
      });
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise((r) => up.close(r)));
    const { recorder } = recorderFor(`http://127.0.0.1:${(up.address() as AddressInfo).port}/v1`);
    const t = await recorder.rollout(async (t) => {
      const openai = new OpenAI({ baseURL: t.baseURL, apiKey: t.apiKey, maxRetries: 0 });
      const stream = await openai.responses.create({ model: "m", input: "hi", stream: true });
      // Returns on the terminal event, without reading the stream's end.
      for await (const event of stream) if (event.type === "response.completed") break;
    });
    expect(t.messages_and_choices).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "Held." },
    ]);
    expect(t.logs.join("\n")).not.toMatch(/not finished|had not finished|in flight/i);
  });

  it("records the openai SDK's calls on the emulator, created and streamed, as the agent got them", async () => {
    const emu = await startEmulator({ port: 0, apiKeys: ["emu-key-123456"] });
    closers.push(() => emu.close());
    const recorder = new Recorder({
      upstream: { baseURL: emu.url, apiKey: "emu-key-123456" },
      endpoint: { logger: { warn: () => {} } },
    });
    closers.push(() => recorder.close());
    const texts: string[] = [];
    const t = await recorder.rollout(async (t) => {
      const openai = new OpenAI({ baseURL: t.baseURL, apiKey: t.apiKey, maxRetries: 0 });
      const first = await openai.responses.create({
        model: "teacher-large",
        input: "Hello",
        max_output_tokens: 16,
        temperature: 0,
      });
      texts.push(first.output_text);
      const stream = await openai.responses.create({
        model: "teacher-large",
        previous_response_id: first.id,
        input: "Again",
        max_output_tokens: 16,
        temperature: 0,
        stream: true,
      });
      let streamed = "";
      for await (const event of stream)
        if (event.type === "response.output_text.delta") streamed += event.delta;
      texts.push(streamed);
    });
    expect(texts.every((x) => x.length > 0)).toBe(true);
    expect(t.messages_and_choices).toEqual([
      { role: "user", content: "Hello" },
      { role: "assistant", content: texts[0] },
      { role: "user", content: "Again" },
      { role: "assistant", content: texts[1] },
    ]);
  });
});
