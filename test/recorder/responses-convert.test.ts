// The Responses API in the chat shape the Training Service trains on: a
// request's instructions and input items become chat messages, a response's
// output items one assistant turn, function tools chat tools; what chat cannot
// hold is named, never silently lost.
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/recorder/index.js";
import {
  responsesInputToMessages,
  responsesOutputToMessage,
  responsesToolsToChat,
} from "../../src/recorder/responses-convert.js";

describe("responsesInputToMessages", () => {
  it("puts the instructions first as a system message and a string input as the user's", () => {
    expect(responsesInputToMessages({ instructions: "Be brief.", input: "Hi" })).toEqual({
      value: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      dropped: [],
    });
  });

  it("turns a tool loop's items into assistant tool calls and tool messages, paired by call_id", () => {
    const { value, dropped } = responsesInputToMessages({
      input: [
        { role: "developer", content: "Use the tools." },
        { type: "message", role: "user", content: [{ type: "input_text", text: "2+3?" }] },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Add them." }] },
        {
          type: "function_call",
          id: "fc_1",
          call_id: "c1",
          name: "add",
          arguments: '{"a":2,"b":3}',
        },
        { type: "function_call", id: "fc_2", call_id: "c2", name: "log", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "5" },
        { type: "function_call_output", call_id: "c2", output: "ok" },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "It is 5.", annotations: [] }],
        },
        { role: "user", content: "Thanks" },
      ],
    });
    expect(dropped).toEqual([]);
    expect(value).toEqual([
      { role: "system", content: "Use the tools." },
      { role: "user", content: [{ type: "text", text: "2+3?" }] },
      {
        role: "assistant",
        content: "",
        reasoning_content: "Add them.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } },
          { id: "c2", type: "function", function: { name: "log", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "5" },
      { role: "tool", tool_call_id: "c2", content: "ok" },
      { role: "assistant", content: "It is 5." },
      { role: "user", content: "Thanks" },
    ]);
  });

  it("keeps images as image_url parts and names what chat cannot hold", () => {
    const { value, dropped } = responsesInputToMessages({
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            { type: "input_image", image_url: "https://x.test/a.png", detail: "low" },
            { type: "input_file", file_id: "file_1" },
          ],
        },
        { type: "web_search_call", id: "ws_1", status: "completed" },
        { type: "item_reference", id: "msg_0" },
      ],
    });
    expect(value).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "https://x.test/a.png", detail: "low" } },
        ],
      },
    ]);
    expect(dropped).toEqual(["input_file content part", "web_search_call", "item_reference"]);
  });
});

describe("responsesOutputToMessage", () => {
  it("makes one assistant turn of the reasoning summary, the text and the function calls", () => {
    const { value, dropped } = responsesOutputToMessage([
      {
        type: "reasoning",
        id: "rs_1",
        summary: [
          { type: "summary_text", text: "First." },
          { type: "summary_text", text: "Then." },
        ],
      },
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [
          { type: "output_text", text: "Let me ", annotations: [] },
          { type: "output_text", text: "check.", annotations: [] },
        ],
      },
      { type: "function_call", id: "fc_1", call_id: "c9", name: "lookup", arguments: '{"q":"x"}' },
      { type: "code_interpreter_call", id: "ci_1" },
    ]);
    expect(value).toEqual({
      role: "assistant",
      content: "Let me check.",
      reasoning_content: "First.\n\nThen.",
      tool_calls: [
        { id: "c9", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
      ],
    });
    expect(dropped).toEqual(["code_interpreter_call"]);
  });

  it("keeps a refusal in the message's refusal field", () => {
    const { value } = responsesOutputToMessage([
      { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
    ]);
    expect(value).toEqual({ role: "assistant", content: "", refusal: "No." });
  });
});

describe("responsesToolsToChat", () => {
  it("maps function tools to chat tools and names the built-in ones it leaves out", () => {
    const params = { type: "object", properties: { a: { type: "number" } } };
    expect(
      responsesToolsToChat([
        { type: "function", name: "add", description: "Adds.", parameters: params, strict: true },
        { type: "web_search" },
      ]),
    ).toEqual({
      value: [
        {
          type: "function",
          function: { name: "add", description: "Adds.", parameters: params, strict: true },
        },
      ],
      dropped: ["web_search tool"],
    });
    expect(responsesToolsToChat(undefined)).toEqual({ value: undefined, dropped: [] });
  });
});

describe("bad arguments", () => {
  it("are refused with the argument's name and what was expected", () => {
    expect(() => responsesInputToMessages(null as never)).toThrow(InvalidArgumentError);
    expect(() => responsesInputToMessages(null as never)).toThrow(
      /body: expected a Responses request/,
    );
    expect(() => responsesInputToMessages({ input: 5 })).toThrow(
      /body\.input: expected a string or an array/,
    );
    expect(() => responsesOutputToMessage("text")).toThrow(
      /output: expected a response's output items/,
    );
    expect(() => responsesToolsToChat({})).toThrow(/tools: expected an array of tools/);
  });
});
