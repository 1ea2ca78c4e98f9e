// A Choice as openai-python's `Choice.model_dump(mode="json")` writes it, which
// is what ART puts on the wire: its fields in the pydantic models' order, every
// optional field present (null when unset), then any extra keys (vLLM's
// `token_ids`, `prompt_token_ids`, ...) in the order they came.

import { CompactLogprobs } from "../logprobs/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { copyJson } from "../util/copy-json.js";
import type { ChoiceLike } from "./message-types.js";

type Json = Record<string, unknown>;

/** Known keys first in `order` (with `fill` for the missing ones), then the rest as they came. */
function ordered(value: Json, order: readonly string[], fill: (key: string) => unknown): Json {
  const out: Json = {};
  for (const key of order) out[key] = key in value ? copyJson(value[key]) : fill(key);
  for (const key of Object.keys(value)) if (!(key in out)) out[key] = copyJson(value[key]);
  return out;
}

const CHOICE = ["finish_reason", "index", "logprobs", "message"] as const;
const MESSAGE = [
  "content",
  "refusal",
  "role",
  "annotations",
  "audio",
  "function_call",
  "tool_calls",
] as const;
const LOGPROBS = ["content", "refusal"] as const;
const TOKEN = ["token", "bytes", "logprob", "top_logprobs"] as const;
const TOP_TOKEN = ["token", "bytes", "logprob"] as const;
const TOOL_CALL = ["id", "function", "type"] as const;
const FUNCTION = ["arguments", "name"] as const;

const nullFill = () => null;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function tokenJson(token: unknown, order: readonly string[]): unknown {
  if (!isObject(token)) return copyJson(token);
  const top = token.top_logprobs;
  if (!Array.isArray(top))
    return ordered(token, order, (key) => (key === "top_logprobs" ? [] : null));
  const out = ordered({ ...token, top_logprobs: null }, order, nullFill);
  out.top_logprobs = top.map((t) => tokenJson(t, TOP_TOKEN));
  return out;
}

function logprobsJson(logprobs: unknown, forStringify: boolean): unknown {
  // Built fresh, in the wire's order: nothing to copy or reorder.
  if (logprobs instanceof CompactLogprobs) return logprobs.toJSON(forStringify ? "" : undefined);
  if (!isObject(logprobs)) return logprobs ?? null;
  const lists = { content: logprobs.content, refusal: logprobs.refusal };
  const out = ordered({ ...logprobs, content: null, refusal: null }, LOGPROBS, nullFill);
  for (const key of LOGPROBS) {
    const list = lists[key];
    if (Array.isArray(list)) out[key] = list.map((t) => tokenJson(t, TOKEN));
    else if (key in logprobs) out[key] = copyJson(list);
  }
  return out;
}

function toolCallJson(call: unknown): unknown {
  if (!isObject(call)) return copyJson(call);
  const out = ordered(call, TOOL_CALL, nullFill);
  if (isObject(call.function)) out.function = ordered(call.function, FUNCTION, nullFill);
  return out;
}

/**
 * The wire JSON of a recorded Choice, as ART dumps it: the same content in
 * openai-python's field order, with its optional fields present as `null`.
 *
 * @example
 * choiceToJson({ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant", content: "hi" } });
 * // { finish_reason: "stop", index: 0, logprobs: null,
 * //   message: { content: "hi", refusal: null, role: "assistant", annotations: null,
 * //              audio: null, function_call: null, tool_calls: null } }
 */
export function choiceToJson(choice: ChoiceLike): Json {
  if (!isObject(choice))
    throw new InvalidArgumentError(
      "choiceToJson(choice)",
      "choice",
      "a Choice (an object)",
      choice,
    );
  return choiceJson(choice, false);
}

/**
 * {@link choiceToJson}; `forStringify` when JSON.stringify asked (through a
 * `toJSON(key)`), so the output is read once and let go.
 */
export function choiceJson(choice: ChoiceLike, forStringify: boolean): Json {
  const raw = choice as unknown as Json;
  // The logprobs, most of a Choice, are built once, by logprobsJson, not
  // copied first and then replaced.
  const out = ordered({ ...raw, logprobs: null }, CHOICE, nullFill);
  out.logprobs = logprobsJson(raw.logprobs, forStringify);
  if (isObject(raw.message)) {
    const message = ordered(raw.message, MESSAGE, nullFill);
    if (Array.isArray(raw.message.tool_calls))
      message.tool_calls = raw.message.tool_calls.map(toolCallJson);
    out.message = message;
  }
  return out;
}
