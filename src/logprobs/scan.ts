// An answer's logprobs read straight from its JSON text, before anything
// parses it: one pass over the characters of each Choice's `logprobs`, into
// the compact columns, with no object made per token. A token spelled as vLLM
// spells it with `return_tokens_as_token_ids` (`token_id:N`) is found in the
// token table by N, without making its text, any other by its text; its
// `bytes` are compared with that text's UTF-8 as one slice; its logprob is
// read as JSON.parse reads it (the same double, see decimal.ts), so the
// recorded JSON is the same either way.
//
// The scan is strict and gives up at anything it does not expect (a key of
// another name, a byte over MAX_BYTE, an escape in a key): the caller
// then parses the text as usual and the recorder reads the SDK's objects, as
// it did before this scan existed. Giving up is always safe; the scan only
// succeeds on text whose logprobs JSON.parse would read to the same values.
//
// With `strip`, each scanned `logprobs` value becomes `null` in the text
// handed on: a caller who did not ask for logprobs (the recorder asked, for
// training) gets the answer it asked for, and the SDK parses a fraction of
// the bytes.

import { type Columns, columnsOf } from "./columns.js";
import { CompactLogprobs } from "./compact.js";
import { longDigits } from "./decimal.js";
import { isLogprob, MAX_BYTE, MAX_TOKEN_NUMBER_DIGITS, TOKEN_NUMBER_PREFIX } from "./rules.js";
import { TokenTable } from "./token-table.js";
import { isUtf8Of } from "./utf8.js";

/** What a scan of a chat completion's JSON text found. */
export interface ScannedAnswer {
  /** The text to parse: the answer, or, stripped, with each scanned `logprobs` null. */
  text: string;
  /** Each Choice's logprobs by its place in `choices` (undefined: null or absent). */
  logprobs: (CompactLogprobs | undefined)[];
}

/** Thrown inside the scan when the text is not what it expects; never escapes it. */
const GIVE_UP: unique symbol = Symbol("give up");

/** Exact powers of ten (10^22 is the last a double holds exactly). */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);
const TWO_53 = 2 ** 53;

const QUOTE = 34;
const COMMA = 44;
const COLON = 58;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const BACKSLASH = 92;

const TOKEN = 1;
const LOGPROB = 2;
const BYTES = 4;
const TOP = 8;

// The fixed parts of a compact token (see compactToken).
const TOKEN_START = '{"token":"';
const LOGPROB_KEY = '","logprob":';
const BYTES_KEY = ',"bytes":';
const TOP_KEY = ',"top_logprobs":[';

/**
 * Scans `text`, a chat completion's JSON, for its Choices' logprobs.
 * Undefined when no Choice has logprobs or the text is not what the scan
 * expects (the caller then reads the parsed objects instead).
 */
export function scanAnswer(text: string, strip: boolean): ScannedAnswer | undefined {
  const scan = Scan.shared;
  scan.start(text);
  try {
    const spans: number[] = [];
    const logprobs: (CompactLogprobs | undefined)[] = [];
    scan.top(spans, logprobs);
    if (spans.length === 0) return undefined;
    if (!strip) return { text, logprobs };
    let out = "";
    let from = 0;
    for (let i = 0; i < spans.length; i += 2) {
      out += `${text.slice(from, spans[i])}null`;
      from = spans[i + 1] as number;
    }
    return { text: out + text.slice(from), logprobs };
  } catch (error) {
    if (error === GIVE_UP) return undefined;
    throw error;
  } finally {
    scan.start("");
  }
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/**
 * The scan's state and steps. Fields rather than module variables: V8 reads
 * an object's fields faster than a module's `let`s (each read of those is
 * checked for its temporal dead zone). One instance serves every call: the
 * scan is synchronous. The hot steps copy the text and the position into
 * locals and write the position back.
 */
class Scan {
  static readonly shared = new Scan();

  s = "";
  p = 0;
  table: TokenTable = TokenTable.current();
  // Scratch columns, reused: a token list's ids and logprobs, each token's
  // alternatives' end, the alternatives' ids and logprobs, one token's bytes.
  readonly ids: number[] = [];
  readonly lps: number[] = [];
  readonly ends: number[] = [];
  readonly topIds: number[] = [];
  readonly topLps: number[] = [];
  readonly bytes: number[] = [];
  // What tokenText or head read: N of `token_id:N` (else -1), or the text;
  // head's token id.
  numbered = -1;
  text = "";
  headId = -1;
  // Where tokenNumber's digits ended (the closing quote's place).
  numberEnd = 0;

  start(text: string): void {
    this.s = text;
    this.p = 0;
    this.table = TokenTable.current();
  }

  skipSpace(): void {
    const s = this.s;
    let p = this.p;
    while (isSpace(s.charCodeAt(p))) p++;
    this.p = p;
  }

  expect(c: number): void {
    this.skipSpace();
    if (this.s.charCodeAt(this.p) !== c) throw GIVE_UP;
    this.p++;
  }

  /** After the value just read: true at a comma (another follows), false at `close`. */
  more(close: number): boolean {
    const s = this.s;
    let p = this.p;
    while (isSpace(s.charCodeAt(p))) p++;
    const c = s.charCodeAt(p);
    this.p = p + 1;
    if (c === COMMA) return true;
    if (c === close) return false;
    throw GIVE_UP;
  }

  /** Whether the container just opened is empty (its `close` is consumed then). */
  empty(close: number): boolean {
    this.skipSpace();
    if (this.s.charCodeAt(this.p) !== close) return false;
    this.p++;
    return true;
  }

  /** Where the string starting at `from` (its opening quote) ends, past its closing quote. */
  stringEnd(from: number): number {
    const s = this.s;
    let q = from + 1;
    for (;;) {
      const e = s.indexOf('"', q);
      if (e < 0) throw GIVE_UP;
      let b = e - 1;
      while (s.charCodeAt(b) === BACKSLASH) b--;
      // An even run of backslashes before the quote escapes nothing.
      if ((e - 1 - b) % 2 === 0) return e + 1;
      q = e + 1;
    }
  }

  /** Reads a key and its colon; keys with escapes are left to JSON.parse. */
  readKey(): string {
    this.skipSpace();
    if (this.s.charCodeAt(this.p) !== QUOTE) throw GIVE_UP;
    const end = this.stringEnd(this.p);
    const raw = this.s.slice(this.p + 1, end - 1);
    this.p = end;
    this.expect(COLON);
    return raw.includes("\\") ? parseString(raw) : raw;
  }

  /**
   * Skips one value outside the logprobs. Not checked here: whatever is
   * skipped is parsed by JSON.parse afterwards, from the same characters.
   */
  skipValue(): void {
    this.skipSpace();
    const s = this.s;
    const c = s.charCodeAt(this.p);
    if (c === QUOTE) {
      this.p = this.stringEnd(this.p);
      return;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      let depth = 0;
      for (;;) {
        const d = s.charCodeAt(this.p);
        if (Number.isNaN(d)) throw GIVE_UP;
        if (d === QUOTE) {
          this.p = this.stringEnd(this.p);
          continue;
        }
        if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
        else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) depth--;
        this.p++;
        if (depth === 0) return;
      }
    }
    let p = this.p;
    const from = p;
    for (;;) {
      const d = s.charCodeAt(p);
      if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || isSpace(d) || Number.isNaN(d))
        break;
      p++;
    }
    if (p === from) throw GIVE_UP;
    this.p = p;
  }

  isNull(): boolean {
    this.skipSpace();
    if (!at(this.s, this.p, "null")) return false;
    this.p += 4;
    return true;
  }

  top(spans: number[], logprobs: (CompactLogprobs | undefined)[]): void {
    this.expect(OPEN_OBJECT);
    if (this.empty(CLOSE_OBJECT)) return;
    let choices = false;
    do {
      const key = this.readKey();
      if (key === "choices") {
        if (choices) throw GIVE_UP;
        choices = true;
        this.choices(spans, logprobs);
      } else this.skipValue();
    } while (this.more(CLOSE_OBJECT));
    this.skipSpace();
    if (this.p !== this.s.length) throw GIVE_UP;
  }

  choices(spans: number[], logprobs: (CompactLogprobs | undefined)[]): void {
    this.expect(OPEN_ARRAY);
    if (this.empty(CLOSE_ARRAY)) return;
    do {
      this.expect(OPEN_OBJECT);
      const at = logprobs.length;
      logprobs.push(undefined);
      if (this.empty(CLOSE_OBJECT)) continue;
      let seen = false;
      do {
        const key = this.readKey();
        if (key !== "logprobs") {
          this.skipValue();
          continue;
        }
        if (seen) throw GIVE_UP;
        seen = true;
        if (this.isNull()) continue;
        const start = this.p;
        logprobs[at] = this.logprobs();
        spans.push(start, this.p);
      } while (this.more(CLOSE_OBJECT));
    } while (this.more(CLOSE_ARRAY));
  }

  /** A Choice's `logprobs` object: `content` and `refusal`, each a token list or null. */
  logprobs(): CompactLogprobs {
    this.expect(OPEN_OBJECT);
    let content: Columns | null | undefined;
    let refusal: Columns | null | undefined;
    if (!this.empty(CLOSE_OBJECT))
      do {
        const key = this.readKey();
        if (key === "content" && content === undefined) content = this.list();
        else if (key === "refusal" && refusal === undefined) refusal = this.list();
        else throw GIVE_UP;
      } while (this.more(CLOSE_OBJECT));
    return CompactLogprobs.fromColumns(content ?? null, refusal ?? null);
  }

  /** A token list (each token with its alternatives) in columns, or null. */
  list(): Columns | null {
    if (this.isNull()) return null;
    this.expect(OPEN_ARRAY);
    const { ids, lps, ends, topIds, topLps, table } = this;
    ids.length = 0;
    lps.length = 0;
    ends.length = 0;
    topIds.length = 0;
    topLps.length = 0;
    if (!this.empty(CLOSE_ARRAY))
      do if (!this.compactToken(true)) this.token(true);
      while (this.more(CLOSE_ARRAY));
    const top = columnsOf(table, topIds, topLps);
    return columnsOf(table, ids, lps, { columns: top, ends });
  }

  /**
   * One token written compact, in the SDK's key order, as vLLM writes it:
   * `{"token":T,"logprob":L,"bytes":[…]` then `,"top_logprobs":[…]}`
   * (`withTop`) or `}`. T is `token_id:N` (found in the table by N, without
   * making its text) or a text with no escape (found by its text). The fixed
   * parts, and the bytes with their key when they are a variant met before
   * (the text's UTF-8, almost always), are compared as whole slices with
   * strings the table keeps per token, leaving only N or T and L to read
   * character by character. False, at the token's start, when the token is
   * written otherwise: {@link token} reads it then.
   */
  compactToken(withTop: boolean): boolean {
    const s = this.s;
    let start = this.p;
    while (isSpace(s.charCodeAt(start))) start++;
    this.p = start;
    const table = this.table;
    let q = this.head(start);
    if (q < 0) {
      this.p = start;
      return false;
    }
    let id = this.headId;
    const n = this.numbered;
    const text = this.text;
    this.p = q;
    const logprob = this.number();
    q = this.p;
    const field = table.bytesField(id);
    if (at(s, q, field)) q += field.length;
    else {
      // Bytes that are not the text's UTF-8 (a character split over
      // tokens): one of the variants met before, compared the same way, or
      // read and added.
      const variants = n >= 0 ? table.numberedVariants(n) : table.variants(text);
      let found = -1;
      if (variants)
        for (const v of variants) {
          const json = table.bytesField(v);
          if (at(s, q, json)) {
            found = v;
            q += json.length;
            break;
          }
        }
      if (found < 0) {
        if (!at(s, q, BYTES_KEY)) {
          this.p = start;
          return false;
        }
        this.p = q + BYTES_KEY.length;
        const bytes = this.readBytes() ? null : this.bytes;
        found = n >= 0 ? table.numberedOddId(n, bytes) : table.oddId(text, bytes);
        q = this.p;
      }
      id = found;
    }
    if (!withTop) {
      if (s.charCodeAt(q) !== CLOSE_OBJECT) {
        this.p = start;
        return false;
      }
      this.p = q + 1;
      this.topIds.push(id);
      this.topLps.push(logprob);
      return true;
    }
    if (!at(s, q, TOP_KEY)) {
      this.p = start;
      return false;
    }
    this.p = q + TOP_KEY.length;
    if (!this.empty(CLOSE_ARRAY))
      do if (!this.compactToken(false)) this.token(false);
      while (this.more(CLOSE_ARRAY));
    // Alternatives are read: another key after them is another shape.
    this.expect(CLOSE_OBJECT);
    this.ids.push(id);
    this.lps.push(logprob);
    this.ends.push(this.topIds.length);
    return true;
  }

  /**
   * One token (`withTop`: with its alternatives, which go to the top columns):
   * exactly the keys the SDK's objects have, in any order, or the scan gives up.
   */
  token(withTop: boolean): void {
    this.expect(OPEN_OBJECT);
    let seen = 0;
    let logprob = 0;
    let tokenNumber = -1;
    let tokenText = "";
    let bytesNull = false;
    // Resolved as soon as the text and the bytes are read: the alternatives
    // reuse the scratch bytes.
    let id = -1;
    do {
      const key = this.tokenKey();
      if (seen & key) throw GIVE_UP;
      seen |= key;
      if (key === TOKEN) {
        this.tokenText();
        tokenNumber = this.numbered;
        tokenText = this.text;
      } else if (key === LOGPROB) logprob = this.number();
      else if (key === BYTES) bytesNull = this.readBytes();
      else if (withTop) {
        // Bytes read before the text, alternatives between: keep them aside.
        const saved = id < 0 && seen & BYTES ? this.bytes.slice() : undefined;
        this.expect(OPEN_ARRAY);
        if (!this.empty(CLOSE_ARRAY))
          do if (!this.compactToken(false)) this.token(false);
          while (this.more(CLOSE_ARRAY));
        if (saved) {
          this.bytes.length = 0;
          for (const b of saved) this.bytes.push(b);
        }
      } else throw GIVE_UP;
      if (id < 0 && (seen & (TOKEN | BYTES)) === (TOKEN | BYTES))
        id = this.tokenId(tokenNumber, tokenText, bytesNull);
    } while (this.more(CLOSE_OBJECT));
    if (seen !== (withTop ? TOKEN | LOGPROB | BYTES | TOP : TOKEN | LOGPROB | BYTES)) throw GIVE_UP;
    if (withTop) {
      this.ids.push(id);
      this.lps.push(logprob);
      this.ends.push(this.topIds.length);
    } else {
      this.topIds.push(id);
      this.topLps.push(logprob);
    }
  }

  /**
   * A compact token's head, `{"token":T,"logprob":`, at `start`: where its
   * logprob starts, or -1 when the token is written otherwise. Sets
   * `headId`, `numbered` (N of `token_id:N`, else -1) and `text` (T, else
   * ""). A token met before is compared as one slice with the head the table
   * keeps for it; the first meeting checks each part, then adds the token.
   */
  head(start: number): number {
    const s = this.s;
    const table = this.table;
    const from = start + TOKEN_START.length;
    let n = -1;
    let text: string | undefined;
    let id = -1;
    // N read where it would be; the head's comparison says whether it was.
    if (s.charCodeAt(from) === 116) {
      n = this.tokenNumber(from + TOKEN_NUMBER_PREFIX.length);
      if (n >= 0) id = table.knownNumbered(n);
    }
    if (n < 0) {
      text = this.plainText(from);
      if (text === undefined) return -1;
      id = table.knownPlain(text);
    }
    let q = -1;
    if (id >= 0) {
      const head = table.head(id);
      if (at(s, start, head)) q = start + head.length;
    }
    if (q < 0) {
      if (!at(s, start, TOKEN_START)) return -1;
      if (n >= 0 && at(s, from, TOKEN_NUMBER_PREFIX)) {
        id = table.numberedId(n);
        q = this.numberEnd;
      } else {
        n = -1;
        text ??= this.plainText(from);
        if (text === undefined) return -1;
        id = table.plainId(text);
        q = from + text.length;
      }
      if (!at(s, q, LOGPROB_KEY)) return -1;
      q += LOGPROB_KEY.length;
    }
    this.headId = id;
    this.numbered = n;
    this.text = text ?? "";
    return q;
  }

  /** A token's text from `from` to its closing quote; undefined at an escape, a control character or the end. */
  plainText(from: number): string | undefined {
    const s = this.s;
    let e = from;
    for (;;) {
      const c = s.charCodeAt(e);
      if (c === QUOTE) return s.slice(from, e);
      if (!(c >= 0x20) || c === BACKSLASH) return undefined;
      e++;
    }
  }

  /** The token's id in the table: plain when its bytes are its text's UTF-8, else a variant. */
  tokenId(n: number, tokenText: string, bytesNull: boolean): number {
    const { table, bytes } = this;
    if (n >= 0) {
      const id = table.numberedId(n);
      if (!bytesNull && sameBytes(table.sharedBytes(id), bytes)) return id;
      return table.numberedOddId(n, bytesNull ? null : bytes);
    }
    if (!bytesNull && isUtf8Of(tokenText, bytes)) return table.plainId(tokenText);
    return table.oddId(tokenText, bytesNull ? null : bytes);
  }

  /** One of the four keys of a token, as a bit; any other key gives up. */
  tokenKey(): number {
    this.skipSpace();
    const s = this.s;
    const p = this.p;
    if (s.charCodeAt(p) !== QUOTE) throw GIVE_UP;
    let key: number;
    // The four keys differ in their first letter.
    const c = s.charCodeAt(p + 1);
    if (c === 116 && at(s, p + 1, 'token"')) {
      key = TOKEN;
      this.p = p + 7;
    } else if (c === 108 && at(s, p + 1, 'logprob"')) {
      key = LOGPROB;
      this.p = p + 9;
    } else if (c === 98 && at(s, p + 1, 'bytes"')) {
      key = BYTES;
      this.p = p + 7;
    } else if (c === 116 && at(s, p + 1, 'top_logprobs"')) {
      key = TOP;
      this.p = p + 14;
    } else throw GIVE_UP;
    this.expect(COLON);
    return key;
  }

  /**
   * N of `token_id:N` from its first digit at `from`: -1 unless N is
   * spelled canonically (1 to MAX_TOKEN_NUMBER_DIGITS digits, no leading zero, so N gives back the
   * text) and followed by the closing quote, whose place goes to `numberEnd`.
   */
  tokenNumber(from: number): number {
    const s = this.s;
    let q = from;
    let n = 0;
    for (;;) {
      const d = s.charCodeAt(q) - 48;
      if (!(d >= 0 && d <= 9)) break;
      n = n * 10 + d;
      q++;
    }
    const digits = q - from;
    this.numberEnd = q;
    if (s.charCodeAt(q) !== QUOTE || digits === 0 || digits > MAX_TOKEN_NUMBER_DIGITS) return -1;
    return digits > 1 && s.charCodeAt(from) === 48 ? -1 : n;
  }

  /** Reads a token's text: sets `numbered` (N of `token_id:N`, else -1) and `text`. */
  tokenText(): void {
    this.skipSpace();
    const s = this.s;
    const p = this.p;
    if (s.charCodeAt(p) !== QUOTE) throw GIVE_UP;
    this.numbered = -1;
    this.text = "";
    if (at(s, p + 1, TOKEN_NUMBER_PREFIX)) {
      const n = this.tokenNumber(p + 1 + TOKEN_NUMBER_PREFIX.length);
      if (n >= 0) {
        this.numbered = n;
        this.p = this.numberEnd + 1;
        return;
      }
    }
    const end = this.stringEnd(p);
    let escaped = false;
    for (let q = p + 1; q < end - 1; q++) {
      const c = s.charCodeAt(q);
      if (c < 0x20) throw GIVE_UP;
      if (c === BACKSLASH) escaped = true;
    }
    const inner = s.slice(p + 1, end - 1);
    this.text = escaped ? parseString(inner) : inner;
    this.p = end;
  }

  /**
   * A JSON number, read to the double JSON.parse gives: exactly, by integer
   * arithmetic, when its digits make an integer below 2^53 (every step of
   * reading them is then exact) and its exponent is small (one correctly
   * rounded division or product); otherwise by Number().
   */
  number(): number {
    this.skipSpace();
    const s = this.s;
    let p = this.p;
    const start = p;
    const negative = s.charCodeAt(p) === 45;
    if (negative) p++;
    let m = 0;
    let c = s.charCodeAt(p);
    if (c === 48) c = s.charCodeAt(++p);
    else if (c >= 49 && c <= 57) {
      do {
        m = m * 10 + (c - 48);
        c = s.charCodeAt(++p);
      } while (c >= 48 && c <= 57);
    } else throw GIVE_UP;
    let scale = 0;
    const digitsFrom = negative ? start + 1 : start;
    if (c === 46) {
      c = s.charCodeAt(++p);
      if (!(c >= 48 && c <= 57)) throw GIVE_UP;
      do {
        m = m * 10 + (c - 48);
        scale--;
        c = s.charCodeAt(++p);
      } while (c >= 48 && c <= 57);
    }
    const digitsEnd = p;
    if (c === 101 || c === 69) {
      c = s.charCodeAt(++p);
      let sign = 1;
      if (c === 43 || c === 45) {
        if (c === 45) sign = -1;
        c = s.charCodeAt(++p);
      }
      if (!(c >= 48 && c <= 57)) throw GIVE_UP;
      let e = 0;
      do {
        if (e < 100000) e = e * 10 + (c - 48);
        c = s.charCodeAt(++p);
      } while (c >= 48 && c <= 57);
      scale += sign * e;
    }
    this.p = p;
    let value: number;
    // Below 2^53 the digits were read exactly, and one correctly rounded
    // product or quotient by an exact power of ten is what JSON.parse gives.
    if (m < TWO_53 && scale >= -22 && scale <= 22)
      value = scale < 0 ? m / (POW10[-scale] as number) : m * (POW10[scale] as number);
    else {
      // 16 to 18 digits (what a server writes for a double): most are
      // settled without Number(), which allocates a string to read.
      value = scale < 0 && scale >= -22 ? longDigits(s, digitsFrom, digitsEnd, -scale) : Number.NaN;
      if (Number.isNaN(value)) value = Number(s.slice(digitsFrom, p));
    }
    if (negative) value = -value;
    if (!isLogprob(value)) throw GIVE_UP;
    return value;
  }

  /**
   * Reads a token's `bytes` into the scratch list; true when null. Anything
   * but bytes gives up: each is read from its digits (no sign, fraction or
   * leading zero, at most MAX_BYTE), the byte values `isByte` accepts.
   */
  readBytes(): boolean {
    if (this.isNull()) return true;
    this.expect(OPEN_ARRAY);
    const s = this.s;
    const bytes = this.bytes;
    let q = this.p;
    let n = 0;
    let c = s.charCodeAt(q);
    while (isSpace(c)) c = s.charCodeAt(++q);
    if (c !== CLOSE_ARRAY)
      for (;;) {
        if (!(c >= 48 && c <= 57)) throw GIVE_UP;
        let b = c - 48;
        c = s.charCodeAt(++q);
        if (b !== 0)
          while (c >= 48 && c <= 57) {
            b = b * 10 + (c - 48);
            if (b > MAX_BYTE) throw GIVE_UP;
            c = s.charCodeAt(++q);
          }
        else if (c >= 48 && c <= 57) throw GIVE_UP;
        bytes[n++] = b;
        while (isSpace(c)) c = s.charCodeAt(++q);
        if (c === CLOSE_ARRAY) break;
        if (c !== COMMA) throw GIVE_UP;
        c = s.charCodeAt(++q);
        while (isSpace(c)) c = s.charCodeAt(++q);
      }
    this.p = q + 1;
    bytes.length = n;
    return false;
  }
}

/**
 * Whether `s` has `literal` at `p`. A slice compared with `===` (V8 compares
 * the characters natively, and slices a long string without copying it) is
 * several times faster than `startsWith` with a position, and unlike
 * `indexOf` it never searches past `p`.
 */
function at(s: string, p: number, literal: string): boolean {
  return s.slice(p, p + literal.length) === literal;
}

function parseString(inner: string): string {
  try {
    return JSON.parse(`"${inner}"`) as string;
  } catch {
    throw GIVE_UP;
  }
}

function sameBytes(expected: readonly number[] | null, bytes: readonly number[]): boolean {
  if (expected === null || expected.length !== bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (expected[i] !== bytes[i]) return false;
  return true;
}
