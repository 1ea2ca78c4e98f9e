// Recorded logprobs in columns: each token as an id into a table of the
// distinct tokens met (a tokenizer's vocabulary is bounded), the logprobs in
// a Float64Array, and the alternatives the same way. The SDK's form costs
// about 1 KB of heap per token with five alternatives (an object, a bytes
// array and a string for each); this form 12 bytes per token and
// alternative. Reading `content` or `refusal` gives the SDK's form back
// (kept from then on, so edits stick); `toJSON()` gives the wire JSON.

import { copyJson } from "../util/copy-json.js";

/** A token logprob as the SDK gives it. */
interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs?: TokenLogprob[];
}

const utf8 = new TextEncoder();

// Most tokens are ASCII: their bytes are their char codes, with no encoder call.
function isAscii(token: string): boolean {
  for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) > 127) return false;
  return true;
}

function bytesOf(token: string): number[] {
  if (!isAscii(token)) return Array.from(utf8.encode(token));
  // Pushed, not preallocated: a packed array, which JSON.stringify writes fastest.
  const out: number[] = [];
  for (let i = 0; i < token.length; i++) out.push(token.charCodeAt(i));
  return out;
}

function sameBytes(token: string, bytes: readonly number[]): boolean {
  if (isAscii(token)) {
    if (token.length !== bytes.length) return false;
    for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) !== bytes[i]) return false;
    return true;
  }
  const own = utf8.encode(token);
  if (own.length !== bytes.length) return false;
  for (let i = 0; i < own.length; i++) if (own[i] !== bytes[i]) return false;
  return true;
}

/**
 * The distinct tokens recorded, each with its bytes and the start of its wire
 * JSON (`{"token":…,"bytes":[…],"logprob":`), both made once, when first
 * asked for. Columns hold ids into a table; a full table is left to the
 * columns that use it (and freed with them) and a new one is started.
 */
class TokenTable {
  /** Past this many tokens, new columns go to a new table: more than any tokenizer's vocabulary. */
  static readonly MAX = 1 << 18;
  static #current = new TokenTable();

  static current(): TokenTable {
    if (TokenTable.#current.tokens.length >= TokenTable.MAX) TokenTable.#current = new TokenTable();
    return TokenTable.#current;
  }

  readonly tokens: string[] = [];
  // Frozen: shared by every token written with them (undefined until asked for).
  readonly #bytes: (readonly number[] | null | undefined)[] = [];
  readonly #prefixes: (Uint8Array | undefined)[] = [];
  readonly #plain = new Map<string, number>();
  // Tokens whose bytes are not their text's UTF-8 (a character split over
  // tokens), or null, keyed by both.
  readonly #odd = new Map<string, number>();

  idOf(token: string, bytes: readonly number[] | null): number {
    if (bytes !== null && sameBytes(token, bytes)) {
      let id = this.#plain.get(token);
      if (id === undefined) {
        id = this.tokens.push(token) - 1;
        this.#plain.set(token, id);
      }
      return id;
    }
    const key = `${bytes === null ? "null" : bytes.join(",")}:${token}`;
    let id = this.#odd.get(key);
    if (id === undefined) {
      id = this.tokens.push(token) - 1;
      this.#odd.set(key, id);
      this.#bytes[id] = bytes && Object.freeze([...bytes]);
    }
    return id;
  }

  /** The token's bytes, frozen and shared: only for output that is read and let go. */
  sharedBytes(id: number): readonly number[] | null {
    let bytes = this.#bytes[id];
    if (bytes === undefined) {
      bytes = Object.freeze(bytesOf(this.tokens[id] as string));
      this.#bytes[id] = bytes;
    }
    return bytes;
  }

  /** `{"token":…,"bytes":[…],"logprob":` of the token, as UTF-8. */
  prefix(id: number): Uint8Array {
    let prefix = this.#prefixes[id];
    if (prefix === undefined) {
      const bytes = this.sharedBytes(id);
      prefix = utf8.encode(
        `{"token":${JSON.stringify(this.tokens[id])},"bytes":${bytes === null ? "null" : `[${bytes.join(",")}]`},"logprob":`,
      );
      this.#prefixes[id] = prefix;
    }
    return prefix;
  }
}

const TOKEN_KEYS = 4;
const TOP_KEYS = 3;

/** Tokens in columns; `top` holds the alternatives of all tokens, `topEnds[i]` where token i's end. */
interface Columns {
  table: TokenTable;
  ids: Uint32Array;
  logprobs: Float64Array;
  top: Columns | undefined;
  topEnds: Uint32Array | undefined;
}

/** Columns of a list of tokens, or undefined when a token has another shape. */
function toColumns(
  list: readonly unknown[],
  withTop: boolean,
  table: TokenTable,
): Columns | undefined {
  const n = list.length;
  const ids = new Uint32Array(n);
  const logprobs = new Float64Array(n);
  const tops: unknown[] = [];
  const topEnds = withTop ? new Uint32Array(n) : undefined;
  for (let i = 0; i < n; i++) {
    const t = list[i] as Record<string, unknown>;
    if (typeof t !== "object" || t === null) return undefined;
    const { token, logprob } = t;
    const b = t.bytes;
    if (typeof token !== "string" || typeof logprob !== "number" || !Number.isFinite(logprob))
      return undefined;
    if (Object.keys(t).length !== (withTop ? TOKEN_KEYS : TOP_KEYS)) return undefined;
    if (b !== null && !(Array.isArray(b) && b.every((x) => Number.isInteger(x)))) return undefined;
    ids[i] = table.idOf(token, b as number[] | null);
    logprobs[i] = logprob;
    if (topEnds) {
      const top = t.top_logprobs;
      if (!Array.isArray(top)) return undefined;
      for (const x of top) tops.push(x);
      topEnds[i] = tops.length;
    }
  }
  let top: Columns | undefined;
  if (topEnds) {
    top = toColumns(tops, false, table);
    if (!top) return undefined;
  }
  return { table, ids, logprobs, top, topEnds };
}

/**
 * Token `i` as the SDK's object. `shared`: its bytes array is the table's
 * frozen one, for output that JSON.stringify reads and lets go; otherwise a
 * copy of its own, for output a caller keeps and may edit.
 */
function tokenAt(c: Columns, i: number, shared: boolean): TokenLogprob {
  const id = c.ids[i] as number;
  const bytes = c.table.sharedBytes(id);
  const out: TokenLogprob = {
    token: c.table.tokens[id] as string,
    bytes: (shared ? bytes : (bytes?.slice() ?? null)) as number[] | null,
    logprob: c.logprobs[i] as number,
  };
  if (c.topEnds && c.top) {
    const to = c.topEnds[i] as number;
    const top: TokenLogprob[] = [];
    for (let k = i === 0 ? 0 : (c.topEnds[i - 1] as number); k < to; k++)
      top.push(tokenAt(c.top, k, shared));
    out.top_logprobs = top;
  }
  return out;
}

function fromColumns(c: Columns, shared: boolean): TokenLogprob[] {
  const out: TokenLogprob[] = [];
  for (let i = 0; i < c.ids.length; i++) out.push(tokenAt(c, i, shared));
  return out;
}

/** Longer than any number's shortest text ("-1.2345678901234567e-308" is 24). */
const NUMBER_BYTES = 26;
const TOP_KEY = utf8.encode(',"top_logprobs":[');

/** Bytes enough for the wire JSON of `c`'s tokens (its alternatives included). */
function sizeOf(c: Columns): number {
  let size = 2;
  for (let i = 0; i < c.ids.length; i++)
    size += c.table.prefix(c.ids[i] as number).byteLength + NUMBER_BYTES + TOP_KEY.byteLength + 3;
  return c.top ? size + sizeOf(c.top) : size;
}

/**
 * Writes a finite number as JSON.stringify does, in ASCII (checked finite
 * when the columns were made; a template prints numbers the same way).
 */
function writeNumber(out: Uint8Array, at: number, value: number): number {
  const text = `${value}`;
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/**
 * Writes the wire JSON of a token list as UTF-8 into `out` at `at`, in
 * choiceToJson's key order, straight from the tokens' cached prefixes: no
 * string to build, flatten and encode first. Returns where it ended.
 */
function writeColumns(c: Columns, out: Uint8Array, at: number): number {
  const { table, top, topEnds } = c;
  out[at++] = 0x5b; // [
  let k = 0;
  for (let i = 0; i < c.ids.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    const prefix = table.prefix(c.ids[i] as number);
    out.set(prefix, at);
    at = writeNumber(out, at + prefix.byteLength, c.logprobs[i] as number);
    if (top && topEnds) {
      out.set(TOP_KEY, at);
      at += TOP_KEY.byteLength;
      const to = topEnds[i] as number;
      for (let first = true; k < to; k++, first = false) {
        if (!first) out[at++] = 0x2c;
        const p = table.prefix(top.ids[k] as number);
        out.set(p, at);
        at = writeNumber(out, at + p.byteLength, top.logprobs[k] as number);
        out[at++] = 0x7d; // }
      }
      out[at++] = 0x5d; // ]
    }
    out[at++] = 0x7d;
  }
  out[at++] = 0x5d;
  return at;
}

type List = { columns: Columns } | { plain: TokenLogprob[] | null };

/**
 * A Choice's `logprobs` kept in columns. Reads like the SDK's object
 * (`content`, `refusal`); serializes to the same wire JSON.
 */
export class CompactLogprobs {
  #content: List;
  #refusal: List;

  private constructor(content: List, refusal: List) {
    this.#content = content;
    this.#refusal = refusal;
    // Own enumerable properties, so the object reads, spreads and compares
    // like the SDK's.
    for (const key of ["content", "refusal"] as const) {
      Object.defineProperty(this, key, {
        enumerable: true,
        configurable: true,
        get: () => this.#materialize(key),
        set: (value: TokenLogprob[] | null) => {
          if (key === "content") this.#content = { plain: value };
          else this.#refusal = { plain: value };
        },
      });
    }
  }

  declare content: TokenLogprob[] | null;
  declare refusal: TokenLogprob[] | null;

  /**
   * The compact form of an SDK `logprobs` object, or undefined when it has
   * keys or tokens of another shape (it is then kept as it is).
   */
  static from(logprobs: unknown): CompactLogprobs | undefined {
    if (typeof logprobs !== "object" || logprobs === null || logprobs instanceof CompactLogprobs)
      return undefined;
    const raw = logprobs as Record<string, unknown>;
    for (const key of Object.keys(raw))
      if (key !== "content" && key !== "refusal") return undefined;
    const content = CompactLogprobs.#list(raw.content);
    const refusal = CompactLogprobs.#list(raw.refusal);
    if (!content || !refusal) return undefined;
    return new CompactLogprobs(content, refusal);
  }

  static #list(value: unknown): List | undefined {
    if (value === null || value === undefined) return { plain: null };
    if (!Array.isArray(value)) return undefined;
    const columns = toColumns(value, true, TokenTable.current());
    return columns && { columns };
  }

  #materialize(key: "content" | "refusal"): TokenLogprob[] | null {
    const list = key === "content" ? this.#content : this.#refusal;
    if ("plain" in list) return list.plain;
    const plain = fromColumns(list.columns, false);
    if (key === "content") this.#content = { plain };
    else this.#refusal = { plain };
    return plain;
  }

  /** Whether `content` or `refusal` is a list, without building either. */
  hasTokens(): boolean {
    const has = (list: List) => !("plain" in list) || Array.isArray(list.plain);
    return has(this.#content) || has(this.#refusal);
  }

  /**
   * The SDK's form, freshly built: nothing in it is shared with this object.
   * Given a key, as JSON.stringify gives one, the tokens' bytes arrays are
   * shared (frozen) ones: the output is read once and let go, and building
   * fewer objects makes stringifying a group cost little more than
   * stringifying its wire JSON.
   */
  toJSON(key?: unknown): { content: TokenLogprob[] | null; refusal: TokenLogprob[] | null } {
    const shared = typeof key === "string";
    const read = (list: List) =>
      "plain" in list ? copyJson(list.plain) : fromColumns(list.columns, shared);
    return { content: read(this.#content), refusal: read(this.#refusal) };
  }

  /**
   * The wire JSON as UTF-8, as `choiceToJson` would write it; undefined when
   * a list was replaced by a plain one (the caller writes that itself).
   */
  wireBytes(): Uint8Array | undefined {
    if ("plain" in this.#content && this.#content.plain !== null) return undefined;
    if ("plain" in this.#refusal && this.#refusal.plain !== null) return undefined;
    const content = "plain" in this.#content ? undefined : this.#content.columns;
    const refusal = "plain" in this.#refusal ? undefined : this.#refusal.columns;
    const size =
      CONTENT_KEY.byteLength +
      REFUSAL_KEY.byteLength +
      (content ? sizeOf(content) : 4) +
      (refusal ? sizeOf(refusal) : 4) +
      1;
    // Not zeroed: every byte up to the end returned is written.
    const out = Buffer.allocUnsafe(size);
    out.set(CONTENT_KEY, 0);
    let at = content
      ? writeColumns(content, out, CONTENT_KEY.byteLength)
      : writeNull(out, CONTENT_KEY.byteLength);
    out.set(REFUSAL_KEY, at);
    at += REFUSAL_KEY.byteLength;
    at = refusal ? writeColumns(refusal, out, at) : writeNull(out, at);
    out[at++] = 0x7d; // }
    return out.subarray(0, at);
  }
}

const CONTENT_KEY = utf8.encode('{"content":');
const REFUSAL_KEY = utf8.encode(',"refusal":');
const NULL = utf8.encode("null");

function writeNull(out: Uint8Array, at: number): number {
  out.set(NULL, at);
  return at + NULL.byteLength;
}

/**
 * A Choice with its logprobs in the compact form when they have the SDK's
 * shape; otherwise the Choice as it is.
 */
export function compactChoice<T extends { logprobs?: unknown }>(choice: T): T {
  const compact = CompactLogprobs.from(choice.logprobs);
  if (!compact) return choice;
  return { ...choice, logprobs: compact };
}

/** `messages_and_choices` with each Choice's logprobs in the compact form where possible. */
export function compactItems<T>(items: T[]): T[] {
  return items.map((item) =>
    typeof item === "object" && item !== null && "message" in item
      ? compactChoice(item as { logprobs?: unknown })
      : item,
  ) as T[];
}
