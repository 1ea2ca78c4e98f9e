// The Responses API in the chat shape a trajectory holds: the Training Service
// trains chat-format conversations, so a Responses request's `instructions`
// and `input` items become chat messages, its function tools chat tools, and
// a response's `output` items one assistant turn. Pure functions: what they
// cannot represent is returned in `dropped`, for the caller to count and log.

import { InvalidArgumentError } from "../util/argument-error.js";

type Item = Record<string, unknown>;
type Msg = Record<string, unknown>;

/** A chat tool call, as an assistant message carries it. */
interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * What a conversion to the chat shape made, and what it left out (one entry per
 * item, by its kind): a caller logs and counts `dropped`, as the wrapped client does.
 *
 * @example
 * const { value: messages, dropped } = responsesInputToMessages(body);
 * if (dropped.length) rollout.log(`left out: ${dropped.join(", ")}`);
 */
export interface ChatConversion<T> {
  /** The chat-shaped result. */
  value: T;
  /** The kinds of the items left out (`web_search_call`, `input_file`...), once per item. */
  dropped: string[];
}

/** The field a Responses reasoning summary is kept in on the chat assistant message. */
const REASONING_FIELD = "reasoning_content";

/** A string field as text: anything else (a number, an object, a symbol) is none. */
function text(x: unknown): string {
  return typeof x === "string" ? x : "";
}

/** An item's kind for `dropped`: its `type` when that is a string. */
function kind(type: unknown): string {
  return typeof type === "string" && type !== "" ? type : "untyped item";
}

function isItem(x: unknown): x is Item {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** The text of a Responses reasoning item: its summary, else its raw reasoning text. */
function reasoningText(item: Item): string {
  const pick = (parts: unknown) =>
    Array.isArray(parts)
      ? parts
          .filter(isItem)
          .map((p) => (typeof p.text === "string" ? p.text : ""))
          .filter((t) => t !== "")
      : [];
  const summary = pick(item.summary);
  return (summary.length ? summary : pick(item.content)).join("\n\n");
}

/** An assistant turn being built from consecutive assistant-side items. */
class AssistantTurn {
  text: string[] = [];
  refusal: string[] = [];
  toolCalls: ToolCall[] = [];
  reasoning: string[] = [];

  get empty(): boolean {
    return (
      !this.text.length && !this.refusal.length && !this.toolCalls.length && !this.reasoning.length
    );
  }

  /** Adds an assistant-side item; false when it is not one this turn can hold. */
  add(item: Item, dropped: string[]): boolean {
    const type = item.type;
    if (type === "function_call") {
      this.toolCalls.push({
        id: text(item.call_id) || text(item.id),
        type: "function",
        function: {
          name: text(item.name),
          arguments: typeof item.arguments === "string" ? item.arguments : "",
        },
      });
      return true;
    }
    if (type === "reasoning") {
      const text = reasoningText(item);
      if (text) this.reasoning.push(text);
      return true;
    }
    if ((type === "message" || type === undefined) && item.role === "assistant") {
      this.#addContent(item.content, dropped);
      return true;
    }
    return false;
  }

  #addContent(content: unknown, dropped: string[]): void {
    if (typeof content === "string") {
      if (content) this.text.push(content);
      return;
    }
    if (!Array.isArray(content)) return;
    for (const part of content) {
      if (!isItem(part)) continue;
      if (
        (part.type === "output_text" || part.type === "input_text") &&
        typeof part.text === "string"
      )
        this.text.push(part.text);
      else if (part.type === "refusal" && typeof part.refusal === "string")
        this.refusal.push(part.refusal);
      else dropped.push(`${kind(part.type)} content part`);
    }
  }

  /** The chat assistant message: text joined, tool calls in order, reasoning in its own field. */
  message(): Msg {
    const message: Msg = { role: "assistant", content: this.text.join("") };
    if (this.refusal.length) message.refusal = this.refusal.join("");
    if (this.toolCalls.length) message.tool_calls = this.toolCalls;
    if (this.reasoning.length) message[REASONING_FIELD] = this.reasoning.join("\n\n");
    return message;
  }
}

/** A Responses input content part as a chat content part, or undefined (then dropped). */
function chatPart(part: Item): Msg | undefined {
  if (part.type === "input_text" || part.type === "output_text")
    return { type: "text", text: text(part.text) };
  if (part.type === "input_image" && typeof part.image_url === "string")
    return {
      type: "image_url",
      image_url: part.detail
        ? { url: part.image_url, detail: part.detail }
        : { url: part.image_url },
    };
  return undefined;
}

/** A message's content: a string as it came, else its parts in chat form. */
function chatContent(content: unknown, dropped: string[]): string | Msg[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: Msg[] = [];
  for (const part of content) {
    const chat = isItem(part) ? chatPart(part) : undefined;
    if (chat) parts.push(chat);
    else dropped.push(`${isItem(part) ? kind(part.type) : "unknown"} content part`);
  }
  return parts;
}

/** A function call's output as a tool message's content. */
function toolContent(output: unknown, dropped: string[]): string | Msg[] {
  if (typeof output === "string") return output;
  return chatContent(output, dropped);
}

const ROLES: Record<string, string> = {
  user: "user",
  system: "system",
  // Chat templates of the open models trained here know `system`, not `developer`.
  developer: "system",
};

/**
 * A Responses request's `instructions` and `input` as chat messages:
 * instructions first as a system message, then each input message in its
 * role (`developer` as `system`), consecutive assistant-side items (assistant
 * messages, `function_call`s, `reasoning`) merged into one assistant message
 * (text, `tool_calls` by `call_id`, reasoning in `reasoning_content`), and
 * each `function_call_output` a tool message. Items chat cannot hold (built-in
 * tool calls, item references, files) are left out and named in `dropped`.
 *
 * @example
 * responsesInputToMessages({ instructions: "Be brief.", input: "Hi" }).value;
 * // [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }]
 */
export function responsesInputToMessages(body: {
  instructions?: unknown;
  input?: unknown;
}): ChatConversion<Record<string, unknown>[]> {
  const call = "responsesInputToMessages(body)";
  if (!isItem(body))
    throw new InvalidArgumentError(call, "body", "a Responses request (an object)", body);
  const input = body.input;
  if (input !== undefined && typeof input !== "string" && !Array.isArray(input))
    throw new InvalidArgumentError(call, "body.input", "a string or an array of items", input);
  const messages: Msg[] = [];
  const dropped: string[] = [];
  if (typeof body.instructions === "string" && body.instructions)
    messages.push({ role: "system", content: body.instructions });
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
    return { value: messages, dropped };
  }
  let turn = new AssistantTurn();
  const close = () => {
    if (!turn.empty) messages.push(turn.message());
    turn = new AssistantTurn();
  };
  for (const item of input ?? []) {
    if (!isItem(item)) {
      dropped.push("input item");
      continue;
    }
    if (turn.add(item, dropped)) continue;
    close();
    const role = typeof item.role === "string" ? ROLES[item.role] : undefined;
    if (role && (item.type === "message" || item.type === undefined))
      messages.push({ role, content: chatContent(item.content, dropped) });
    else if (item.type === "function_call_output")
      messages.push({
        role: "tool",
        tool_call_id: text(item.call_id),
        content: toolContent(item.output, dropped),
      });
    else dropped.push(kind(item.type));
  }
  close();
  return { value: messages, dropped };
}

/**
 * A response's `output` items as one chat assistant message: the message
 * text (refusals in `refusal`), each `function_call` a tool call (its
 * `call_id` the id), the reasoning summary in `reasoning_content`. Built-in
 * tool calls (web search, code interpreter...) are left out, named in `dropped`.
 *
 * @example
 * responsesOutputToMessage([{ type: "function_call", call_id: "c1", name: "add", arguments: "{}" }]).value;
 * // { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: {...} }] }
 */
export function responsesOutputToMessage(output: unknown): ChatConversion<Record<string, unknown>> {
  if (!Array.isArray(output))
    throw new InvalidArgumentError(
      "responsesOutputToMessage(output)",
      "output",
      "a response's output items (an array)",
      output,
    );
  const turn = new AssistantTurn();
  const dropped: string[] = [];
  for (const item of output) {
    if (!isItem(item)) dropped.push("output item");
    else if (!turn.add(item, dropped)) dropped.push(kind(item.type));
  }
  return { value: turn.message(), dropped };
}

/**
 * A Responses request's tools as chat tools: each function tool
 * (`{ type: "function", name, parameters }`) as `{ type: "function",
 * function: { name, description, parameters, strict } }`; built-in tools
 * (web search, file search, MCP...) are left out, named in `dropped`.
 * `undefined` when the request offers no function tools.
 *
 * @example
 * responsesToolsToChat([{ type: "function", name: "add", parameters: {} }]).value;
 * // [{ type: "function", function: { name: "add", parameters: {} } }]
 */
export function responsesToolsToChat(
  tools: unknown,
): ChatConversion<Record<string, unknown>[] | undefined> {
  if (tools !== undefined && tools !== null && !Array.isArray(tools))
    throw new InvalidArgumentError(
      "responsesToolsToChat(tools)",
      "tools",
      "an array of tools",
      tools,
    );
  if (!Array.isArray(tools) || tools.length === 0) return { value: undefined, dropped: [] };
  const value: Msg[] = [];
  const dropped: string[] = [];
  for (const tool of tools) {
    if (!isItem(tool) || tool.type !== "function" || typeof tool.name !== "string") {
      dropped.push(`${isItem(tool) ? kind(tool.type) : "unknown"} tool`);
      continue;
    }
    const fn: Msg = { name: tool.name };
    if (tool.description != null) fn.description = tool.description;
    if (tool.parameters != null) fn.parameters = tool.parameters;
    if (tool.strict != null) fn.strict = tool.strict;
    value.push({ type: "function", function: fn });
  }
  return { value: value.length ? value : undefined, dropped };
}
