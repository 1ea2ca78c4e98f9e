// A Responses API request read as the chat request the policy answers:
// `instructions` and `input` as messages (the recorder's own conversion, so
// the emulator and the recorder agree on what a conversation is), function
// tools as chat tools, `tool_choice` and `max_output_tokens` in chat's terms.
// What the policy cannot serve (built-in tools, a bad field) is a 400 naming
// the field, in the error shape of OpenAI's API.

import { responsesInputToMessages, responsesToolsToChat } from "../recorder/index.js";
import type { ChatCompletionCreateParams } from "../wire/index.js";
import { chatError } from "./errors.js";
import { MAX_TOKENS } from "./limits.js";

type Obj = Record<string, unknown>;
type Msg = Record<string, unknown>;
export type ChatBody = ChatCompletionCreateParams & Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function bad(param: string, expected: string, got: unknown): never {
  throw chatError(
    400,
    `${param}: expected ${expected}, got ${JSON.stringify(got) ?? String(got)}.`,
    "invalid_type",
    param,
  );
}

/** The fields of a Responses request the emulator reads, checked. */
export interface ResponsesRequest {
  body: Obj;
  model: string;
  instructions: string | undefined;
  stream: boolean;
  previousId: string | undefined;
  /** Whether the response may be continued later (`store`, default true). */
  store: boolean;
}

/** Checks the body's shape; a 400 naming the first bad field. */
export function readResponsesRequest(raw: unknown): ResponsesRequest {
  if (!isObj(raw)) bad("body", "a JSON object (a Responses request)", raw);
  const { model, input, instructions, stream, previous_response_id, store } = raw;
  if (typeof model !== "string" || model === "") bad("model", "a model name", model);
  if (input !== undefined && typeof input !== "string" && !Array.isArray(input))
    bad("input", "a string or an array of input items", input);
  if (instructions != null && typeof instructions !== "string")
    bad("instructions", "a string", instructions);
  if (stream != null && typeof stream !== "boolean") bad("stream", "a boolean", stream);
  if (previous_response_id != null && typeof previous_response_id !== "string")
    bad("previous_response_id", "a response id", previous_response_id);
  if (store != null && typeof store !== "boolean") bad("store", "a boolean", store);
  if (raw.conversation != null)
    throw chatError(
      400,
      "conversation: this server keeps no conversations; send the earlier items in input, or previous_response_id.",
      "unsupported_parameter",
      "conversation",
    );
  for (const field of ["max_output_tokens", "temperature", "top_p", "seed"] as const) {
    const v = raw[field];
    if (v != null && (typeof v !== "number" || !Number.isFinite(v))) bad(field, "a number", v);
  }
  const max = raw.max_output_tokens;
  if (typeof max === "number" && (!Number.isInteger(max) || max < 1 || max > MAX_TOKENS))
    bad("max_output_tokens", `an integer from 1 to ${MAX_TOKENS}`, max);
  checkTools(raw.tools);
  return {
    body: raw,
    model,
    instructions: instructions || undefined,
    stream: stream === true,
    previousId: previous_response_id ?? undefined,
    store: store !== false,
  };
}

/** Only function tools: the policy has no web search, files or code to run. */
function checkTools(tools: unknown): void {
  if (tools == null) return;
  if (!Array.isArray(tools)) bad("tools", "an array of tools", tools);
  tools.forEach((tool, i) => {
    if (!isObj(tool)) bad(`tools[${i}]`, "a tool object", tool);
    if (tool.type !== "function")
      throw chatError(
        400,
        `tools[${i}].type: this server offers function tools only (type "function"), got ${JSON.stringify(tool.type)}; built-in tools such as web search need OpenAI's own API.`,
        "unsupported_value",
        `tools[${i}].type`,
      );
    if (typeof tool.name !== "string" || tool.name === "")
      bad(`tools[${i}].name`, "a function name", tool.name);
  });
}

/** Responses `tool_choice` as chat's: a named function `{type, name}` becomes `{type, function: {name}}`. */
function chatToolChoice(choice: unknown): unknown {
  if (choice == null || typeof choice === "string") {
    if (choice != null && !["auto", "none", "required"].includes(choice))
      bad("tool_choice", '"auto", "none", "required" or a function', choice);
    return choice ?? undefined;
  }
  if (isObj(choice) && choice.type === "function" && typeof choice.name === "string")
    return { type: "function", function: { name: choice.name } };
  return bad("tool_choice", '"auto", "none", "required" or { type: "function", name }', choice);
}

/**
 * The chat request the policy answers: `prior` (the conversation a
 * `previous_response_id` continues, without its instructions), then this
 * request's instructions as the first message and its input after the prior.
 */
export function chatBodyOf(
  request: ResponsesRequest,
  prior: readonly Msg[] = [],
): {
  chat: ChatBody;
  /** This request's own messages (instructions first), as the conversation goes on. */
  messages: Msg[];
} {
  const { body } = request;
  const own = responsesInputToMessages({
    input: body.input,
    instructions: request.instructions,
  }).value;
  const lead = request.instructions ? 1 : 0;
  const messages = [...own.slice(0, lead), ...prior, ...own.slice(lead)];
  if (messages.length === 0)
    throw chatError(
      400,
      "input: the request holds nothing to answer; send input (a string or items), instructions or a previous_response_id.",
      "invalid_value",
      "input",
    );
  const tools = responsesToolsToChat(body.tools).value;
  const chat: ChatBody = {
    model: request.model,
    messages: messages as ChatBody["messages"],
    ...(tools ? { tools: tools as ChatBody["tools"] } : {}),
  };
  const choice = chatToolChoice(body.tool_choice);
  if (choice !== undefined) chat.tool_choice = choice as ChatBody["tool_choice"];
  if (typeof body.max_output_tokens === "number") chat.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === "number") chat.temperature = body.temperature;
  if (typeof body.top_p === "number") chat.top_p = body.top_p;
  // Not in OpenAI's API; the Agents SDK passes it through from providerData.
  if (typeof body.seed === "number") chat.seed = body.seed;
  return { chat, messages };
}
