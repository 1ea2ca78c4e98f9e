// Anthropic's Messages API in the chat shape a trajectory holds, as
// responses-convert.ts does for the Responses API: a request's `system` and
// `messages` become chat messages, its tools chat tools, and a response's
// content blocks the assistant turn. Server tools (web search, code
// execution...) run inside one assistant message; chat has no such thing, so
// their call and result become an assistant tool call and a tool message, and
// the assistant message goes on after them. Pure functions: what they cannot
// represent is returned in `dropped`, for the caller to count and log.

import { InvalidArgumentError } from "../util/argument-error.js";
import type { ChatConversion } from "./responses-convert.js";

type Block = Record<string, unknown>;
type Msg = Record<string, unknown>;

/**
 * What becomes of thinking blocks: `"field"` (the default) keeps their text in
 * the assistant message's `reasoning_content`, as the Responses conversion
 * does; `"text"` puts it before the message's text inside `<think>...</think>`
 * (for chat templates that read reasoning from the content); `"drop"` leaves
 * it out on purpose (not counted as dropped).
 *
 * @example
 * anthropicOutputToMessages(message.content, { reasoning: "text" });
 */
export type AnthropicReasoning = "field" | "text" | "drop";

/**
 * Options of the Messages conversions.
 *
 * @example
 * const options: AnthropicConversionOptions = { reasoning: "drop" };
 */
export interface AnthropicConversionOptions {
  /** What becomes of thinking blocks (default `"field"`: `reasoning_content`). */
  reasoning?: AnthropicReasoning;
}

const REASONING_FIELD = "reasoning_content";

function isBlock(x: unknown): x is Block {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function text(x: unknown): string {
  return typeof x === "string" ? x : "";
}

function kind(type: unknown): string {
  return typeof type === "string" && type !== "" ? type : "untyped block";
}

/** A block that calls a tool the API runs itself (`server_tool_use`, `mcp_tool_use`). */
function isServerCall(type: unknown): boolean {
  return type === "server_tool_use" || type === "mcp_tool_use";
}

/** A server tool's result block (`web_search_tool_result`, `mcp_tool_result`...), paired by `tool_use_id`. */
function isServerResult(block: Block): boolean {
  return (
    typeof block.type === "string" &&
    block.type.endsWith("tool_result") &&
    block.type !== "tool_result" &&
    typeof block.tool_use_id === "string"
  );
}

/** A value as JSON text, or the caller's error naming it (a cycle, a BigInt). */
function json(value: unknown, field: string, prepare = (v: unknown) => v): string {
  try {
    return JSON.stringify(prepare(value)) ?? "null";
  } catch {
    // A cycle, a BigInt, or nesting deeper than the stack.
    throw new InvalidArgumentError(
      "the Messages conversion",
      field,
      "a JSON value (no cycle, BigInt or nesting past the stack)",
      value,
    );
  }
}

/** A tool call's arguments as the JSON text chat carries. */
function argumentsOf(input: unknown): string {
  if (typeof input === "string") return input;
  return json(input ?? {}, "a tool_use block's input");
}

/** Copies a result without its `encrypted_*` fields, which are not text a model read. */
function readable(value: unknown, seen: Set<object> = new Set()): unknown {
  if (!isBlock(value) && !Array.isArray(value)) return value;
  // A cycle stays in the copy, for JSON.stringify to refuse it by name.
  if (seen.has(value)) return value;
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((v) => readable(v, seen));
  else {
    const copy: Block = {};
    for (const [key, v] of Object.entries(value))
      if (!key.startsWith("encrypted_")) copy[key] = readable(v, seen);
    out = copy;
  }
  seen.delete(value);
  return out;
}

/** A server tool result's content as a tool message's text. */
function serverResultText(block: Block): string {
  const content = block.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content) && content.every((c) => isBlock(c) && c.type === "text"))
    return content.map((c) => text((c as Block).text)).join("");
  return json(content ?? null, `a ${kind(block.type)} block's content`, readable);
}

/** An image block as a chat `image_url` part (a data URL for base64 sources), else undefined. */
function imagePart(block: Block): Msg | undefined {
  const source = block.source;
  if (!isBlock(source)) return undefined;
  if (source.type === "base64" && typeof source.data === "string")
    return {
      type: "image_url",
      image_url: { url: `data:${text(source.media_type)};base64,${source.data}` },
    };
  if (source.type === "url" && typeof source.url === "string")
    return { type: "image_url", image_url: { url: source.url } };
  return undefined;
}

/** A user-side content block as a chat part, or undefined (then dropped). */
function chatPart(block: Block): Msg | undefined {
  if (block.type === "text") return { type: "text", text: text(block.text) };
  if (block.type === "image") return imagePart(block);
  return undefined;
}

/** Content blocks as chat content: a string when they are all text, else parts. */
function chatContent(content: unknown, dropped: string[], what: string): string | Msg[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: Msg[] = [];
  for (const block of content) {
    const part = isBlock(block) ? chatPart(block) : undefined;
    if (part) parts.push(part);
    else dropped.push(`${isBlock(block) ? kind(block.type) : "unknown"} ${what}`);
  }
  return parts;
}

/** A `tool_result` block's content as a tool message's content: all-text as one string. */
function toolResultContent(block: Block, dropped: string[]): string | Msg[] {
  const content = chatContent(block.content, dropped, "block in a tool_result");
  if (typeof content === "string") return content;
  if (content.every((p) => p.type === "text")) return content.map((p) => text(p.text)).join("");
  return content;
}

/** An assistant message being built from content blocks, split where a server tool ran. */
class AssistantTurns {
  readonly out: Msg[] = [];
  #text: string[] = [];
  #reasoning: string[] = [];
  #calls: Msg[] = [];
  /** Server tool calls waiting for their result block, by id. */
  #pending = new Map<string, Msg>();

  constructor(
    private readonly mode: AnthropicReasoning,
    private readonly dropped: string[],
  ) {}

  add(block: unknown): void {
    if (!isBlock(block)) {
      this.dropped.push("unknown content block");
      return;
    }
    const type = block.type;
    if (type === "text") this.#text.push(text(block.text));
    else if (type === "thinking") {
      if (this.mode !== "drop" && text(block.thinking)) this.#reasoning.push(text(block.thinking));
    } else if (type === "tool_use") this.#calls.push(toolCall(block));
    else if (isServerCall(type)) this.#pending.set(text(block.id), toolCall(block));
    else if (isServerResult(block)) this.#serverResult(block);
    else this.dropped.push(kind(type));
  }

  /** A server tool's result: its call ends the assistant message, its result is a tool message. */
  #serverResult(block: Block): void {
    const id = text(block.tool_use_id);
    const call = this.#pending.get(id);
    if (!call) {
      this.dropped.push(`${kind(block.type)} without its call`);
      return;
    }
    this.#pending.delete(id);
    this.#calls.push(call);
    this.close();
    this.out.push({ role: "tool", tool_call_id: id, content: serverResultText(block) });
  }

  /** Ends the current assistant message (if it holds anything). */
  close(): void {
    if (!this.#text.length && !this.#reasoning.length && !this.#calls.length) return;
    let content = this.#text.join("");
    const message: Msg = { role: "assistant", content };
    if (this.#reasoning.length) {
      const reasoning = this.#reasoning.join("\n\n");
      if (this.mode === "text") message.content = content = `<think>${reasoning}</think>${content}`;
      else message[REASONING_FIELD] = reasoning;
    }
    if (this.#calls.length) message.tool_calls = this.#calls;
    this.out.push(message);
    this.#text = [];
    this.#reasoning = [];
    this.#calls = [];
  }

  /** Closes the last message; a server call that never got its result is left out. */
  finish(): Msg[] {
    for (const call of this.#pending.values())
      this.dropped.push(`${text((call.function as Msg).name) || "server"} call without its result`);
    this.#pending.clear();
    this.close();
    return this.out;
  }
}

function toolCall(block: Block): Msg {
  return {
    id: text(block.id),
    type: "function",
    function: { name: text(block.name), arguments: argumentsOf(block.input) },
  };
}

function modeOf(options: AnthropicConversionOptions | undefined, call: string): AnthropicReasoning {
  const mode = options?.reasoning ?? "field";
  if (mode !== "field" && mode !== "text" && mode !== "drop")
    throw new InvalidArgumentError(call, "options.reasoning", '"field", "text" or "drop"', mode);
  return mode;
}

/** A user message: its `tool_result` blocks first as tool messages, then the rest as one user message. */
function userMessages(content: unknown, dropped: string[]): Msg[] {
  if (typeof content === "string") return [{ role: "user", content }];
  if (!Array.isArray(content)) return [{ role: "user", content: "" }];
  const out: Msg[] = [];
  const rest: unknown[] = [];
  for (const block of content) {
    if (isBlock(block) && block.type === "tool_result")
      out.push({
        role: "tool",
        tool_call_id: text(block.tool_use_id),
        content: toolResultContent(block, dropped),
      });
    else rest.push(block);
  }
  if (rest.length || !out.length)
    out.push({ role: "user", content: chatContent(rest, dropped, "content block") });
  return out;
}

/** The system prompt as text: a string, or its text blocks joined by a blank line. */
function systemText(system: unknown, dropped: string[]): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  const texts: string[] = [];
  for (const block of system)
    if (isBlock(block) && block.type === "text") texts.push(text(block.text));
    else dropped.push(`${isBlock(block) ? kind(block.type) : "unknown"} system block`);
  return texts.filter((t) => t !== "").join("\n\n");
}

/**
 * An Anthropic Messages request's `system` and `messages` as chat messages:
 * the system prompt first as a system message (text blocks joined by a blank
 * line), each user message in order with its `tool_result` blocks as tool
 * messages (paired by `tool_use_id`) before its other content (text and images
 * as chat parts), each assistant message with its text joined, its `tool_use`
 * blocks as `tool_calls` (the input as JSON text), its thinking as `options.reasoning`
 * says; a server tool's call and result (`server_tool_use` then
 * `web_search_tool_result`...) become a tool call ending the assistant message and a
 * tool message, the assistant message going on after. Blocks chat cannot hold
 * (documents, redacted thinking, a server call without its result...) are left out
 * and named in `dropped`.
 *
 * @example
 * anthropicInputToMessages({ system: "Be brief.", messages: [{ role: "user", content: "Hi" }] }).value;
 * // [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }]
 */
export function anthropicInputToMessages(
  body: { system?: unknown; messages?: unknown },
  options?: AnthropicConversionOptions,
): ChatConversion<Record<string, unknown>[]> {
  const call = "anthropicInputToMessages(body)";
  if (!isBlock(body))
    throw new InvalidArgumentError(call, "body", "a Messages request (an object)", body);
  if (body.messages !== undefined && !Array.isArray(body.messages))
    throw new InvalidArgumentError(call, "body.messages", "an array of messages", body.messages);
  const mode = modeOf(options, call);
  const messages: Msg[] = [];
  const dropped: string[] = [];
  const system = systemText(body.system, dropped);
  if (system) messages.push({ role: "system", content: system });
  for (const message of body.messages ?? []) {
    if (!isBlock(message)) dropped.push("message");
    else if (message.role === "user") messages.push(...userMessages(message.content, dropped));
    else if (message.role === "assistant")
      messages.push(...anthropicTurn(message.content, mode, dropped));
    else dropped.push(`${text(message.role) || "unknown"} role message`);
  }
  return { value: messages, dropped };
}

function anthropicTurn(content: unknown, mode: AnthropicReasoning, dropped: string[]): Msg[] {
  if (typeof content === "string") return [{ role: "assistant", content }];
  const turns = new AssistantTurns(mode, dropped);
  if (Array.isArray(content)) for (const block of content) turns.add(block);
  const out = turns.finish();
  return out.length ? out : [{ role: "assistant", content: "" }];
}

/**
 * A Messages response's `content` blocks as chat messages: usually one
 * assistant message (text joined, `tool_use` blocks as `tool_calls`, thinking
 * as `options.reasoning` says); when a server tool ran (web search, code
 * execution, MCP), its call ends an assistant message and its result is a tool
 * message, so the answer is several messages, the last an assistant one. The
 * same rule as {@link anthropicInputToMessages}, so the content sent back in the
 * next request continues the same history.
 *
 * @example
 * anthropicOutputToMessages([{ type: "tool_use", id: "toolu_1", name: "add", input: { a: 2 } }]).value;
 * // [{ role: "assistant", content: "", tool_calls: [{ id: "toolu_1", type: "function",
 * //    function: { name: "add", arguments: '{"a":2}' } }] }]
 */
export function anthropicOutputToMessages(
  content: unknown,
  options?: AnthropicConversionOptions,
): ChatConversion<Record<string, unknown>[]> {
  const call = "anthropicOutputToMessages(content)";
  if (!Array.isArray(content))
    throw new InvalidArgumentError(
      call,
      "content",
      "a message's content blocks (an array)",
      content,
    );
  const dropped: string[] = [];
  return { value: anthropicTurn(content, modeOf(options, call), dropped), dropped };
}

/**
 * A Messages request's tools as chat tools: a custom tool (`{ name,
 * description, input_schema }`) as `{ type: "function", function: { name,
 * description, parameters: input_schema, strict } }`; a tool Anthropic defines
 * (`web_search_20250305`, `bash_20250124`, `text_editor_...`) as a function of
 * its name, its parameters an open object, its `type` in the description, so the
 * calls of it in the history name a tool the list has. MCP toolsets and
 * entries without a name are left out, named in `dropped`. `undefined` when no tool is left.
 *
 * @example
 * anthropicToolsToChat([{ name: "add", input_schema: { type: "object" } }]).value;
 * // [{ type: "function", function: { name: "add", parameters: { type: "object" } } }]
 */
export function anthropicToolsToChat(
  tools: unknown,
): ChatConversion<Record<string, unknown>[] | undefined> {
  if (tools !== undefined && tools !== null && !Array.isArray(tools))
    throw new InvalidArgumentError(
      "anthropicToolsToChat(tools)",
      "tools",
      "an array of tools",
      tools,
    );
  if (!Array.isArray(tools) || tools.length === 0) return { value: undefined, dropped: [] };
  const value: Msg[] = [];
  const dropped: string[] = [];
  for (const tool of tools) {
    if (!isBlock(tool) || typeof tool.name !== "string" || tool.name === "") {
      dropped.push(`${isBlock(tool) ? kind(tool.type) : "unknown"} tool`);
      continue;
    }
    const custom = tool.type === undefined || tool.type === null || tool.type === "custom";
    const fn: Msg = { name: tool.name };
    if (custom) {
      if (tool.description != null) fn.description = tool.description;
      if (tool.input_schema != null) fn.parameters = tool.input_schema;
      if (tool.strict != null) fn.strict = tool.strict;
    } else {
      fn.description = `Anthropic's built-in tool ${String(tool.type)}`;
      fn.parameters = { type: "object" };
    }
    value.push({ type: "function", function: fn });
  }
  return { value: value.length ? value : undefined, dropped };
}

/**
 * A Messages `tool_choice` in chat's form: `auto` as `"auto"`, `any` as
 * `"required"`, `none` as `"none"`, `{ type: "tool", name }` as a named
 * function; `disable_parallel_tool_use` as `parallel_tool_calls: false`.
 * Undefined fields when there is no choice.
 *
 * @example
 * anthropicToolChoiceToChat({ type: "any", disable_parallel_tool_use: true });
 * // { tool_choice: "required", parallel_tool_calls: false }
 */
export function anthropicToolChoiceToChat(choice: unknown): {
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
} {
  if (!isBlock(choice)) return {};
  const out: { tool_choice?: unknown; parallel_tool_calls?: boolean } = {};
  if (choice.type === "auto") out.tool_choice = "auto";
  else if (choice.type === "any") out.tool_choice = "required";
  else if (choice.type === "none") out.tool_choice = "none";
  else if (choice.type === "tool" && typeof choice.name === "string")
    out.tool_choice = { type: "function", function: { name: choice.name } };
  if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return out;
}

/**
 * A Messages `stop_reason` as a chat `finish_reason`: `"tool_calls"` when the
 * turn calls a tool, `"length"` for `max_tokens` (or a full context window),
 * `"content_filter"` for `refusal`, else `"stop"`.
 *
 * @example
 * anthropicFinishReason("max_tokens", false); // "length"
 */
export function anthropicFinishReason(stopReason: unknown, hasToolCalls: boolean): string {
  if (hasToolCalls || stopReason === "tool_use") return hasToolCalls ? "tool_calls" : "stop";
  if (stopReason === "max_tokens" || stopReason === "model_context_window_exceeded")
    return "length";
  if (stopReason === "refusal") return "content_filter";
  return "stop";
}
