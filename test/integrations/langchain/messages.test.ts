import {
  AIMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { convertMessagesToCompletionsMessageParams } from "@langchain/openai";
import { toOpenAIMessages } from "trajectory-recorder/langchain";
import { describe, expect, it } from "vitest";

const conversation = () => [
  new SystemMessage("You paint walls."),
  new HumanMessage("paint it red"),
  new HumanMessage({
    content: [
      { type: "text", text: "like this" },
      { type: "image_url", image_url: { url: "https://example.com/a.png" } },
      { type: "image", source_type: "url", url: "https://example.com/b.png" },
      { type: "image", source_type: "base64", mime_type: "image/png", data: "iVBO" },
    ],
  }),
  new HumanMessage({ content: "from bob", name: "bob" }),
  new AIMessage({
    content: "",
    tool_calls: [{ id: "call_1", name: "paint", args: { color: "red", coats: 2 } }],
  }),
  new ToolMessage({ content: "painted red", tool_call_id: "call_1", name: "paint" }),
  new AIMessage({
    content: "Let me measure.",
    tool_calls: [{ id: "call_2", name: "measure", args: { wall: "north" } }],
  }),
  new ToolMessage({ content: [{ type: "text", text: "3 metres" }], tool_call_id: "call_2" }),
  new AIMessage({
    content: [
      { type: "text", text: "Done" },
      { type: "tool_use", id: "x", name: "paint", input: {} },
      { type: "reasoning", reasoning: "hidden" },
    ],
  }),
  new AIMessage({
    content: "",
    additional_kwargs: {
      tool_calls: [
        { id: "call_3", type: "function", function: { name: "paint", arguments: "{}" } },
      ],
    },
  }),
  new FunctionMessage({ content: "42", name: "answer" }),
  new ChatMessage({ content: "hi", role: "developer" }),
  new AIMessage({ content: "v1 answer", response_metadata: { output_version: "v1" } }),
  new HumanMessage({
    content: [{ type: "text", text: "v1 question" }],
    response_metadata: { output_version: "v1" },
  }),
];

describe("toOpenAIMessages", () => {
  it("serializes every kind of message exactly as ChatOpenAI does", () => {
    for (const model of ["gpt-4.1", "o3-mini", "emulator/tiny", undefined]) {
      const messages = conversation();
      expect(toOpenAIMessages(messages, model)).toEqual(
        convertMessagesToCompletionsMessageParams({ messages, model }),
      );
    }
  });

  it("sends system prompts as developer messages to reasoning models, as ChatOpenAI does", () => {
    const [system] = toOpenAIMessages([new SystemMessage("rules")], "o3-mini");
    expect(system).toEqual({ role: "developer", content: "rules" });
    expect(toOpenAIMessages([new SystemMessage("rules")], "gpt-4.1")[0]!.role).toBe("system");
  });

  it("writes tool calls with their ids and JSON arguments", () => {
    const [call] = toOpenAIMessages([
      new AIMessage({ content: "", tool_calls: [{ id: "c", name: "paint", args: { a: 1 } }] }),
    ]);
    expect(call).toEqual({
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "c", type: "function", function: { name: "paint", arguments: '{"a":1}' } },
      ],
    });
  });
});
