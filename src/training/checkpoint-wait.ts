// After `training_ended` the new checkpoint is not always listable yet (the
// contract only hopes the service committed it first), so `train` polls the
// checkpoint list until a step newer than the one before the job shows up.
import {
  abortableSleep,
  type BackoffOptions,
  isRetryableError,
  retryDelay,
} from "../client/index.js";
import { CheckpointTimeoutError } from "./errors.js";

export interface CheckpointWaitOptions {
  jobId: string;
  /** The latest step before the job; the wait ends at the first step above it. */
  stepBefore: number;
  timeoutMs: number;
  /** Wait between polls that find nothing new, as between event polls. */
  pollIntervalMs: number;
  /** Backoff after a failed poll, as after a failed event poll. */
  backoff?: BackoffOptions | undefined;
  signal?: AbortSignal | undefined;
}

/** Resolves with the first listed step above `stepBefore`; throws `CheckpointTimeoutError` past the deadline. */
export async function waitForCheckpoint(
  readStep: (signal?: AbortSignal) => Promise<number>,
  options: CheckpointWaitOptions,
): Promise<number> {
  const deadline = Date.now() + options.timeoutMs;
  let failures = 0;
  let lastError: unknown;
  for (;;) {
    let wait = options.pollIntervalMs;
    try {
      const step = await readStep(options.signal);
      if (step > options.stepBefore) return step;
      failures = 0;
      lastError = undefined;
    } catch (error) {
      // The signal's reason, also when the abort cut a poll short.
      if (options.signal?.aborted) throw options.signal.reason;
      if (!isRetryableError(error)) throw error;
      lastError = error;
      const headers = (error as { headers?: Headers }).headers;
      wait = retryDelay(failures, { ...options.backoff, headers });
      failures += 1;
    }
    if (Date.now() + wait > deadline) {
      throw new CheckpointTimeoutError(options.jobId, options.stepBefore, options.timeoutMs, {
        cause: lastError,
      });
    }
    await abortableSleep(wait, options.signal);
  }
}
