// Bounds on the steps of a gather: a timeout per rollout and per hook, and
// the caller's signal. A step that overruns is not stopped (JavaScript cannot
// stop a promise); the gather stops waiting for it.
import { markError, TrajectoryRecorderError } from "../util/error-family.js";

/**
 * Thrown (as a rollout's failure, a hook's, or the gather's) when a step of a
 * gather ran past its timeout: `rolloutTimeout` for a rollout, `hookTimeout`
 * for `afterEach` or `sink.add`.
 *
 * @example
 * catch (e) { if (e instanceof GatherTimeoutError) console.error(e.step, e.timeout); }
 */
export class GatherTimeoutError extends TrajectoryRecorderError {
  static {
    markError(GatherTimeoutError, "GatherTimeoutError");
  }
  /** The class's name, `"GatherTimeoutError"` (what `error.name` reads). */
  override readonly name = "GatherTimeoutError";
  /** What overran, e.g. `afterEach of groups[3]`. */
  readonly step: string;
  /** The timeout it overran, in ms. */
  readonly timeout: number;

  constructor(step: string, timeout: number, option: string) {
    super(
      `${step} did not settle within ${timeout} ms (options.${option}); the gather stopped waiting for it.`,
    );
    this.step = step;
    this.timeout = timeout;
  }
}

/** `work`, or a rejection with {@link GatherTimeoutError} once `ms` pass first. */
export function withTimeout<T>(
  work: PromiseLike<T> | T,
  ms: number | undefined,
  step: () => string,
  option: string,
): Promise<T> {
  const promise = Promise.resolve(work);
  if (ms === undefined) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GatherTimeoutError(step(), ms, option)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** What a gather rejects with when its signal aborts: the signal's reason, as `fetch` does. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The gather was aborted.", "AbortError");
}

/** Resolves `work`, or rejects with the signal's reason as soon as it aborts. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  // Once aborted, how the rest ends is no one's concern.
  work.catch(() => {});
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}
