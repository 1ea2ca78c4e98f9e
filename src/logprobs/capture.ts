// A token list copied off the SDK's objects in one pass, cheap enough to run
// while the caller waits for its answer. Token texts are kept by reference
// (strings are immutable, so that is a true copy), logprobs into a plain
// array of numbers, and each token's `bytes` are checked against its text's UTF-8
// as they are read, straight from the char codes: only the few tokens whose
// bytes differ (a character split over tokens, or null) keep a copy of them.
// Nothing is allocated per token. Turning texts into ids of the token table
// (the compact form) is left for later, off the call path.

import { ALTERNATIVE_KEYS, isByteList, isLogprob, isTokenText, TOKEN_KEYS } from "./rules.js";
import { isTextBytes } from "./utf8.js";

/** How many keys a token with alternatives has, and an alternative. */
const TOKEN_KEY_COUNT = TOKEN_KEYS.length;
const ALTERNATIVE_KEY_COUNT = ALTERNATIVE_KEYS.length;

// Own and inherited enumerable keys, counted without the array Object.keys
// builds: an object with an inherited one is then "another shape", kept as is.
function keyCount(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}

/**
 * What to keep of `bytes` that are not a token's text's UTF-8: a copy, or
 * null when null; false when they are not a list of bytes at all.
 */
function oddBytes(bytes: unknown): readonly number[] | null | false {
  if (bytes === null) return null;
  if (!Array.isArray(bytes) || !isByteList(bytes)) return false;
  return bytes.slice() as number[];
}

/**
 * Token lists in columns, appended to one list (or one streamed chunk) at a
 * time. With `top`, each token's alternatives go to `top` and `topEnds[i]` is
 * where token i's end. Plain arrays, not typed ones: a typed array's buffer
 * lives outside the heap and costs a microsecond or more to allocate and to
 * free, per column and per call; the columns become typed arrays when they
 * are compacted, off the call path.
 */
export class TokenCapture {
  /** Each token's text. */
  readonly texts: string[] = [];
  /** Each token's logprob. */
  readonly logprobs: number[] = [];
  /** The bytes (copied, or null) of the tokens whose bytes are not their text's UTF-8, by index. */
  odd: Map<number, readonly number[] | null> | undefined;
  /** The alternatives of every token, one after another. */
  readonly top: TokenCapture | undefined;
  /** Where each token's alternatives end in `top`. */
  readonly topEnds: number[] | undefined;

  constructor(withTop: boolean) {
    if (withTop) {
      this.top = new TokenCapture(false);
      this.topEnds = [];
    }
  }

  /** How many tokens are captured. */
  get length(): number {
    return this.texts.length;
  }

  /** The capture of a whole list, or undefined when a token has another shape. */
  static of(list: readonly unknown[]): TokenCapture | undefined {
    const capture = new TokenCapture(true);
    return capture.append(list) ? capture : undefined;
  }

  /**
   * Appends the tokens of `list`; false (and nothing appended) when one has
   * another shape than the SDK's.
   */
  append(list: readonly unknown[]): boolean {
    const start = this.texts.length;
    const topStart = this.top?.texts.length ?? 0;
    if (this.top ? appendWithTop(this, this.top, list) : appendAlternatives(this, list))
      return true;
    this.truncate(start, topStart);
    return false;
  }

  /** Notes token `at`'s bytes, which are not its text's UTF-8. */
  setOdd(at: number, bytes: readonly number[] | null): void {
    this.odd ??= new Map();
    this.odd.set(at, bytes);
  }

  /** Keeps the first `length` tokens (and the first `topLength` alternatives). */
  truncate(length: number, topLength = 0): void {
    this.texts.length = length;
    this.logprobs.length = length;
    if (this.topEnds) this.topEnds.length = length;
    if (this.odd) for (const at of this.odd.keys()) if (at >= length) this.odd.delete(at);
    this.top?.truncate(topLength);
  }

  /** Token `i` as the SDK's object (fresh, nothing shared). */
  tokenAt(i: number): {
    token: string;
    bytes: number[] | null;
    logprob: number;
    top_logprobs?: unknown[];
  } {
    const token = this.texts[i] as string;
    const odd = this.odd?.get(i);
    const out: {
      token: string;
      bytes: number[] | null;
      logprob: number;
      top_logprobs?: unknown[];
    } = {
      token,
      bytes: odd === undefined ? [...Buffer.from(token)] : odd && [...odd],
      logprob: this.logprobs[i] as number,
    };
    if (this.top && this.topEnds) {
      const top: unknown[] = [];
      const to = this.topEnds[i] as number;
      for (let k = i === 0 ? 0 : (this.topEnds[i - 1] as number); k < to; k++)
        top.push(this.top.tokenAt(k));
      out.top_logprobs = top;
    }
    return out;
  }
}

// The copy loops below run on the call path when answers are copied (many
// rollouts at once, streamed chunks): one pass over the SDK's objects,
// nothing allocated per token.

/**
 * Appends one token (or alternative) of `keys` keys to `c`; false, with
 * nothing appended, when it has another shape.
 */
function appendToken(c: TokenCapture, item: unknown, keys: number): boolean {
  if (typeof item !== "object" || item === null) return false;
  const t = item as Record<string, unknown>;
  const token = t.token;
  const logprob = t.logprob;
  if (!isTokenText(token) || !isLogprob(logprob)) return false;
  if (keyCount(t) !== keys) return false;
  const bytes = t.bytes;
  if (!Array.isArray(bytes) || !isTextBytes(token, bytes)) {
    const odd = oddBytes(bytes);
    if (odd === false) return false;
    c.setOdd(c.texts.length, odd);
  }
  c.texts.push(token);
  c.logprobs.push(logprob);
  return true;
}

/** Appends tokens with alternatives; false at the first of another shape. */
function appendWithTop(c: TokenCapture, top: TokenCapture, list: readonly unknown[]): boolean {
  const ends = c.topEnds as number[];
  for (let i = 0; i < list.length; i++) {
    const t = list[i];
    const alternatives = (t as { top_logprobs?: unknown } | null)?.top_logprobs;
    if (!Array.isArray(alternatives) || !appendToken(c, t, TOKEN_KEY_COUNT)) return false;
    if (!appendAlternatives(top, alternatives)) return false;
    ends.push(top.texts.length);
  }
  return true;
}

/** Appends alternatives; false at the first of another shape. */
function appendAlternatives(c: TokenCapture, list: readonly unknown[]): boolean {
  for (let i = 0; i < list.length; i++)
    if (!appendToken(c, list[i], ALTERNATIVE_KEY_COUNT)) return false;
  return true;
}
