import { InvalidArgumentError } from "../util/index.js";

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
