// The framework subpaths answer bad arguments with InvalidArgumentError naming
// them, not with the engine's "Cannot read properties of null".
import { HumanMessage } from "@langchain/core/messages";
import { Runner } from "@openai/agents";
import OpenAI from "openai";
import { InvalidArgumentError } from "trajectory-recorder";
import { recorderMiddleware, recordMastraAgent } from "trajectory-recorder/ai-sdk";
import { chatOpenAIFields, toOpenAIMessages } from "trajectory-recorder/langchain";
import {
  attachRecorder,
  RecordingModelProvider,
  recordingModelProvider,
  recordingRunner,
} from "trajectory-recorder/openai-agents";
import { describe, expect, it } from "vitest";

describe("openai-agents", () => {
  it("the provider, the runner and attachRecorder name their bad argument", () => {
    expect(() => new RecordingModelProvider(undefined as never)).toThrow(
      "new RecordingModelProvider(options): options: expected an object { client, recorder?, defaultModel? }, received undefined.",
    );
    expect(() => recordingModelProvider({ client: null as never })).toThrow(
      "recorder.wrap(client): client: expected an openai client (with chat.completions.create) or an @anthropic-ai/sdk client (with messages.create), received null.",
    );
    const client = new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1" });
    expect(() => recordingModelProvider({ client, recorder: {} as never })).toThrow(
      /options\.recorder: expected a Recorder, received an object/,
    );
    expect(() => recordingRunner(null as never)).toThrow(
      /recordingRunner\(options\): options: expected an object/,
    );
    expect(() => attachRecorder(null as never)).toThrow(InvalidArgumentError);
    expect(() => attachRecorder({} as never)).toThrow(
      "attachRecorder(target): target: expected an Agents SDK Runner or Agent (with on and off), received an object.",
    );
    expect(attachRecorder(new Runner())).toBeTypeOf("function");
  });
});

describe("ai-sdk", () => {
  it("recordMastraAgent and recorderMiddleware name their bad argument", () => {
    expect(() => recordMastraAgent(null as never)).toThrow(
      /^recordMastraAgent\(agent\): agent: expected a Mastra Agent .* received null\.$/,
    );
    expect(() => recorderMiddleware(null as never)).toThrow(
      "recorderMiddleware(options): options: expected an object, received null.",
    );
  });
});

describe("langchain", () => {
  it("chatOpenAIFields and toOpenAIMessages name their bad argument", () => {
    expect(() => chatOpenAIFields(null as never)).toThrow(
      "chatOpenAIFields(fields, options): fields: expected an object of ChatOpenAI fields, received null.",
    );
    expect(() => chatOpenAIFields({}, null as never)).toThrow(/options: expected an object/);
    expect(() => chatOpenAIFields({ modelKwargs: 5 } as never)).toThrow(
      /fields\.modelKwargs: expected an object, received a number/,
    );
    expect(() => toOpenAIMessages(undefined as never)).toThrow(
      "toOpenAIMessages(messages, model): messages: expected an array of LangChain messages, received undefined.",
    );
    expect(() => toOpenAIMessages([new HumanMessage("hi"), null] as never)).toThrow(
      /messages\[1\]: expected a LangChain message, received null/,
    );
    expect(toOpenAIMessages([new HumanMessage("hi")])).toEqual([{ role: "user", content: "hi" }]);
  });
});
