// Reading the Chat Completions JSON that AI SDK providers put on the wire.
import type { RecordedCompletion } from "../../recorder/index.js";

export type Json = Record<string, unknown>;

/**
 * The body as it travelled: providers hand back either the JSON string they
 * sent or the object they serialized (with `undefined` fields JSON drops).
 */
export function parseBody(body: unknown): Json | undefined {
  if (body == null) return undefined;
  try {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Json)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A Chat Completions request body, or undefined for any other API (Responses, Messages, ...). */
export function chatRequest(body: unknown): RecordedCompletion["request"] | undefined {
  const parsed = parseBody(body);
  return parsed && Array.isArray(parsed.messages)
    ? (parsed as RecordedCompletion["request"])
    : undefined;
}

/** True when `value` looks like a Chat Completions response or stream chunk. */
export function hasChoices(value: unknown): value is Json & { choices: unknown[] } {
  return !!value && typeof value === "object" && Array.isArray((value as Json).choices);
}
