// A client wrapped with recorder.wrap records the Responses API inside a
// rollout (create, streamed or not, and the SDK's stream() and parse()
// helpers, which keep returning the SDK's own objects): an agent loop with a
// function call and its output becomes one chat-format history, the teacher's
// turns plain assistant messages for SFT.
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sftRowsFromTrajectories } from "../../src/training/index.js";
import {
  functionCall,
  message,
  type ResponsesServer,
  startResponsesServer,
  tools,
} from "../helpers/responses-server.js";

type Item = Record<string, unknown>;

const reasoning = {
  type: "reasoning",
  id: "rs_1",
  summary: [{ type: "summary_text", text: "Add 2 and 3 with the tool." }],
};

// The history every variant of the loop records.
const expected = [
  { role: "system", content: "Use the tools." },
  { role: "user", content: "What is 2+3?" },
  {
    role: "assistant",
    content: "",
    reasoning_content: "Add 2 and 3 with the tool.",
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } },
    ],
  },
  { role: "tool", tool_call_id: "call_1", content: "5" },
  { role: "assistant", content: "It is 5." },
];
const expectedTools = [
  {
    type: "function",
    function: {
      name: "add",
      description: "Adds two numbers.",
      parameters: tools[0]?.parameters,
      strict: true,
    },
  },
];

let server: ResponsesServer;
beforeAll(async () => {
  server = await startResponsesServer({
    answer: (body) => {
      const input = Array.isArray(body.input) ? (body.input as Item[]) : [];
      const answered = input.some((i) => i.type === "function_call_output");
      return { output: answered ? [message("It is 5.")] : [reasoning, functionCall] };
    },
  });
});
afterAll(() => server.close());

const client = () => new OpenAI({ baseURL: server.baseURL, apiKey: "test-key", maxRetries: 0 });

type Mode = "create" | "create stream" | "stream()" | "parse()";

/** One model call in the way `mode` makes it; returns the SDK's final response object. */
async function call(openai: OpenAI, mode: Mode, body: Item): Promise<OpenAI.Responses.Response> {
  const params = body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  if (mode === "create") return openai.responses.create(params);
  if (mode === "parse()") return openai.responses.parse(params);
  if (mode === "stream()") return openai.responses.stream(params as never).finalResponse();
  const stream = await openai.responses.create({ ...params, stream: true });
  let final: OpenAI.Responses.Response | undefined;
  for await (const event of stream) if (event.type === "response.completed") final = event.response;
  if (!final) throw new Error("the stream had no response.completed event");
  return final;
}

/** The agent loop: ask, run the function the model called, send its output, get the answer. */
async function agentLoop(openai: OpenAI, mode: Mode, chained = false) {
  const input: Item[] = [{ role: "user", content: "What is 2+3?" }];
  const base = { model: "teacher-large", instructions: "Use the tools.", tools };
  const first = await call(openai, mode, { ...base, input });
  const outputs = first.output
    .filter((i) => i.type === "function_call")
    .map((i) => ({ type: "function_call_output", call_id: i.call_id, output: "5" }));
  if (chained)
    return call(openai, mode, { ...base, previous_response_id: first.id, input: outputs });
  return call(openai, mode, { ...base, input: [...input, ...first.output, ...outputs] });
}

describe("recording the Responses API", () => {
  for (const mode of ["create", "create stream", "stream()", "parse()"] as const)
    it(`records a function-call loop made with ${mode} as one chat history of plain messages`, async () => {
      const recorder = new Recorder();
      const openai = recorder.wrap(client());
      const sent = server.requests.length;
      let final: OpenAI.Responses.Response | undefined;
      const t = await recorder.rollout(async () => {
        final = await agentLoop(openai, mode);
      });
      // The caller gets what the SDK gives an unwrapped client (output_text,
      // where this major's helper adds it, is the SDK's own addition).
      const plain = await agentLoop(client(), mode);
      expect(final?.output).toMatchObject([message("It is 5.")]);
      expect(final?.output_text).toBe(plain.output_text);
      expect(Object.keys(final ?? {}).sort()).toEqual(Object.keys(plain).sort());
      if (mode === "create" || mode === "parse()") expect(final?.output_text).toBe("It is 5.");
      expect(t.messages_and_choices).toEqual(expected);
      expect(t.tools).toEqual(expectedTools);
      expect(t.additional_histories).toHaveLength(0);
      // Nothing chat-specific was added to what went out.
      for (const body of server.requests.slice(sent)) {
        expect(body).not.toHaveProperty("logprobs");
        expect(body).not.toHaveProperty("return_token_ids");
      }
      expect(t.logs.join("\n")).not.toMatch(/no chat completion was recorded/);
    });

  it("gives a teacher's session as an SFT row (distillation), though it holds no Choice", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    const t = await recorder.rollout(() => agentLoop(openai, "create"));
    t.reward = 1;
    const { rows } = sftRowsFromTrajectories([t], { minReward: 0.5 });
    expect(rows).toEqual([{ messages: expected, tools: expectedTools }]);
  });

  it("resolves previous_response_id from the responses the rollout recorded", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    const t = await recorder.rollout(() => agentLoop(openai, "create", true));
    expect(t.messages_and_choices).toEqual(expected);
    expect(t.additional_histories).toHaveLength(0);
  });

  it("leaves the earlier instructions out of a continuation that gives none, as the API does", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    const t = await recorder.rollout(async () => {
      const first = await openai.responses.create({
        model: "teacher-large",
        instructions: "Use the tools.",
        input: [{ role: "user", content: "What is 2+3?" }],
        tools,
      });
      await openai.responses.create({
        model: "teacher-large",
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: "call_1", output: "5" }],
        tools,
      });
    });
    expect(t.messages_and_choices).toEqual(expected.slice(0, 3));
    expect(t.additional_histories[0]?.messages_and_choices).toEqual(expected.slice(1));
  });

  it("says so when previous_response_id names a response it never saw", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    const t = await recorder.rollout(() =>
      openai.responses.create({
        model: "teacher-large",
        previous_response_id: "resp_elsewhere",
        input: [{ type: "function_call_output", call_id: "call_1", output: "5" }],
      }),
    );
    expect(t.logs.join("\n")).toMatch(/previous_response_id resp_elsewhere names a response/);
    expect(t.messages_and_choices.at(-1)).toEqual({ role: "assistant", content: "It is 5." });
  });

  it("names and counts the items chat cannot hold", async () => {
    const web = await startResponsesServer({
      answer: () => ({
        output: [{ type: "web_search_call", id: "ws_1", status: "completed" }, message("Found.")],
      }),
    });
    try {
      const recorder = new Recorder();
      const openai = recorder.wrap(
        new OpenAI({ baseURL: web.baseURL, apiKey: "k", maxRetries: 0 }),
      );
      const t = await recorder.rollout(() =>
        openai.responses.create({
          model: "teacher-large",
          input: "news?",
          tools: [{ type: "web_search" } as never],
        }),
      );
      expect(t.messages_and_choices).toEqual([
        { role: "user", content: "news?" },
        { role: "assistant", content: "Found." },
      ]);
      expect(t.tools).toBeNull();
      expect(t.metrics.responses_items_dropped).toBe(2);
      const logs = t.logs.join("\n");
      expect(logs).toMatch(/web_search_call has no chat form/);
      expect(logs).toMatch(/web_search tool has no chat form/);
    } finally {
      await web.close();
    }
  });

  it("says that output_text logprobs are not kept, and records the turn as a message", async () => {
    const withLogprobs = await startResponsesServer({
      answer: () => ({
        output: [
          {
            ...message("Yes"),
            content: [
              {
                type: "output_text",
                text: "Yes",
                annotations: [],
                logprobs: [
                  { token: "Yes", bytes: [89, 101, 115], logprob: -0.1, top_logprobs: [] },
                ],
              },
            ],
          },
        ],
      }),
    });
    try {
      const recorder = new Recorder();
      const openai = recorder.wrap(
        new OpenAI({ baseURL: withLogprobs.baseURL, apiKey: "k", maxRetries: 0 }),
      );
      const t = await recorder.rollout(() =>
        openai.responses.create({
          model: "m",
          input: "ok?",
          include: ["message.output_text.logprobs"],
          top_logprobs: 0,
        }),
      );
      expect(t.messages_and_choices).toEqual([
        { role: "user", content: "ok?" },
        { role: "assistant", content: "Yes" },
      ]);
      expect(t.logs.join("\n")).toMatch(/output_text logprobs are not kept/);
    } finally {
      await withLogprobs.close();
    }
  });

  it("keeps the text of a stream cut before its last event, as an incomplete call", async () => {
    const cut = await startResponsesServer({
      answer: () => ({ output: [message("Half an answer")] }),
      cutStream: () => true,
    });
    try {
      const recorder = new Recorder();
      const openai = recorder.wrap(
        new OpenAI({ baseURL: cut.baseURL, apiKey: "k", maxRetries: 0 }),
      );
      const t = await recorder.rollout(async () => {
        const stream = await openai.responses.create({ model: "m", input: "go", stream: true });
        for await (const _ of stream);
      });
      expect(t.messages_and_choices).toEqual([
        { role: "user", content: "go" },
        { role: "assistant", content: "Half an answer" },
      ]);
      expect(t.logs.join("\n")).toMatch(/resp_1 incomplete/);
    } finally {
      await cut.close();
    }
  });

  it("records through a client derived with withOptions() (openai 4: per-call options)", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    // openai 4 has no withOptions: options go as create()'s second argument there.
    const derived = typeof openai.withOptions === "function";
    const t = await recorder.rollout(() =>
      derived
        ? openai.withOptions({ timeout: 5000 }).responses.create({ model: "m", input: "hi" })
        : openai.responses.create({ model: "m", input: "hi" }, { timeout: 5000 }),
    );
    expect(t.messages_and_choices).toEqual([
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: "",
        reasoning_content: "Add 2 and 3 with the tool.",
        tool_calls: expected[2]?.tool_calls,
      },
    ]);
  });

  it("refuses a body JSON cannot hold as the SDK would, naming the field, and sends nothing", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    const sent = server.requests.length;
    let error: unknown;
    const t = await recorder.rollout(async () => {
      await openai.responses
        .create({ model: "m", input: "hi", metadata: { n: 1n } as never })
        .catch((e: unknown) => {
          error = e;
        });
    });
    expect(String(error)).toMatch(/body\.metadata\.n/);
    expect(server.requests.length).toBe(sent);
    expect(t.messages_and_choices).toEqual([]);
  });

  it("records a failed call as an error and marks the rollout as an infrastructure failure", async () => {
    const failing = await startResponsesServer({
      answer: () => ({ output: [] }),
      failWith: () => 503,
    });
    try {
      const recorder = new Recorder();
      const openai = recorder.wrap(
        new OpenAI({ baseURL: failing.baseURL, apiKey: "k", maxRetries: 0 }),
      );
      const t = await recorder.rollout(async () => {
        await expect(openai.responses.create({ model: "m", input: "hi" })).rejects.toThrow(/503/);
      });
      expect(t.logs.join("\n")).toMatch(/error: 503/);
      expect(t.toJSON().metadata).toHaveProperty("infra_failure");
    } finally {
      await failing.close();
    }
  });

  it("records into a session outside rollouts, a tool loop over two requests as one history", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client(), { session: "chat-7" });
    const final = await agentLoop(openai, "create");
    expect(final.output_text).toBe("It is 5.");
    const session = recorder.getSession("chat-7");
    expect(session?.calls).toBe(2);
    expect(session?.trajectory.messages_and_choices).toEqual(expected);
    expect(recorder.receiptOf(final)).toEqual({ trajectory_id: session?.id, call: 2 });
    await recorder.close();
  });

  it("gives the caller a 2xx answer that is no response as the SDK read it, recorded as failed", async () => {
    const odd = await startResponsesServer({ answer: () => ({ output: "nothing" as never }) });
    try {
      const recorder = new Recorder();
      const openai = recorder.wrap(
        new OpenAI({ baseURL: odd.baseURL, apiKey: "k", maxRetries: 0 }),
      );
      let res: unknown;
      const t = await recorder.rollout(async () => {
        res = await openai.responses.create({ model: "m", input: "hi" });
      });
      expect((res as { output: unknown }).output).toBe("nothing");
      expect(t.logs.join("\n")).toMatch(/not a Responses response/);
      expect(t.messages_and_choices).toEqual([{ role: "user", content: "hi" }]);
    } finally {
      await odd.close();
    }
  });

  it("passes calls outside a rollout through unrecorded and unchanged", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(client());
    const body = { model: "teacher-large", input: "hi", tools };
    const res = await openai.responses.create(body);
    expect(res.output_text).toBe("");
    expect(server.requests.at(-1)).toEqual(body);
  });

  it("wraps a client without the Responses API, whose chat calls still record", async () => {
    const completion = {
      id: "c1",
      object: "chat.completion",
      created: 0,
      model: "m",
      choices: [
        {
          index: 0,
          finish_reason: "stop",
          logprobs: null,
          message: { role: "assistant", content: "ok" },
        },
      ],
    };
    const old = { chat: { completions: { create: async (_body: unknown) => completion } } };
    const recorder = new Recorder();
    const wrapped = recorder.wrap(old);
    expect(wrapped).not.toHaveProperty("responses");
    const t = await recorder.rollout(() =>
      wrapped.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
      } as never),
    );
    expect(t.messages_and_choices).toHaveLength(2);
  });
});
