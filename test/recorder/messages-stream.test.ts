// A streamed Messages answer rebuilt from its events, as Anthropic's docs show
// them: thinking, text, a server tool's call (its input in JSON pieces) and
// result, a client tool call; a stream cut mid-block keeps what it had.
import { describe, expect, it } from "vitest";
import { anthropicOutputToMessages } from "../../src/recorder/messages-convert.js";
import { MessagesStreamAccumulator } from "../../src/recorder/messages-stream.js";

const start = {
  type: "message_start",
  message: { id: "msg_1", model: "m", content: [], usage: { input_tokens: 9, output_tokens: 1 } },
};
const events = [
  start,
  {
    type: "content_block_start",
    index: 0,
    content_block: { type: "thinking", thinking: "", signature: "" },
  },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Search " } },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "first." } },
  { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
  { type: "content_block_stop", index: 0 },
  {
    type: "content_block_start",
    index: 1,
    content_block: { type: "server_tool_use", id: "srv_1", name: "web_search", input: {} },
  },
  {
    type: "content_block_delta",
    index: 1,
    delta: { type: "input_json_delta", partial_json: '{"query":' },
  },
  {
    type: "content_block_delta",
    index: 1,
    delta: { type: "input_json_delta", partial_json: '"tides"}' },
  },
  { type: "content_block_stop", index: 1 },
  {
    type: "content_block_start",
    index: 2,
    content_block: {
      type: "web_search_tool_result",
      tool_use_id: "srv_1",
      content: [{ type: "web_search_result", url: "https://t.example", title: "T" }],
    },
  },
  { type: "content_block_stop", index: 2 },
  { type: "content_block_start", index: 3, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "High " } },
  { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "tide at 6." } },
  { type: "content_block_stop", index: 3 },
  {
    type: "content_block_start",
    index: 4,
    content_block: { type: "tool_use", id: "toolu_1", name: "remind", input: {} },
  },
  {
    type: "content_block_delta",
    index: 4,
    delta: { type: "input_json_delta", partial_json: '{"at":"6"}' },
  },
  { type: "content_block_stop", index: 4 },
  {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 40 },
  },
  { type: "message_stop" },
];

describe("MessagesStreamAccumulator", () => {
  it("rebuilds the message: blocks, tool inputs as JSON text, stop reason and usage", () => {
    const acc = new MessagesStreamAccumulator();
    for (const e of events) acc.add(e);
    expect(acc.finished()).toBe(true);
    expect(acc.message).toMatchObject({
      id: "msg_1",
      stop_reason: "tool_use",
      usage: { input_tokens: 9, output_tokens: 40 },
    });
    const { value, dropped } = anthropicOutputToMessages(acc.content());
    expect(dropped).toEqual([]);
    expect(value).toEqual([
      {
        role: "assistant",
        content: "",
        reasoning_content: "Search first.",
        tool_calls: [
          {
            id: "srv_1",
            type: "function",
            function: { name: "web_search", arguments: '{"query":"tides"}' },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "srv_1",
        content: '[{"type":"web_search_result","url":"https://t.example","title":"T"}]',
      },
      {
        role: "assistant",
        content: "High tide at 6.",
        tool_calls: [
          {
            id: "toolu_1",
            type: "function",
            function: { name: "remind", arguments: '{"at":"6"}' },
          },
        ],
      },
    ]);
  });

  it("keeps what a cut stream had, unfinished", () => {
    const acc = new MessagesStreamAccumulator();
    for (const e of events.slice(0, 14)) acc.add(e);
    expect(acc.finished()).toBe(false);
    const [, , last] = anthropicOutputToMessages(acc.content()).value;
    expect(last).toEqual({ role: "assistant", content: "High " });
  });
});
