// A trajectory's `start_time` as read from wire JSON: ART never dumps it, but
// JSON that carries it (written by Python's isoformat) keeps it.
import { TrajectoryValidationError } from "./errors.js";

// Python's isoformat may carry microseconds and no zone (naive local time);
// JavaScript's Date wants at most milliseconds.
export function parsePythonDatetime(value: string): Date | undefined {
  const date = new Date(value.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Throws TrajectoryValidationError at `start_time` when `value` is not a date and time. */
export function checkStartTime(value: string): void {
  if (parsePythonDatetime(value)) return;
  throw new TrajectoryValidationError("trajectory", [
    {
      code: "custom",
      path: ["start_time"],
      message: `expected a date and time as ISO 8601 (as Python's isoformat writes it), received ${JSON.stringify(value.slice(0, 40))}`,
      input: value,
    },
  ]);
}
