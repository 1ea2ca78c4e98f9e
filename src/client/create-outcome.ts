// The one rule for "may a failed create request have reached the service?",
// used wherever a retry could create a second job: the shipper's trainer and
// the BullMQ coordinator. Errors are read by shape (status, method, cause
// codes), not by class, so that an error from another copy of the client
// (another entry point's CommonJS build) is read the same way.

/**
 * What a failed create request (e.g. `model.train`, which lists checkpoints
 * with GETs, then POSTs the job) means for trying again:
 *
 * | outcome     | when                                                                                   | created? |
 * | ----------- | -------------------------------------------------------------------------------------- | -------- |
 * | `retry`     | a GET failed (the POST was never sent); no connection (`ECONNREFUSED`, `ENOTFOUND`, `EAI_AGAIN`); 429 or 503 | certainly not; trying again may work |
 * | `refused`   | another 4xx except 408; an error that is not a request's (nothing left the process)     | certainly not; trying again fails the same way |
 * | `uncertain` | a 5xx other than 503, a 408, a timeout, a connection lost after sending                 | maybe: look before creating again |
 *
 * @example
 * if (createOutcome(error) === "retry") await sleep(retryDelay(n));
 */
export type CreateOutcome = "retry" | "refused" | "uncertain";

/** Reads a failed create request's error by the table of {@link CreateOutcome}. */
export function createOutcome(error: unknown): CreateOutcome {
  const e = error as { status?: unknown; method?: unknown; cause?: unknown } | null | undefined;
  for (let cause = e?.cause, depth = 0; cause && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN") return "retry";
    cause = (cause as { cause?: unknown }).cause;
  }
  const status = e?.status;
  if (status === 429 || status === 503) return "retry";
  if (typeof e?.method !== "string") return "refused";
  if (e.method === "GET") return "retry";
  if (typeof status === "number" && status >= 400 && status < 500 && status !== 408) {
    return "refused";
  }
  return "uncertain";
}
