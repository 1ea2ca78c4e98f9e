// The checks of what a recorder and its rollouts are given, and the abort a
// rollout's signal and timeout make: plumbing of recorder.ts, kept apart.
import { LINEAGE_MODES, type LineageMode, type Trajectory } from "../trajectory/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { RolloutAbortedError } from "./errors.js";
import type { SessionOptions } from "./sessions.js";

export function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    isObjectLike(value) &&
    typeof (value as { aborted?: unknown }).aborted === "boolean" &&
    typeof (value as { addEventListener?: unknown }).addEventListener === "function"
  );
}

/** The signal of rollouts given neither a signal nor a timeout: it never aborts. */
const NEVER = new AbortController().signal;

/** The signal a rollout ends on (its own, its timeout's, or both), and the error it then rejects with. */
export function rolloutAbort(signal: AbortSignal | undefined, timeout: number | undefined) {
  if (signal === undefined && timeout === undefined)
    return {
      signal: NEVER,
      watched: false,
      error: () => undefined as never,
      rejection: () => undefined as never,
      dispose: () => {},
    };
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) controller.abort(signal.reason);
  const timer =
    timeout === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`timed out after ${timeout} ms`, "TimeoutError"));
        }, timeout);
  const error = (trajectory: Trajectory) => {
    const why = timedOut
      ? `after its timeout of ${timeout} ms`
      : `by its signal${signal?.reason instanceof Error ? ` (${signal.reason.message})` : ""}`;
    const e = new RolloutAbortedError(trajectory, timedOut, why, controller.signal.reason);
    trajectory.log(`rollout aborted ${why}: what it recorded until then is kept`);
    return e;
  };
  return {
    signal: controller.signal,
    watched: true,
    error,
    rejection: (trajectory: Trajectory) =>
      new Promise<never>((_, reject) => {
        if (controller.signal.aborted) reject(error(trajectory));
        else
          controller.signal.addEventListener("abort", () => reject(error(trajectory)), {
            once: true,
          });
      }),
    dispose: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

export function checkLineageMode(call: string, field: string, value: unknown): void {
  if (value !== undefined && !LINEAGE_MODES.includes(value as LineageMode))
    throw new InvalidArgumentError(call, field, '"tokens", "text" or "off"', value);
}

export function namesPolicy(names: readonly string[]): (model: string) => boolean {
  const set = new Set(names);
  return (model) => set.has(model);
}

export function checkSessionOptions(call: string, sessions: unknown): void {
  if (sessions === undefined) return;
  if (!isObjectLike(sessions))
    throw new InvalidArgumentError(call, "options.sessions", "an object", sessions);
  const s = sessions as SessionOptions;
  for (const name of ["idleTimeoutMs", "maxOpen"] as const) {
    const v = s[name];
    if (v !== undefined && (typeof v !== "number" || !Number.isInteger(v) || v < 1))
      throw new InvalidArgumentError(
        call,
        `options.sessions.${name}`,
        "a whole number of at least 1",
        v,
      );
  }
  if (s.onEnd !== undefined && typeof s.onEnd !== "function")
    throw new InvalidArgumentError(call, "options.sessions.onEnd", "a function", s.onEnd);
}
