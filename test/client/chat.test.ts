import nock from "nock";
import OpenAI, { type APIPromise } from "openai";
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import type { Stream } from "openai/streaming";
import { RequestValidationError } from "trajectory-recorder/errors";
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { BASE, KEY, makeClient, useNock } from "./helpers.js";

useNock({ beforeAll, afterEach, afterAll });

const completion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "wandb-artifact:///me/demo/agent:step3",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "hello", reasoning: "thought" },
      finish_reason: "stop",
      token_ids: [1, 2],
    },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  prompt_token_ids: [9, 9, 9],
};

describe("chat completions go through the openai SDK", () => {
  it("sends engine fields as is and returns the SDK's own object with extra fields", async () => {
    const body = {
      model: "wandb-artifact:///me/demo/agent:step3",
      messages: [{ role: "user" as const, content: "hi" }],
      logprobs: true,
      top_k: 20,
      return_token_ids: true,
      chat_template_kwargs: { enable_thinking: false },
    };
    nock(BASE, { reqheaders: { authorization: `Bearer ${KEY}` } })
      .post("/v1/chat/completions", body)
      .reply(200, completion);
    const client = makeClient();
    const promise = client.chat.completions.create(body);
    expect(typeof promise.withResponse).toBe("function");
    // Typed with the SDK's own types, read off its overloads (any openai 4 to 7).
    expectTypeOf(promise).toEqualTypeOf<APIPromise<ChatCompletion>>();
    const out = await promise;
    expect(out.choices[0]?.message.content).toBe("hello");
    expect((out as unknown as { prompt_token_ids: number[] }).prompt_token_ids).toEqual([9, 9, 9]);
  });

  it("streams as the SDK's Stream", async () => {
    const chunk = (content: string, finish: string | null) =>
      `data: ${JSON.stringify({
        id: "c1",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: { content }, finish_reason: finish }],
      })}\n\n`;
    nock(BASE)
      .post("/v1/chat/completions", (b) => b.stream === true)
      .reply(200, `${chunk("hel", null)}${chunk("lo", "stop")}data: [DONE]\n\n`, {
        "content-type": "text/event-stream",
      });
    const stream = await makeClient().chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    expect(typeof stream.toReadableStream).toBe("function");
    expectTypeOf(stream).toExtend<Stream<ChatCompletionChunk>>();
    let text = "";
    for await (const c of stream) text += c.choices[0]?.delta.content ?? "";
    expect(text).toBe("hello");
  });

  it("a 422 carries the service's detail as a sentence, which a raw openai client does not", async () => {
    const detail = [
      { loc: ["body", "priority"], msg: "priority scheduling is off", type: "value_error" },
    ];
    nock(BASE).post("/v1/chat/completions").twice().reply(422, { detail });
    const params = {
      model: "m",
      messages: [{ role: "user" as const, content: "hi" }],
      priority: 3,
    };

    const raw = new OpenAI({ apiKey: KEY, baseURL: `${BASE}/v1`, maxRetries: 0 });
    const rawErr = (await raw.chat.completions.create(params).catch((e: unknown) => e)) as Error;
    // openai 6 says "422 status code (no body)", openai 7 dumps the raw JSON.
    expect(rawErr.message).not.toContain("body.priority: priority scheduling is off");

    const err = (await makeClient()
      .chat.completions.create(params)
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.UnprocessableEntityError>;
    expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(err.status).toBe(422);
    expect(err.message).toContain(
      "POST /v1/chat/completions failed: body.priority: priority scheduling is off",
    );
    expect((err.error as { detail: unknown }).detail).toEqual(detail);
  });

  it("masks the API key when the service echoes it in an error", async () => {
    nock(BASE)
      .post("/v1/chat/completions")
      .reply(401, { detail: `Invalid API key ${KEY}` });
    const err = (await makeClient()
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.AuthenticationError>;
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.message).toContain("Invalid API key [redacted]");
    expect(JSON.stringify(err.error)).not.toContain(KEY);
    expect(err.message).not.toContain(KEY);
  });

  it("refuses malformed params before sending, naming the field, by rejecting as the other methods do", async () => {
    const client = makeClient();
    const bad = () =>
      client.chat.completions.create({ model: "m", messages: [], top_k: "many" as never });
    let first: Promise<unknown> | undefined;
    expect(() => {
      first = bad();
    }).not.toThrow();
    await expect(first).rejects.toThrow(RequestValidationError);
    await expect(bad()).rejects.toThrow(/messages: .*>=1 items; top_k: .*expected number/);
    await expect(bad().withResponse()).rejects.toThrow(RequestValidationError);
    await expect(
      client.chat.completions.create({ model: 1, messages: [] } as never),
    ).rejects.toThrow(/model: .*expected string/);
  });

  it("createOpenAI() returns a configured openai client whose errors also carry detail", async () => {
    nock(BASE, { reqheaders: { authorization: `Bearer ${KEY}`, "x-team": "a" } })
      .post("/v1/chat/completions")
      .reply(422, {
        detail: [{ loc: ["body", "model"], msg: "unknown model", type: "value_error" }],
      });
    const client = makeClient({ defaultHeaders: { "x-team": "a" } });
    const openai = client.createOpenAI({ maxRetries: 0 });
    expect(openai).toBeInstanceOf(OpenAI);
    expect(openai.baseURL).toBe(client.baseURL);
    await expect(
      openai.chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toThrow(/body\.model: unknown model/);
  });
});
