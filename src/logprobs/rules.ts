// What a Choice's logprobs may hold, each rule written once. The scan of the
// answer's text, the copy of the SDK's objects, compaction, the wire writer
// and the check before training all ask these functions (or read these
// constants), so that what one producer accepts the others accept too, and
// what the check refuses is what the writer would refuse at send time.

/** The keys of a Choice's `logprobs` object: two token lists, each a list or null. */
export const LOGPROBS_KEYS: readonly string[] = ["content", "refusal"];
/** The keys of a sampled token: its text, bytes, logprob and alternatives. */
export const TOKEN_KEYS: readonly string[] = ["token", "bytes", "logprob", "top_logprobs"];
/** The keys of an alternative (an entry of `top_logprobs`): no alternatives of its own. */
export const ALTERNATIVE_KEYS: readonly string[] = ["token", "bytes", "logprob"];

/** The largest value a byte of a token's `bytes` may have (the smallest is 0). */
export const MAX_BYTE = 255;

/** Whether `b` is a byte value: an integer from 0 to {@link MAX_BYTE}. */
export function isByte(b: unknown): boolean {
  return Number.isInteger(b) && (b as number) >= 0 && (b as number) <= MAX_BYTE;
}

/** Whether every entry of `bytes` is a byte value. */
export function isByteList(bytes: readonly unknown[]): boolean {
  for (let i = 0; i < bytes.length; i++) if (!isByte(bytes[i])) return false;
  return true;
}

/**
 * Whether `bytes` may stand as a token's `bytes`: null (the server sent
 * none), absent (the wire fills in null), or a list of byte values.
 */
export function isTokenBytes(bytes: unknown): boolean {
  if (bytes === null || bytes === undefined) return true;
  return Array.isArray(bytes) && isByteList(bytes);
}

/**
 * Whether `logprob` may stand as a token's logprob: a finite number. That it
 * is at most 0 is not asked: no producer or check ever asked it, and the wire
 * schema takes any finite number. (A finite number is one whose difference
 * with itself is 0: the cheapest test there is.)
 */
export function isLogprob(logprob: unknown): logprob is number {
  return typeof logprob === "number" && logprob - logprob === 0;
}

/** Whether `token` may stand as a token's text: any string. */
export function isTokenText(token: unknown): token is string {
  return typeof token === "string";
}

/** What {@link isTokenText} expects, as the checks say it. */
export const TOKEN_TEXT_EXPECTED = "expected a string";
/** What {@link isLogprob} expects, as the checks say it. */
export const LOGPROB_EXPECTED = "expected a finite number";
/** What {@link isTokenBytes} expects, as the checks say it. */
export const BYTES_EXPECTED = `expected null or a list of byte values (integers 0 to ${MAX_BYTE})`;

/**
 * How vLLM spells a token by its id (with `return_tokens_as_token_ids`):
 * `token_id:N`. N is read only when spelled canonically (1 to
 * {@link MAX_TOKEN_NUMBER_DIGITS} digits, no leading zero), so that N gives
 * the same text back; any other spelling is kept as plain text.
 */
export const TOKEN_NUMBER_PREFIX = "token_id:";
/** The most digits of N read in `token_id:N` (N stays below 2^32 and a Uint32Array's slots). */
export const MAX_TOKEN_NUMBER_DIGITS = 9;

/** The text of the token `token_id:N`. */
export function numberedToken(n: number): string {
  return `${TOKEN_NUMBER_PREFIX}${n}`;
}
