// How long an answer may run and what ends it, read from a chat request as
// vLLM reads it: `max_completion_tokens` / `max_tokens` (default: the rest of
// the context), and vLLM's own `min_tokens`, `ignore_eos`, `stop_token_ids`
// and `include_stop_str_in_output`.
import { chatError } from "./errors.js";
import { V } from "./model.js";

/**
 * The policy's context length, prompt and completion together. Without
 * `max_tokens`, an answer may run to its end, as vLLM's default does
 * (`max_model_len` minus the prompt).
 */
export const CONTEXT_TOKENS = 4096;

export interface Ending {
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  stopTokenIds: number[];
  includeStopStr: boolean;
}

function bad(field: string, expected: string, got: unknown): never {
  throw chatError(400, `${field}: expected ${expected}, got ${JSON.stringify(got)}.`, null, field);
}

function flag(body: Record<string, unknown>, field: string): boolean {
  const value = body[field];
  if (value == null) return false;
  if (typeof value !== "boolean") bad(field, "a boolean", value);
  return value;
}

/** The request's length and stop settings; a 400 naming the field when one is malformed. */
export function endingOf(body: Record<string, unknown>, promptTokens: number): Ending {
  const asked = body.max_completion_tokens ?? body.max_tokens;
  const maxTokens = typeof asked === "number" ? asked : Math.max(1, CONTEXT_TOKENS - promptTokens);
  const min = body.min_tokens ?? 0;
  if (typeof min !== "number" || !Number.isInteger(min) || min < 0)
    bad("min_tokens", "a non-negative integer", min);
  if (min > maxTokens)
    throw chatError(
      400,
      `min_tokens must be at most max_tokens (${maxTokens}); got ${min}.`,
      null,
      "min_tokens",
    );
  const ids = body.stop_token_ids ?? [];
  if (!Array.isArray(ids) || !ids.every((id) => Number.isInteger(id)))
    bad("stop_token_ids", "an array of token ids", ids);
  return {
    maxTokens,
    minTokens: min,
    ignoreEos: flag(body, "ignore_eos"),
    // Ids outside the vocabulary can never be drawn: harmless, as in vLLM.
    stopTokenIds: (ids as number[]).filter((id) => id >= 0 && id < V),
    includeStopStr: flag(body, "include_stop_str_in_output"),
  };
}
