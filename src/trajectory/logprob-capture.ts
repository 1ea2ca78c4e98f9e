// A token list copied off the SDK's objects in one pass, cheap enough to run
// while the caller waits for its answer. Token texts are kept by reference
// (strings are immutable, so that is a true copy), logprobs go into a
// Float64Array, and each token's `bytes` are checked against its text's UTF-8
// as they are read, straight from the char codes: only the few tokens whose
// bytes differ (a character split over tokens, or null) keep a copy of them.
// Nothing is allocated per token. Turning texts into ids of the token table
// (the compact form) is left for later, off the call path.

/** Keys of a token with alternatives (`top_logprobs`), and of an alternative. */
const TOKEN_KEYS = 4;
const TOP_KEYS = 3;

// Own and inherited enumerable keys, counted without the array Object.keys
// builds: an object with an inherited one is then "another shape", kept as is.
function keyCount(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}

/**
 * Whether `bytes` is the UTF-8 of `text` (as TextEncoder writes it: a lone
 * surrogate is U+FFFD), compared as the text is read, building nothing.
 */
export function isUtf8Of(text: string, bytes: readonly unknown[]): boolean {
  const n = text.length;
  const m = bytes.length;
  if (m < n) return false;
  let j = 0;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (bytes[j++] !== c) return false;
      continue;
    }
    if (c < 0x800) {
      if (bytes[j] !== (0xc0 | (c >> 6)) || bytes[j + 1] !== (0x80 | (c & 63))) return false;
      j += 2;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = c <= 0xdbff && i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        if (
          bytes[j] !== (0xf0 | (cp >> 18)) ||
          bytes[j + 1] !== (0x80 | ((cp >> 12) & 63)) ||
          bytes[j + 2] !== (0x80 | ((cp >> 6) & 63)) ||
          bytes[j + 3] !== (0x80 | (cp & 63))
        )
          return false;
        i++;
        j += 4;
        continue;
      }
      c = 0xfffd;
    }
    if (
      bytes[j] !== (0xe0 | (c >> 12)) ||
      bytes[j + 1] !== (0x80 | ((c >> 6) & 63)) ||
      bytes[j + 2] !== (0x80 | (c & 63))
    )
      return false;
    j += 3;
  }
  return j === m;
}

function isByteList(bytes: readonly unknown[]): boolean {
  for (let i = 0; i < bytes.length; i++) if (!Number.isInteger(bytes[i])) return false;
  return true;
}

/**
 * Token lists in columns, appended to one list (or one streamed chunk) at a
 * time. With `top`, each token's alternatives go to `top` and `topEnds[i]` is
 * where token i's end.
 */
export class TokenCapture {
  /** Each token's text. */
  texts: string[] = [];
  logprobs: Float64Array;
  length = 0;
  /** The bytes (copied, or null) of the tokens whose bytes are not their text's UTF-8, by index. */
  odd: Map<number, readonly number[] | null> | undefined;
  readonly top: TokenCapture | undefined;
  topEnds: Uint32Array | undefined;

  /** `capacity` tokens (and `topCapacity` alternatives) before the columns grow. */
  constructor(withTop: boolean, capacity = 16, topCapacity = capacity * 8) {
    this.logprobs = new Float64Array(capacity);
    if (withTop) {
      this.top = new TokenCapture(false, topCapacity);
      this.topEnds = new Uint32Array(capacity);
    }
  }

  /** The capture of a whole list, or undefined when a token has another shape. */
  static of(list: readonly unknown[]): TokenCapture | undefined {
    const first = list[0] as { top_logprobs?: unknown } | undefined;
    const top = Array.isArray(first?.top_logprobs) ? first.top_logprobs.length : 0;
    const capture = new TokenCapture(true, list.length, top * list.length);
    return capture.append(list) ? capture : undefined;
  }

  /**
   * Appends the tokens of `list`; false (and nothing appended) when one has
   * another shape than the SDK's.
   */
  append(list: readonly unknown[]): boolean {
    const start = this.length;
    const topStart = this.top?.length ?? 0;
    if (this.#appendAll(list)) return true;
    this.truncate(start, topStart);
    return false;
  }

  #appendAll(list: readonly unknown[]): boolean {
    const n = list.length;
    this.#reserve(this.length + n);
    const top = this.top;
    for (let i = 0; i < n; i++) {
      const t = list[i] as Record<string, unknown>;
      if (typeof t !== "object" || t === null) return false;
      const token = t.token;
      const logprob = t.logprob;
      const bytes = t.bytes;
      if (typeof token !== "string" || typeof logprob !== "number" || !Number.isFinite(logprob))
        return false;
      if (keyCount(t) !== (top ? TOKEN_KEYS : TOP_KEYS)) return false;
      const at = this.length;
      if (bytes === null) this.#setOdd(at, null);
      else if (!Array.isArray(bytes)) return false;
      else if (!isUtf8Of(token, bytes)) {
        if (!isByteList(bytes)) return false;
        this.#setOdd(at, bytes.slice());
      }
      this.texts.push(token);
      (this.logprobs as Float64Array)[at] = logprob;
      if (top) {
        const alternatives = t.top_logprobs;
        if (!Array.isArray(alternatives) || !top.#appendAll(alternatives)) return false;
        (this.topEnds as Uint32Array)[at] = top.length;
      }
      this.length = at + 1;
    }
    return true;
  }

  #setOdd(at: number, bytes: readonly number[] | null): void {
    this.odd ??= new Map();
    this.odd.set(at, bytes);
  }

  #reserve(size: number): void {
    if (size <= this.logprobs.length) return;
    const capacity = Math.max(size, this.logprobs.length * 2);
    const logprobs = new Float64Array(capacity);
    logprobs.set(this.logprobs);
    this.logprobs = logprobs;
    if (this.topEnds) {
      const ends = new Uint32Array(capacity);
      ends.set(this.topEnds);
      this.topEnds = ends;
    }
  }

  /** Keeps the first `length` tokens (and the first `topLength` alternatives). */
  truncate(length: number, topLength = 0): void {
    this.length = length;
    this.texts.length = length;
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
