// What every recorded `create()` (chat completions, responses) shares: the
// SDK's APIPromise as the recorder builds on it, the rollout state behind a
// call, and the promise a refused body gets.
import type { ActiveRollout } from "./active-rollout.js";
import type { RolloutState } from "./rollout-state.js";

export type AnyFn = (...args: unknown[]) => unknown;

export type CallTracking = Pick<RolloutState, "traced" | "startCall" | "endCall" | "calls">;

export function isRolloutState(
  rollout: ActiveRollout | undefined,
): rollout is ActiveRollout & CallTracking {
  return typeof (rollout as Partial<CallTracking> | undefined)?.startCall === "function";
}

/** The parts of the SDK's `APIPromise` the recorder builds on (present from openai 4 to 7). */
export interface APIPromiseLike extends Promise<unknown> {
  parseResponse?: (...args: unknown[]) => unknown;
  _thenUnwrap?: (transform: (data: unknown, ...rest: unknown[]) => unknown) => APIPromiseLike;
  responsePromise?: Promise<unknown>;
  asResponse?: () => Promise<Response>;
}

/** Finds the session a call outside any rollout records into (from its request options), if any. */
export type SessionOf = (requestOptions: unknown) => ActiveRollout | undefined;

/**
 * What a recorded `create()` returns when the recorder refuses the body: the
 * SDK's own promise for a body whose serialization throws the recorder's
 * error, so that it rejects as the SDK rejects a body it cannot send (nothing
 * goes out) and is the APIPromise the SDK's helpers chain on (`parse()`,
 * `stream()` and `runTools()` call `_thenUnwrap`, `withResponse()`...).
 */
export function refusedCall(
  original: AnyFn,
  self: unknown,
  args: unknown[],
  error: unknown,
): unknown {
  const body = args[0] as Record<string, unknown>;
  const refused = {
    ...body,
    toJSON: () => {
      throw error;
    },
  };
  let promise: unknown;
  try {
    promise = original.apply(self, [refused, ...args.slice(1)]);
  } catch {
    return rejectedCall(error);
  }
  if (typeof (promise as APIPromiseLike | undefined)?.parseResponse === "function") return promise;
  // A custom client: whatever it made of the body, the caller gets the refusal.
  Promise.resolve(promise).catch(() => {});
  return rejectedCall(error);
}

/**
 * A promise that rejects with `error`, carrying the APIPromise methods callers
 * chain (`withResponse()`, `asResponse()`), which reject the same way.
 */
function rejectedCall(error: unknown): Promise<never> {
  const promise = Promise.reject(error);
  // Chaining a method handles this promise (the caller handles the one the
  // method returns), as chaining the SDK's lazy APIPromise does.
  const chained = () => {
    promise.catch(() => {});
    return Promise.reject(error);
  };
  for (const name of ["withResponse", "asResponse"])
    Object.defineProperty(promise, name, { value: chained, configurable: true });
  return promise;
}
