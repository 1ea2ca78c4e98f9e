// The logprob checks of the check before training: the same rules the wire
// writer (and so the shipper, train and log) applies to each token, so that
// validateGroup refuses what would be refused at send time, naming the token.
import { CompactLogprobs } from "./compact-logprobs.js";
import type { ValidationProblem } from "./errors.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether `bytes` is null or a list of byte values (integers 0 to 255), as the wire allows. */
export function isWireBytes(bytes: unknown): boolean {
  if (bytes === null || bytes === undefined) return true;
  if (!Array.isArray(bytes)) return false;
  for (const b of bytes) if (!Number.isInteger(b) || b < 0 || b > 255) return false;
  return true;
}

/** At most this many problems are named per list: one bad answer should not bury the rest. */
const PER_LIST = 5;

/**
 * Adds to `out` what is wrong with a Choice's `logprobs` (at `path`): it must
 * be null or an object whose `content` and `refusal` are null or lists of
 * token objects, each with a string `token`, a finite number `logprob`,
 * `bytes` null or bytes (0-255), and `top_logprobs` of the same (for content
 * and refusal tokens).
 */
export function logprobProblems(logprobs: unknown, path: string, out: ValidationProblem[]): void {
  // Recorded ones were checked as they were captured, and are written from their columns.
  if (logprobs === null || logprobs === undefined || logprobs instanceof CompactLogprobs) return;
  if (!isObj(logprobs)) {
    out.push({ path, message: "expected an object with content and refusal lists, or null" });
    return;
  }
  for (const key of ["content", "refusal"] as const)
    tokenList(logprobs[key], `${path}.${key}`, true, out);
}

function tokenList(list: unknown, path: string, withTop: boolean, out: ValidationProblem[]): void {
  if (list === null || list === undefined) return;
  if (!Array.isArray(list)) {
    out.push({ path, message: "expected a list of token logprobs, or null" });
    return;
  }
  let named = 0;
  for (let i = 0; i < list.length && named < PER_LIST; i++) {
    const found = tokenProblem(list[i], `${path}[${i}]`, withTop, out);
    if (found) named++;
  }
}

function tokenProblem(
  t: unknown,
  path: string,
  withTop: boolean,
  out: ValidationProblem[],
): boolean {
  if (!isObj(t)) {
    out.push({
      path,
      message: `expected a token logprob object, got ${t === null ? "null" : typeof t}`,
    });
    return true;
  }
  const before = out.length;
  if (typeof t.token !== "string")
    out.push({ path: `${path}.token`, message: "expected a string" });
  if (typeof t.logprob !== "number" || !Number.isFinite(t.logprob))
    out.push({
      path: `${path}.logprob`,
      message: `expected a finite number, got ${typeof t.logprob === "number" ? String(t.logprob) : typeof t.logprob}`,
    });
  if (!isWireBytes(t.bytes))
    out.push({
      path: `${path}.bytes`,
      message: "expected null or a list of byte values (integers 0 to 255)",
    });
  if (withTop && t.top_logprobs !== undefined && t.top_logprobs !== null)
    tokenList(t.top_logprobs, `${path}.top_logprobs`, false, out);
  return out.length > before;
}
