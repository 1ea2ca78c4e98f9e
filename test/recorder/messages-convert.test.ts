// Anthropic Messages in the chat shape the Training Service trains on: the
// system prompt, user and assistant content blocks, tool_use / tool_result
// pairs, thinking, and server tools (a call and its result inside one
// assistant message) as chat messages, with what chat cannot hold named.
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/recorder/index.js";
import {
  anthropicFinishReason,
  anthropicInputToMessages,
  anthropicOutputToMessages,
  anthropicToolChoiceToChat,
  anthropicToolsToChat,
} from "../../src/recorder/messages-convert.js";
import { transcripts } from "./messages-fixtures.js";

type Msg = Record<string, unknown>;

describe("anthropicInputToMessages", () => {
  it("puts the system prompt first, a string content as it is", () => {
    expect(
      anthropicInputToMessages({
        system: "Be brief.",
        messages: [{ role: "user", content: "Hi" }],
      }),
    ).toEqual({
      value: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
      dropped: [],
    });
  });

  it("joins system text blocks by a blank line and names a block that is not text", () => {
    const { value, dropped } = anthropicInputToMessages({
      system: [
        { type: "text", text: "You are a tutor." },
        { type: "text", text: "Answer in French.", cache_control: { type: "ephemeral" } },
        { type: "image", source: { type: "url", url: "https://x/y.png" } },
      ],
      messages: [],
    });
    expect(value).toEqual([{ role: "system", content: "You are a tutor.\n\nAnswer in French." }]);
    expect(dropped).toEqual(["image system block"]);
  });

  it("turns tool_use into tool_calls and tool_result into tool messages before the user's text", () => {
    const { value, dropped } = anthropicInputToMessages({
      messages: [
        { role: "user", content: "2+3?" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Adding." },
            { type: "tool_use", id: "toolu_1", name: "add", input: { a: 2, b: 3 } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "5" },
            { type: "text", text: "and double it" },
          ],
        },
      ],
    });
    expect(dropped).toEqual([]);
    expect(value).toEqual([
      { role: "user", content: "2+3?" },
      {
        role: "assistant",
        content: "Adding.",
        tool_calls: [
          {
            id: "toolu_1",
            type: "function",
            function: { name: "add", arguments: '{"a":2,"b":3}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "5" },
      { role: "user", content: [{ type: "text", text: "and double it" }] },
    ]);
  });

  it("keeps a tool_result's text blocks as one string, its images as parts", () => {
    const { value } = anthropicInputToMessages({
      messages: [
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "a",
              content: [
                { type: "text", text: "one " },
                { type: "text", text: "two" },
              ],
            },
            {
              type: "tool_result",
              tool_use_id: "b",
              is_error: true,
              content: [
                { type: "text", text: "shot:" },
                { type: "image", source: { type: "base64", media_type: "image/png", data: "AAA" } },
              ],
            },
          ],
        },
      ],
    });
    expect(value).toEqual([
      { role: "tool", tool_call_id: "a", content: "one two" },
      {
        role: "tool",
        tool_call_id: "b",
        content: [
          { type: "text", text: "shot:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAA" } },
        ],
      },
    ]);
  });

  it("keeps thinking in reasoning_content, as text in <think>, or drops it, as asked", () => {
    const messages = [
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Add them.", signature: "sig" },
          { type: "text", text: "5" },
        ],
      },
    ];
    expect(anthropicInputToMessages({ messages }).value).toEqual([
      { role: "assistant", content: "5", reasoning_content: "Add them." },
    ]);
    expect(anthropicInputToMessages({ messages }, { reasoning: "text" }).value).toEqual([
      { role: "assistant", content: "<think>Add them.</think>5" },
    ]);
    expect(anthropicInputToMessages({ messages }, { reasoning: "drop" })).toEqual({
      value: [{ role: "assistant", content: "5" }],
      dropped: [],
    });
  });

  it("names what chat cannot hold: documents, redacted thinking, a file image", () => {
    const { value, dropped } = anthropicInputToMessages({
      messages: [
        {
          role: "user",
          content: [
            { type: "document", source: { type: "text", media_type: "text/plain", data: "x" } },
            { type: "image", source: { type: "file", file_id: "file_1" } },
            { type: "text", text: "Summarise." },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "redacted_thinking", data: "opaque" },
            { type: "text", text: "Done." },
          ],
        },
      ],
    });
    expect(value).toEqual([
      { role: "user", content: [{ type: "text", text: "Summarise." }] },
      { role: "assistant", content: "Done." },
    ]);
    expect(dropped).toEqual(["document content block", "image content block", "redacted_thinking"]);
  });

  it("splits an assistant message where a server tool ran: call, tool message, the rest", () => {
    const { value, dropped } = anthropicInputToMessages({
      messages: [
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me look." },
            {
              type: "server_tool_use",
              id: "srvtoolu_1",
              name: "web_search",
              input: { query: "tides" },
            },
            {
              type: "web_search_tool_result",
              tool_use_id: "srvtoolu_1",
              content: [
                {
                  type: "web_search_result",
                  url: "https://t.example",
                  title: "Tides",
                  encrypted_content: "zzz",
                },
              ],
            },
            { type: "text", text: "High tide at 6." },
          ],
        },
      ],
    });
    expect(dropped).toEqual([]);
    expect(value).toEqual([
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [
          {
            id: "srvtoolu_1",
            type: "function",
            function: { name: "web_search", arguments: '{"query":"tides"}' },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "srvtoolu_1",
        content: '[{"type":"web_search_result","url":"https://t.example","title":"Tides"}]',
      },
      { role: "assistant", content: "High tide at 6." },
    ]);
  });

  it("leaves out a server call that never got its result, and says so", () => {
    const { value, dropped } = anthropicInputToMessages({
      messages: [
        {
          role: "assistant",
          content: [
            { type: "text", text: "Searching" },
            { type: "server_tool_use", id: "s1", name: "web_search", input: {} },
          ],
        },
      ],
    });
    expect(value).toEqual([{ role: "assistant", content: "Searching" }]);
    expect(dropped).toEqual(["web_search call without its result"]);
  });

  it("refuses what is not a request, naming the field", () => {
    expect(() => anthropicInputToMessages(null as never)).toThrow(InvalidArgumentError);
    expect(() => anthropicInputToMessages({ messages: "hi" })).toThrow(/body\.messages/);
    expect(() =>
      anthropicInputToMessages({ messages: [] }, { reasoning: "keep" as never }),
    ).toThrow(/options\.reasoning/);
  });
});

describe("anthropicOutputToMessages", () => {
  it("makes one assistant message of text, thinking and tool_use blocks", () => {
    expect(
      anthropicOutputToMessages([
        { type: "thinking", thinking: "Need the weather.", signature: "s" },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } },
      ]),
    ).toEqual({
      value: [
        {
          role: "assistant",
          content: "Checking.",
          reasoning_content: "Need the weather.",
          tool_calls: [
            {
              id: "toolu_1",
              type: "function",
              function: { name: "weather", arguments: '{"city":"Oslo"}' },
            },
          ],
        },
      ],
      dropped: [],
    });
  });

  it("gives an empty assistant message for empty content, and refuses a non-array", () => {
    expect(anthropicOutputToMessages([]).value).toEqual([{ role: "assistant", content: "" }]);
    expect(() => anthropicOutputToMessages("x")).toThrow(/content/);
  });
});

describe("anthropicToolsToChat, anthropicToolChoiceToChat, anthropicFinishReason", () => {
  it("turns custom tools into chat functions and Anthropic's tools into functions of their name", () => {
    expect(
      anthropicToolsToChat([
        { name: "add", description: "Adds", input_schema: { type: "object" }, strict: true },
        { type: "custom", name: "log", input_schema: { type: "object" } },
        { type: "web_search_20250305", name: "web_search", max_uses: 3 },
        { type: "mcp_toolset", mcp_server_name: "x" },
      ]),
    ).toEqual({
      value: [
        {
          type: "function",
          function: {
            name: "add",
            description: "Adds",
            parameters: { type: "object" },
            strict: true,
          },
        },
        { type: "function", function: { name: "log", parameters: { type: "object" } } },
        {
          type: "function",
          function: {
            name: "web_search",
            description: "Anthropic's built-in tool web_search_20250305",
            parameters: { type: "object" },
          },
        },
      ],
      dropped: ["mcp_toolset tool"],
    });
    expect(anthropicToolsToChat(undefined)).toEqual({ value: undefined, dropped: [] });
    expect(() => anthropicToolsToChat("add")).toThrow(/tools/);
  });

  it("maps tool_choice and stop_reason", () => {
    expect(anthropicToolChoiceToChat({ type: "auto" })).toEqual({ tool_choice: "auto" });
    expect(anthropicToolChoiceToChat({ type: "any", disable_parallel_tool_use: true })).toEqual({
      tool_choice: "required",
      parallel_tool_calls: false,
    });
    expect(anthropicToolChoiceToChat({ type: "tool", name: "add" })).toEqual({
      tool_choice: { type: "function", function: { name: "add" } },
    });
    expect(anthropicToolChoiceToChat({ type: "none" })).toEqual({ tool_choice: "none" });
    expect(anthropicToolChoiceToChat(undefined)).toEqual({});
    expect(anthropicFinishReason("tool_use", true)).toBe("tool_calls");
    expect(anthropicFinishReason("end_turn", false)).toBe("stop");
    expect(anthropicFinishReason("max_tokens", false)).toBe("length");
    expect(anthropicFinishReason("refusal", false)).toBe("content_filter");
  });
});

describe("transcript shapes from Anthropic's docs and SDK fixtures", () => {
  for (const t of transcripts)
    it(`${t.name}: every tool call kept and paired with its result`, () => {
      const { value, dropped } = anthropicInputToMessages(t.request);
      const out = anthropicOutputToMessages(t.response.content);
      const all = [...value, ...out.value] as Msg[];
      const calls = all.flatMap((m) => (m.tool_calls as { id: string }[] | undefined) ?? []);
      const results = all.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
      // Every tool_use and server_tool_use block of the transcript is a tool call.
      expect(calls.map((c) => c.id).sort()).toEqual([...t.toolUseIds].sort());
      // Every call but those the answer makes (whose results come next turn) has its result.
      expect(results.sort()).toEqual(t.toolUseIds.filter((id) => !t.openCalls.includes(id)).sort());
      expect([...dropped, ...out.dropped]).toEqual(t.dropped);
      // A tool message follows the assistant message (or tool messages) of its call.
      for (const [i, m] of all.entries())
        if (m.role === "tool") expect(["assistant", "tool"]).toContain(all[i - 1]?.role);
    });
});
