// When to try a request again, and how long to wait first. Shared by the
// client's request core and the shipper.

import { InvalidArgumentError } from "../util/argument-error.js";
import { APIConnectionError, APIError, APIUserAbortError } from "./errors.js";

/** Options of {@link retryDelay}. */
export interface BackoffOptions {
  /** Delay before the first retry, in ms. Default 500. */
  initialDelayMs?: number;
  /** Upper bound of the computed delay, in ms. Default 8000. */
  maxDelayMs?: number;
  /** Largest server-requested delay (`Retry-After`) honoured, in ms. Default 60000. */
  maxRetryAfterMs?: number;
  /** Response headers of the failed attempt, read for `retry-after-ms` / `retry-after`. */
  headers?: Headers | undefined;
  /** Source of randomness in [0, 1), for tests. Default `Math.random`. */
  random?: () => number;
}

/**
 * How long to wait before retry number `attempt` (0 for the first retry): the
 * server's `retry-after-ms` or `retry-after` when present and reasonable, else
 * an exponential backoff with up to 25% jitter taken off.
 *
 * @example
 * await abortableSleep(retryDelay(attempt, { headers: err.headers }));
 */
export function retryDelay(attempt: number, options: BackoffOptions = {}): number {
  if (typeof attempt !== "number" || Number.isNaN(attempt))
    throw new InvalidArgumentError("retryDelay(attempt, options)", "attempt", "a number", attempt);
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError("retryDelay(attempt, options)", "options", "an object", options);
  const fromServer = serverRequestedDelay(options.headers);
  const maxRetryAfter = options.maxRetryAfterMs ?? 60_000;
  if (fromServer !== undefined && fromServer >= 0 && fromServer <= maxRetryAfter) {
    return fromServer;
  }
  const initial = options.initialDelayMs ?? 500;
  const max = options.maxDelayMs ?? 8_000;
  const base = Math.min(initial * 2 ** Math.max(0, attempt), max);
  const jitter = 1 - (options.random ?? Math.random)() * 0.25;
  return Math.round(base * jitter);
}

/** Milliseconds the server asked us to wait, if it said so. */
export function serverRequestedDelay(headers: Headers | undefined): number | undefined {
  if (typeof (headers as { get?: unknown } | undefined)?.get !== "function") return undefined;
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) return Number(ms);
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** True for the statuses worth another try: 408, 409, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  if (typeof status !== "number") return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Whether an error is worth another attempt: a connection failure or timeout,
 * or an answer with status 408, 409, 429 or 5xx (an `x-should-retry` header
 * from the server wins). Caller aborts and validation errors are not.
 * Works for this client's errors and for the `openai` SDK's, which carry `status`.
 *
 * @example
 * if (isRetryableError(err) && attempt < 5) await abortableSleep(retryDelay(attempt, { headers: err.headers }));
 */
export function isRetryableError(err: unknown): boolean {
  if (err instanceof APIUserAbortError) return false;
  if (err instanceof APIConnectionError) return true;
  if (typeof err !== "object" || err === null) return false;
  const headers = (err as { headers?: unknown }).headers;
  if (headers instanceof Headers) {
    const should = headers.get("x-should-retry");
    if (should === "true") return true;
    if (should === "false") return false;
  }
  const status = (err as { status?: unknown }).status;
  if (typeof status === "number") return isRetryableStatus(status);
  if (err instanceof APIError) return false;
  // The openai SDK's connection errors have no status.
  const name = (err as { name?: unknown }).name;
  return name === "APIConnectionError" || name === "APIConnectionTimeoutError";
}

/**
 * Waits `ms`, ending early with the signal's reason if it aborts.
 *
 * @example
 * await abortableSleep(250, controller.signal);
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal !== undefined && !(signal instanceof AbortSignal))
      return reject(
        new InvalidArgumentError("abortableSleep(ms, signal)", "signal", "an AbortSignal", signal),
      );
    if (typeof ms !== "number" || Number.isNaN(ms))
      return reject(new InvalidArgumentError("abortableSleep(ms, signal)", "ms", "a number", ms));
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
