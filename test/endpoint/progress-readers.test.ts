// What a streamed Responses or Messages answer holds so far, as the store's
// progress records it: text, reasoning and tool calls read from each API's
// own events.
import { describe, expect, it } from "vitest";
import { MessagesProgress, ResponsesProgress } from "../../src/endpoint/progress-readers.js";

describe("progress of streamed Responses and Messages answers", () => {
  it("reads Responses events: output text, reasoning summary, function calls with their arguments", () => {
    const r = new ResponsesProgress();
    for (const event of [
      { type: "response.created", response: { id: "resp_1" } },
      { type: "response.reasoning_summary_text.delta", delta: "Add them." },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { type: "function_call", call_id: "call_1", name: "add", arguments: "" },
      },
      { type: "response.function_call_arguments.delta", output_index: 1, delta: '{"a":' },
      { type: "response.function_call_arguments.delta", output_index: 1, delta: "2}" },
      { type: "response.output_text.delta", delta: "It is " },
      { type: "response.output_text.delta", delta: "5." },
    ])
      r.take(event);
    expect(r.partial()).toEqual({
      content: "It is 5.",
      reasoning: "Add them.",
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "add", arguments: '{"a":2}' } },
      ],
    });
  });

  it("reads Messages events: text and thinking deltas, tool_use blocks with their input JSON", () => {
    const m = new MessagesProgress();
    for (const event of [
      { type: "message_start", message: { id: "msg_1", content: [] } },
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "thinking_delta", thinking: "Sum." },
      },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Adding." } },
      {
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "toolu_1", name: "add", input: {} },
      },
      {
        type: "content_block_delta",
        index: 2,
        delta: { type: "input_json_delta", partial_json: '{"a":2' },
      },
      {
        type: "content_block_delta",
        index: 2,
        delta: { type: "input_json_delta", partial_json: "}" },
      },
      { type: "message_stop" },
    ])
      m.take(event);
    expect(m.partial()).toEqual({
      content: "Adding.",
      reasoning: "Sum.",
      tool_calls: [
        { id: "toolu_1", type: "function", function: { name: "add", arguments: '{"a":2}' } },
      ],
    });
  });
});
