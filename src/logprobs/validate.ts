// The logprob checks of the check before training: the same rules the wire
// writer (and so the shipper, train and log) applies to each token, so that
// validateGroup refuses what would be refused at send time, naming the token.
import { CompactLogprobs } from "./compact.js";
import {
  BYTES_EXPECTED,
  isLogprob,
  isTokenBytes,
  isTokenText,
  LOGPROB_EXPECTED,
  LOGPROBS_KEYS,
  TOKEN_TEXT_EXPECTED,
} from "./rules.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * One problem found, at `path`: the shape of the check before training's
 * `ValidationProblem`, which the caller's list holds.
 */
interface Problem {
  path: string;
  message: string;
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
export function logprobProblems(logprobs: unknown, path: string, out: Problem[]): void {
  // Recorded ones were checked as they were captured, and are written from their columns.
  if (logprobs === null || logprobs === undefined || logprobs instanceof CompactLogprobs) return;
  if (!isObj(logprobs)) {
    out.push({ path, message: "expected an object with content and refusal lists, or null" });
    return;
  }
  for (const key of LOGPROBS_KEYS) tokenList(logprobs[key], `${path}.${key}`, true, out);
}

function tokenList(list: unknown, path: string, withTop: boolean, out: Problem[]): void {
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

function tokenProblem(t: unknown, path: string, withTop: boolean, out: Problem[]): boolean {
  if (!isObj(t)) {
    out.push({
      path,
      message: `expected a token logprob object, got ${t === null ? "null" : typeof t}`,
    });
    return true;
  }
  const before = out.length;
  if (!isTokenText(t.token)) out.push({ path: `${path}.token`, message: TOKEN_TEXT_EXPECTED });
  if (!isLogprob(t.logprob))
    out.push({
      path: `${path}.logprob`,
      message: `${LOGPROB_EXPECTED}, got ${typeof t.logprob === "number" ? String(t.logprob) : typeof t.logprob}`,
    });
  if (!isTokenBytes(t.bytes)) out.push({ path: `${path}.bytes`, message: BYTES_EXPECTED });
  if (withTop && t.top_logprobs !== undefined && t.top_logprobs !== null)
    tokenList(t.top_logprobs, `${path}.top_logprobs`, false, out);
  return out.length > before;
}
