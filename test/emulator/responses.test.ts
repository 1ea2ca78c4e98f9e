// The emulator's POST /v1/responses, through the openai SDK's own Responses
// client: answers and event streams from the policy, function tools,
// tool_choice as on the chat endpoint, instructions, previous_response_id,
// and errors the SDK reads.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { KEY, start } from "./helpers.js";

let emu: Emulator;
let openai: OpenAI;
beforeAll(async () => {
  emu = await start();
  openai = new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(async () => {
  await emu.close();
});

const MODEL = "teacher-large";
const lookup = {
  type: "function" as const,
  name: "lookup",
  description: "The colour of a fruit.",
  parameters: {
    type: "object",
    properties: { fruit: { type: "string", enum: ["apple", "banana", "cherry", "grape"] } },
    required: ["fruit"],
    additionalProperties: false,
  },
  strict: true,
};
const other = { ...lookup, name: "submit" };

describe("POST /v1/responses", () => {
  it("answers a plain request with a message item the SDK reads as output_text", async () => {
    const r = await openai.responses.create({
      model: MODEL,
      instructions: "Answer in one word.",
      input: "say red",
      temperature: 0,
    });
    expect(r.object).toBe("response");
    expect(r.id).toMatch(/^resp_/);
    expect(r.status).toBe("completed");
    expect(r.model).toBe(MODEL);
    expect(r.instructions).toBe("Answer in one word.");
    expect(r.output).toHaveLength(1);
    const item = r.output[0] as OpenAI.Responses.ResponseOutputMessage;
    expect(item.type).toBe("message");
    expect(item.role).toBe("assistant");
    expect(r.output_text).toBe((item.content[0] as { text: string }).text);
    expect(r.output_text).toMatch(/^[a-z]+( [a-z]+)*$/);
    expect(r.usage?.output_tokens).toBeGreaterThan(0);
    expect(r.usage?.total_tokens).toBe(
      (r.usage?.input_tokens ?? 0) + (r.usage?.output_tokens ?? 0),
    );
  });

  it("calls a function tool when tool_choice requires it, and a named one when named", async () => {
    const required = await openai.responses.create({
      model: MODEL,
      input: "what colour is the cherry",
      tools: [lookup, other],
      tool_choice: "required",
    });
    const call = required.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.type).toBe("function_call");
    expect(call.call_id).toMatch(/^call_/);
    expect(["lookup", "submit"]).toContain(call.name);
    expect(["apple", "banana", "cherry", "grape"]).toContain(JSON.parse(call.arguments).fruit);
    for (let seed = 0; seed < 5; seed++) {
      const named = await openai.responses.create({
        model: MODEL,
        input: "what colour is the cherry",
        tools: [lookup, other],
        tool_choice: { type: "function", name: "submit" },
        seed,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      expect((named.output[0] as OpenAI.Responses.ResponseFunctionToolCall).name).toBe("submit");
    }
    for (let seed = 0; seed < 5; seed++) {
      const none = await openai.responses.create({
        model: MODEL,
        input: "what colour is the cherry",
        tools: [lookup],
        tool_choice: "none",
        seed,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      expect(none.output[0]?.type).toBe("message");
    }
  });

  it("streams the event sequence the SDK's stream helpers accumulate", async () => {
    const stream = await openai.responses.create({
      model: MODEL,
      input: "say red",
      stream: true,
    });
    const types: string[] = [];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const item = completed?.output[0] as OpenAI.Responses.ResponseOutputMessage;
    expect((item.content[0] as { text: string }).text).toBe(text);
  });

  it("works with responses.stream(): text and function-call argument deltas, the final response", async () => {
    const stream = openai.responses.stream({
      model: MODEL,
      input: "what colour is the grape",
      tools: [lookup],
      tool_choice: "required",
    });
    let args = "";
    stream.on("response.function_call_arguments.delta", (e) => {
      args += e.delta;
    });
    const final = await stream.finalResponse();
    const call = final.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.type).toBe("function_call");
    expect(args).toBe(call.arguments);
    expect(JSON.parse(call.arguments)).toHaveProperty("fruit");
    // parse() reads a strict tool's arguments.
    const parsed = await openai.responses.parse({
      model: MODEL,
      input: "what colour is the grape",
      tools: [lookup],
      tool_choice: "required",
    });
    const parsedCall = parsed.output[0] as { parsed_arguments?: unknown; arguments: string };
    expect(parsedCall.parsed_arguments).toBeTruthy();
    // openai 4.x puts the whole call there; 5 and later the arguments alone.
    const whole = (parsedCall.parsed_arguments as { arguments?: string }).arguments;
    expect(whole ? JSON.parse(whole) : parsedCall.parsed_arguments).toEqual(
      JSON.parse(parsedCall.arguments),
    );
  });

  it("continues a conversation named by previous_response_id, tool result included", async () => {
    const first = await openai.responses.create({
      model: MODEL,
      instructions: "Look it up.",
      input: "what colour is the apple",
      tools: [lookup],
      tool_choice: "required",
    });
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    // The policy repeats a word a tool answered far more often than chance:
    // the tool result reached the prompt only through the remembered conversation.
    let said = 0;
    for (let seed = 0; seed < 20; seed++) {
      const next = await openai.responses.create({
        model: MODEL,
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: call.call_id, output: "yellow" }],
        tools: [lookup],
        tool_choice: "none",
        seed,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      expect(next.previous_response_id).toBe(first.id);
      if (next.output_text.split(" ")[0] === "yellow") said++;
    }
    expect(said).toBeGreaterThan(10);
  });

  it("answers errors in the API's shape, naming the field", async () => {
    const refused = async (body: object) => {
      const error = await openai.responses.create(body as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return error as InstanceType<typeof OpenAI.BadRequestError>;
    };
    const missing = await refused({ model: MODEL, input: "hi", previous_response_id: "resp_nope" });
    expect(missing.code).toBe("previous_response_not_found");
    expect(missing.param).toBe("previous_response_id");
    const named = await refused({
      model: MODEL,
      input: "hi",
      tools: [lookup],
      tool_choice: { type: "function", name: "absent" },
    });
    expect(named.param).toBe("tool_choice");
    expect(named.message).toContain("absent");
    const builtIn = await refused({ model: MODEL, input: "hi", tools: [{ type: "web_search" }] });
    expect(builtIn.param).toBe("tools[0].type");
    const tooLong = await refused({ model: MODEL, input: "hi", max_output_tokens: 10 ** 6 });
    expect(tooLong.param).toBe("max_output_tokens");
    const badInput = await refused({ model: MODEL, input: 3 });
    expect(badInput.param).toBe("input");
    const required = await refused({ model: MODEL, input: "hi", tool_choice: "required" });
    expect(required.param).toBe("tool_choice");
    const unknown = await openai.responses
      .create({ model: "wandb-artifact:///alice/demo/none", input: "hi" })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    const keyless = new OpenAI({ baseURL: emu.url, apiKey: "wrong", maxRetries: 0 });
    const denied = await keyless.responses.create({ model: MODEL, input: "hi" }).catch((e) => e);
    expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("ends an answer at max_output_tokens as incomplete, as the API does", async () => {
    const statuses = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const r = await openai.responses.create({
        model: MODEL,
        input: "say red",
        max_output_tokens: 1,
        seed,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      statuses.add(String(r.status));
      if (r.status === "incomplete") {
        expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
        expect(r.output_text.split(" ")).toHaveLength(1);
      }
      expect(r.usage?.output_tokens).toBe(1);
    }
    expect(statuses.has("incomplete")).toBe(true);
  });

  it("keeps no response made with store: false", async () => {
    const r = await openai.responses.create({ model: MODEL, input: "hi", store: false });
    const error = await openai.responses
      .create({ model: MODEL, input: "hi", previous_response_id: r.id })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
