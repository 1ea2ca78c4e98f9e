import { InvalidArgumentError } from "../util/index.js";
import type { ProgressRecord } from "./records.js";
import type { CallProgress } from "./types.js";

/** The checks a store's `put` and `append` share (the disk store's and the Redis one's). */
export function checkWrite(
  call: string,
  entry: { id: string; calls: number; status: "open" | "finished" },
): void {
  if (typeof entry?.id !== "string" || entry.id === "" || entry.id.length > 200)
    throw new InvalidArgumentError(call, "entry.id", "a string of 1 to 200 characters", entry?.id);
  if (!Number.isInteger(entry.calls) || entry.calls < 0)
    throw new InvalidArgumentError(call, "entry.calls", "an integer of 0 or more", entry.calls);
  if (entry.status !== "open" && entry.status !== "finished")
    throw new InvalidArgumentError(call, "entry.status", '"open" or "finished"', entry.status);
}

/**
 * The progress record both stores keep for `progressCall` (checked first:
 * `partial.content` must be text). Empty fields are left out, as a stream
 * that has sent only content has nothing else to keep.
 */
export function progressRecord(
  call: string,
  id: string,
  callNumber: number,
  partial: CallProgress,
): ProgressRecord {
  if (typeof partial?.content !== "string")
    throw new InvalidArgumentError(call, "partial.content", "a string", partial?.content);
  return {
    k: "progress",
    id,
    call: callNumber,
    at: Date.now(),
    partial: {
      content: partial.content,
      ...(partial.reasoning ? { reasoning: partial.reasoning } : {}),
      ...(partial.tool_calls?.length ? { tool_calls: partial.tool_calls } : {}),
    },
  };
}
