import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { currentRollout, Recorder } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: Server;
let baseURL: string;
const bodies: Array<Record<string, unknown>> = [];

/**
 * The prompt's token ids as a chat template would render them: the first
 * message as `first`, each later one after it, an assistant turn as the
 * tokens this server sampled for it (the streamed "Hello" as [1, 2], any
 * other answer as [7, 8]), so a later prompt extends an earlier one and its
 * sampled tokens, as with vLLM.
 */
function promptOf(messages: Array<Record<string, unknown>>, first: number[]) {
  const ids = [...first];
  for (const m of messages.slice(1)) {
    if (m.role === "assistant") ids.push(...(m.content === "Hello" ? [1, 2] : [7, 8]));
    else ids.push(4, ...[...JSON.stringify(m.content ?? "")].map((c) => c.charCodeAt(0)), 5);
  }
  return ids;
}

function completion(content: string, messages: Array<Record<string, unknown>> = []) {
  return {
    id: "cmpl-1",
    object: "chat.completion",
    created: 1,
    model: "m-served",
    prompt_token_ids: promptOf(messages, [1, 2, 3]),
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        token_ids: [7, 8],
        logprobs: {
          content: [{ token: content, logprob: -0.1, bytes: null, top_logprobs: [] }],
          refusal: null,
        },
        message: { role: "assistant", content, refusal: null },
      },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
}

function chunk(delta: object, extra: object = {}) {
  return {
    id: "cmpl-s",
    object: "chat.completion.chunk",
    created: 1,
    model: "m-served",
    ...extra,
    choices: [{ index: 0, delta, finish_reason: null, ...extra }],
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw);
      bodies.push(body);
      const last = body.messages.at(-1)?.content;
      if (last === "fail") {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ error: { message: "bad request here", type: "invalid_request_error" } }),
        );
        return;
      }
      if (last === "use tool") {
        const call = {
          id: "call_t",
          type: "function",
          function: { name: "lookup", arguments: '{"q":"x"}' },
        };
        const reply = completion("", body.messages);
        Object.assign(reply.choices[0]!, { finish_reason: "tool_calls" });
        Object.assign(reply.choices[0]!.message, { content: null, tool_calls: [call] });
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(reply));
        return;
      }
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(completion(`echo ${last}`, body.messages)));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (o: object) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      send({
        ...chunk({ role: "assistant", content: "He" }, { token_ids: [1] }),
        // A streamed one-message request's prompt is [9, 9] (the tests tell it apart by that).
        prompt_token_ids: promptOf(body.messages, body.messages.length === 1 ? [9, 9] : [1, 2, 3]),
      });
      send(chunk({ content: "llo" }, { token_ids: [2] }));
      send(
        chunk({
          tool_calls: [
            {
              index: 0,
              id: "call_a",
              type: "function",
              function: { name: "f", arguments: '{"x"' },
            },
          ],
        }),
      );
      send(
        chunk({
          tool_calls: [
            { index: 1, id: "call_b", type: "function", function: { name: "g", arguments: "{}" } },
          ],
        }),
      );
      send(chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] }));
      send({
        id: "cmpl-s",
        object: "chat.completion.chunk",
        created: 1,
        model: "m-served",
        choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }],
      });
      send({
        id: "cmpl-s",
        object: "chat.completion.chunk",
        created: 1,
        model: "m-served",
        choices: [],
        usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
      });
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const user = (content: string) => ({ role: "user" as const, content });

type Completions = OpenAI["chat"]["completions"];
/** The SDK's helpers (stream, parse, runTools): openai 4 keeps them under `beta`. */
function helpers(openai: OpenAI): Completions {
  if (typeof openai.chat.completions.stream === "function") return openai.chat.completions;
  return (openai as unknown as { beta: { chat: { completions: Completions } } }).beta.chat
    .completions;
}

describe("Recorder", () => {
  it("records a non-streamed call with token ids and asks for logprobs and token ids", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(
      async (traj) => {
        const res = await openai.chat.completions.create({ model: "m", messages: [user("hi")] });
        expect(res.choices[0]?.message.content).toBe("echo hi");
        traj.reward = 1;
      },
      { metadata: { scenario: 3 } },
    );
    expect(bodies.at(-1)).toMatchObject({
      logprobs: true,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
    });
    expect(bodies.at(-1)?.top_logprobs).toBeUndefined();
    expect(t.metadata.scenario).toBe(3);
    expect(t.messages_and_choices).toHaveLength(2);
    const choice = t.messages_and_choices[1] as unknown as Record<string, unknown>;
    expect(choice.token_ids).toEqual([7, 8]);
    expect(choice.prompt_token_ids).toEqual([1, 2, 3]);
    expect(t.reward).toBe(1);
  });

  it("asks only for what the recorder's options allow and never overrides what the caller set", async () => {
    const ask = async (options: ConstructorParameters<typeof Recorder>[0], extra: object) => {
      const recorder = new Recorder(options);
      const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
      await recorder.rollout(() =>
        openai.chat.completions.create({ model: "m", messages: [user("hi")], ...extra }),
      );
      const { logprobs, return_token_ids, return_tokens_as_token_ids } = bodies.at(-1) ?? {};
      return { logprobs, return_token_ids, return_tokens_as_token_ids };
    };
    expect(await ask({ logprobs: false }, {})).toEqual({
      logprobs: undefined,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
    });
    expect(await ask({ tokenIds: false }, {})).toEqual({
      logprobs: true,
      return_token_ids: undefined,
      return_tokens_as_token_ids: undefined,
    });
    expect(await ask({ logprobs: false, tokenIds: false }, {})).toEqual({
      logprobs: undefined,
      return_token_ids: undefined,
      return_tokens_as_token_ids: undefined,
    });
    // The caller's own values win; a key spelled out as undefined counts as not set.
    expect(
      await ask(
        {},
        { logprobs: false, return_token_ids: false, return_tokens_as_token_ids: undefined },
      ),
    ).toEqual({ logprobs: false, return_token_ids: false, return_tokens_as_token_ids: true });
  });

  it("extends the conversation and puts an unrelated request in an additional history", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(async () => {
      const a = await openai.chat.completions.create({ model: "m", messages: [user("one")] });
      await openai.chat.completions.create({
        model: "m",
        messages: [user("one"), a.choices[0]!.message, user("two")],
      });
      const j = await openai.chat.completions.create({
        model: "m",
        messages: [user("judge this")],
      });
      // The side conversation goes on: it extends its own history, not a new one.
      await openai.chat.completions.create({
        model: "m",
        messages: [user("judge this"), j.choices[0]!.message, user("and this")],
      });
    });
    expect(t.messages().map((m) => m.content)).toEqual(["one", "echo one", "two", "echo two"]);
    expect(t.additional_histories).toHaveLength(1);
    expect(t.additional_histories[0]!.messages().map((m) => m.content)).toEqual([
      "judge this",
      "echo judge this",
      "and this",
      "echo and this",
    ]);
  });

  it("recognises its conversation however the loop re-sends it: content parts, empty content, tool calls", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const parts = (text: string) => [{ type: "text" as const, text }];
    const t = await recorder.rollout(async () => {
      const system = { role: "system" as const, content: "s" };
      const a = await openai.chat.completions.create({
        model: "m",
        messages: [system, { role: "user", content: parts("q") }],
      });
      // New objects with equal content, and the reply re-sent as a plain message.
      const history = [
        { role: "system" as const, content: "s" },
        { role: "user" as const, content: parts("q") },
        { role: "assistant" as const, content: a.choices[0]!.message.content },
      ];
      const b = await openai.chat.completions.create({
        model: "m",
        messages: [...history, user("use tool")],
      });
      const call = b.choices[0]!.message.tool_calls![0]!;
      // The tool-call turn comes back with "" where the model sent null.
      await openai.chat.completions.create({
        model: "m",
        messages: [
          ...history,
          user("use tool"),
          { role: "assistant", content: "", tool_calls: [call] },
          { role: "tool", tool_call_id: call.id, content: "42" },
          user("done"),
        ],
      });
      // Different content parts: not this conversation.
      await openai.chat.completions.create({
        model: "m",
        messages: [system, { role: "user", content: parts("other") }],
      });
    });
    expect(t.messages_and_choices).toHaveLength(8);
    expect(t.messages().map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "tool",
      "user",
      "assistant",
    ]);
    expect(t.additional_histories).toHaveLength(1);
  });

  it("records the request as it was at call time, whatever the agent loop does to it afterwards", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(async () => {
      const messages: Array<{ role: "user"; content: string }> = [user("m1")];
      await openai.chat.completions.create({ model: "m", messages });
      // Agent loops reuse and edit their messages array between calls.
      messages.push(user("pushed later"));
      messages[0]!.content = "edited later";
    });
    expect(t.messages_and_choices).toHaveLength(2);
    expect(t.messages_and_choices[0]).toEqual({ role: "user", content: "m1" });
    expect(t.messages()[1]?.content).toBe("echo m1");
  });

  it("passes calls outside a rollout through untouched and does not record twice when wrapped twice", async () => {
    const recorder = new Recorder();
    const client = new OpenAI({ apiKey: "k", baseURL });
    const openai = recorder.wrap(recorder.wrap(client));
    expect(openai).toBe(client);
    await openai.chat.completions.create({ model: "m", messages: [user("outside")] });
    expect(bodies.at(-1)?.logprobs).toBeUndefined();
    const t = await recorder.rollout(async () => {
      await openai.chat.completions.create({ model: "m", messages: [user("in")] });
    });
    expect(t.messages_and_choices).toHaveLength(2);
    expect(currentRollout()).toBeUndefined();
  });

  it("accumulates a stream: text, parallel tool calls by index, token ids, usage, finish reason", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    let text = "";
    const t = await recorder.rollout(async () => {
      const stream = await openai.chat.completions.create({
        model: "m",
        messages: [user("s")],
        stream: true,
      });
      for await (const c of stream) text += c.choices[0]?.delta.content ?? "";
    });
    expect(text).toBe("Hello");
    const choice = t.messages_and_choices[1] as unknown as {
      message: {
        content: string;
        tool_calls: Array<{ id: string; function: { arguments: string } }>;
      };
      finish_reason: string;
      token_ids: number[];
      prompt_token_ids: number[];
    };
    expect(choice.message.content).toBe("Hello");
    expect(choice.message.tool_calls.map((c) => [c.id, c.function.arguments])).toEqual([
      ["call_a", '{"x":1}'],
      ["call_b", "{}"],
    ]);
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.token_ids).toEqual([1, 2]);
    expect(choice.prompt_token_ids).toEqual([9, 9]);
  });

  it("records an early break as incomplete in the logs", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(async () => {
      const stream = await openai.chat.completions.create({
        model: "m",
        messages: [user("s")],
        stream: true,
      });
      for await (const _ of stream) break;
    });
    expect(t.logs.join("\n")).toMatch(/incomplete \(kept as a plain message, not trained on\)/);
    // What was read is kept for the conversation, but not as a Choice to train on.
    expect(t.messages_and_choices[1]).toEqual({ role: "assistant", content: "He" });
  });

  it("says in the logs when a call had not finished as the rollout ended", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    let stream: AsyncIterable<unknown> | undefined;
    let late: Promise<unknown> | undefined;
    const t = await recorder.rollout(async () => {
      // A stream that is opened but never read, and a call nobody awaits.
      stream = await openai.chat.completions.create({
        model: "m",
        messages: [user("s")],
        stream: true,
      });
      late = openai.chat.completions.create({ model: "m2", messages: [user("late")] });
    });
    expect(t.logs).toEqual([
      "a streamed completion (m) had not finished when the rollout ended: left out of the trajectory",
      "a completion (m2) had not finished when the rollout ended: left out of the trajectory",
    ]);
    const returned = JSON.stringify(t);
    // Both calls finish after the rollout returned: the trajectory stays as it was returned.
    for await (const _ of stream!);
    await late;
    expect(JSON.stringify(t)).toBe(returned);
    expect(t.messages_and_choices).toEqual([]);
  });

  it("leaves out of a returned trajectory a call its rollout's leftover work starts after it ended", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    let release = () => {};
    // Another rollout keeps running meanwhile, so the async context stays live.
    const other = recorder.rollout(() => new Promise<void>((r) => (release = r)));
    let late: Promise<unknown> | undefined;
    let startLate = () => {};
    let lateRollout: unknown = "not read";
    const t = await recorder.rollout(async () => {
      late = new Promise<void>((r) => (startLate = r)).then(() => {
        lateRollout = currentRollout();
        return openai.chat.completions.create({ model: "m", messages: [user("after the end")] });
      });
      await openai.chat.completions.create({ model: "m", messages: [user("inside")] });
    });
    startLate();
    await late;
    expect(lateRollout).toBeUndefined();
    expect(bodies.at(-1)?.logprobs).toBeUndefined();
    expect(t.messages_and_choices.map((m) => ("role" in m ? m.content : "choice"))).toEqual([
      "inside",
      "choice",
    ]);
    release();
    await other;
  });

  it("logs a failed call and re-throws the SDK's own error", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 }));
    let trajectoryLogs: string[] = [];
    await expect(
      recorder.rollout(async (t) => {
        trajectoryLogs = t.logs;
        await openai.chat.completions.create({ model: "m", messages: [user("fail")] });
      }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    expect(trajectoryLogs.join("\n")).toMatch(/error/);
  });

  it("keeps withResponse and the SDK stream helper working while recording", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(async () => {
      const { data, response } = await openai.chat.completions
        .create({ model: "m", messages: [user("w")] })
        .withResponse();
      expect(response.status).toBe(200);
      expect(data.choices[0]?.message.content).toBe("echo w");
      const s = helpers(openai).stream({
        model: "m",
        messages: [user("w"), data.choices[0]!.message, user("s")],
      });
      const final = await s.finalChatCompletion();
      expect(final.choices[0]?.message.content).toBe("Hello");
    });
    expect(t.messages().map((m) => m.content)).toEqual(["w", "echo w", "s", "Hello"]);
  });

  it("keeps tee() working and records an aborted stream as aborted", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(async () => {
      const stream = await openai.chat.completions.create({
        model: "m",
        messages: [user("s")],
        stream: true,
      });
      const [a, b] = stream.tee();
      let left = "";
      let right = "";
      for await (const c of a) left += c.choices[0]?.delta.content ?? "";
      for await (const c of b) right += c.choices[0]?.delta.content ?? "";
      expect([left, right]).toEqual(["Hello", "Hello"]);
    });
    expect(t.messages_and_choices).toHaveLength(2);
    const aborted = await recorder.rollout(async () => {
      const stream = await openai.chat.completions.create({
        model: "m",
        messages: [user("s")],
        stream: true,
      });
      // The SDK ends an aborted stream quietly; the record must still say so.
      for await (const _ of stream) stream.controller.abort();
    });
    expect(aborted.logs.join("\n")).toMatch(/aborted/);
  });

  it("keeps parse() and asResponse() working (the body is read once) and records both", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(async () => {
      const parsed = await helpers(openai).parse({ model: "m", messages: [user("p")] });
      expect(parsed.choices[0]?.message.content).toBe("echo p");
      expect(parsed.choices[0]?.message.parsed).toBeNull();
      const response = await openai.chat.completions
        .create({ model: "m", messages: [user("r")] })
        .asResponse();
      expect(response.status).toBe(200);
      const json = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      expect(json.choices[0]?.message.content).toBe("echo r");
      // The raw response is recorded from a copy of its body, read beside the caller's.
      await new Promise((r) => setTimeout(r, 20));
    });
    expect(t.messages().map((m) => m.content)).toEqual(["p", "echo p"]);
    expect(t.additional_histories).toHaveLength(1);
    expect(t.additional_histories[0]!.messages_and_choices).toMatchObject([
      { role: "user", content: "r" },
      { message: { content: "echo r" }, token_ids: [7, 8], prompt_token_ids: [1, 2, 3] },
    ]);
  });

  it("keeps toReadableStream() working and records what went through it", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(async () => {
      const stream = await openai.chat.completions.create({
        model: "m",
        messages: [user("s")],
        stream: true,
      });
      const reader = stream.toReadableStream().getReader();
      const decoder = new TextDecoder();
      let lines = 0;
      for (let r = await reader.read(); !r.done; r = await reader.read())
        lines += decoder.decode(r.value).split("\n").filter(Boolean).length;
      expect(lines).toBe(7);
    });
    expect(t.messages_and_choices[1]).toMatchObject({
      finish_reason: "tool_calls",
      message: {
        content: "Hello",
        tool_calls: [
          { id: "call_a", function: { name: "f", arguments: '{"x":1}' } },
          { id: "call_b", function: { name: "g", arguments: "{}" } },
        ],
      },
    });
  });

  it("keeps runTools() working and records each turn with the tool result between them", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const t = await recorder.rollout(async () => {
      const runner = helpers(openai).runTools({
        model: "m",
        messages: [user("use tool")],
        tools: [
          {
            type: "function",
            function: {
              name: "lookup",
              description: "Looks a word up.",
              parameters: { type: "object", properties: { q: { type: "string" } } },
              function: (args: { q: string }) => `found ${args.q}`,
              parse: JSON.parse,
            },
          },
        ],
      });
      expect(await runner.finalContent()).toBe("echo found x");
    });
    expect(t.messages_and_choices).toMatchObject([
      { role: "user", content: "use tool" },
      { finish_reason: "tool_calls", message: { tool_calls: [{ id: "call_t" }] } },
      { role: "tool", tool_call_id: "call_t", content: "found x" },
      { finish_reason: "stop", message: { content: "echo found x" } },
    ]);
    expect(t.tools?.[0]).toMatchObject({ type: "function", function: { name: "lookup" } });
    expect(t.additional_histories).toHaveLength(0);
  });

  it("isolates hundreds of interleaved concurrent rollouts", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
    const ts = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        recorder.rollout(async () => {
          await new Promise((r) => setTimeout(r, i % 7));
          const a = await openai.chat.completions.create({ model: "m", messages: [user(`q${i}`)] });
          await openai.chat.completions.create({
            model: "m",
            messages: [user(`q${i}`), a.choices[0]!.message, user(`r${i}`)],
          });
        }),
      ),
    );
    ts.forEach((t, i) => {
      expect(t.messages().map((m) => m.content)).toEqual([
        `q${i}`,
        `echo q${i}`,
        `r${i}`,
        `echo r${i}`,
      ]);
      expect(t.additional_histories).toHaveLength(0);
    });
  });
});
