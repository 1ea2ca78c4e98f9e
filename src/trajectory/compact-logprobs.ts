// Recorded logprobs in columns: the token strings joined in one string with
// their end offsets, the logprobs in a Float64Array, and the alternatives the
// same way. The SDK's form costs about 1 KB of heap per token with five
// alternatives (an object, a bytes array and a string for each); this form
// about a tenth of that. Reading `content` or `refusal` gives the SDK's form
// back (kept from then on, so edits stick); `toJSON()` gives the wire JSON.

import { copyJson } from "../util/copy-json.js";

/** A token logprob as the SDK gives it. */
interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs?: TokenLogprob[];
}

const utf8 = new TextEncoder();

/** Tokens in columns; `top` holds the alternatives of all tokens, `topEnds[i]` where token i's end. */
interface Columns {
  text: string;
  ends: Uint32Array;
  logprobs: Float64Array;
  /** Tokens whose bytes are not their text's UTF-8 (a split character), or null. */
  bytes: Map<number, number[] | null> | undefined;
  top: Columns | undefined;
  topEnds: Uint32Array | undefined;
}

// Most tokens are ASCII: their bytes are their char codes, with no encoder call.
function isAscii(token: string): boolean {
  for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) > 127) return false;
  return true;
}

function bytesOf(token: string): number[] {
  if (!isAscii(token)) return Array.from(utf8.encode(token));
  const out: number[] = new Array(token.length);
  for (let i = 0; i < token.length; i++) out[i] = token.charCodeAt(i);
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

const TOKEN_KEYS = 4;
const TOP_KEYS = 3;

/** Columns of a list of tokens, or undefined when a token has another shape. */
function toColumns(list: readonly unknown[], withTop: boolean): Columns | undefined {
  const n = list.length;
  const ends = new Uint32Array(n);
  const logprobs = new Float64Array(n);
  const texts: string[] = new Array(n);
  let bytes: Map<number, number[] | null> | undefined;
  const tops: unknown[] = [];
  const topEnds = withTop ? new Uint32Array(n) : undefined;
  let end = 0;
  for (let i = 0; i < n; i++) {
    const t = list[i] as Record<string, unknown>;
    if (typeof t !== "object" || t === null) return undefined;
    const { token, logprob } = t;
    const b = t.bytes;
    if (typeof token !== "string" || typeof logprob !== "number" || !Number.isFinite(logprob))
      return undefined;
    if (Object.keys(t).length !== (withTop ? TOKEN_KEYS : TOP_KEYS)) return undefined;
    if (b === null || (Array.isArray(b) && !sameBytes(token, b))) {
      if (b !== null && !b.every((x) => Number.isInteger(x))) return undefined;
      bytes ??= new Map();
      bytes.set(i, b === null ? null : [...(b as number[])]);
    } else if (!Array.isArray(b)) return undefined;
    texts[i] = token;
    end += token.length;
    ends[i] = end;
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
    top = toColumns(tops, false);
    if (!top) return undefined;
  }
  return { text: texts.join(""), ends, logprobs, bytes, top, topEnds };
}

function tokenAt(c: Columns, i: number): TokenLogprob {
  const token = c.text.slice(i === 0 ? 0 : c.ends[i - 1], c.ends[i]);
  const stored = c.bytes?.get(i);
  // In the wire's key order, so that toJSON() stringifies to the wire text.
  const out: TokenLogprob = {
    token,
    bytes: stored !== undefined ? stored && [...stored] : bytesOf(token),
    logprob: c.logprobs[i] as number,
  };
  if (c.topEnds && c.top) {
    const from = i === 0 ? 0 : (c.topEnds[i - 1] as number);
    const to = c.topEnds[i] as number;
    const top: TokenLogprob[] = new Array(to - from);
    for (let k = from; k < to; k++) top[k - from] = tokenAt(c.top, k);
    out.top_logprobs = top;
  }
  return out;
}

function fromColumns(c: Columns): TokenLogprob[] {
  const out: TokenLogprob[] = new Array(c.ends.length);
  for (let i = 0; i < c.ends.length; i++) out[i] = tokenAt(c, i);
  return out;
}

// A token's wire JSON up to its logprob, `{"token":…,"bytes":[…],"logprob":`,
// is the same wherever the token appears, and a tokenizer's vocabulary is
// bounded: written once per token and kept, the logprob is then all that is
// left to write. Bounded too, in case the tokens are not a vocabulary's.
const PREFIXES = new Map<string, string>();
const MAX_PREFIXES = 1 << 16;

function prefixOf(token: string): string {
  let prefix = PREFIXES.get(token);
  if (prefix === undefined) {
    prefix = `{"token":${JSON.stringify(token)},"bytes":[${bytesOf(token).join(",")}],"logprob":`;
    if (PREFIXES.size >= MAX_PREFIXES) PREFIXES.clear();
    PREFIXES.set(token, prefix);
  }
  return prefix;
}

/** Token `i` of `c` up to its logprob, with the bytes it was recorded with. */
function tokenPrefix(c: Columns, i: number): string {
  const token = c.text.slice(i === 0 ? 0 : c.ends[i - 1], c.ends[i]);
  const stored = c.bytes?.get(i);
  if (stored === undefined) return prefixOf(token);
  return `{"token":${JSON.stringify(token)},"bytes":${JSON.stringify(stored)},"logprob":`;
}

/** The wire JSON text of a token list, in choiceToJson's key order. */
function columnsJson(c: Columns): string {
  const n = c.ends.length;
  if (n === 0) return "[]";
  const top = c.top;
  const topEnds = c.topEnds;
  // Finite numbers (checked when the columns were made) print in templates as
  // JSON.stringify prints them.
  let out = "[";
  let k = 0;
  for (let i = 0; i < n; i++) {
    out += `${i === 0 ? "" : ","}${tokenPrefix(c, i)}${c.logprobs[i]}`;
    if (top && topEnds) {
      const to = topEnds[i] as number;
      out += ',"top_logprobs":[';
      for (let first = true; k < to; k++, first = false)
        out += `${first ? "" : ","}${tokenPrefix(top, k)}${top.logprobs[k]}}`;
      out += "]";
    }
    out += "}";
  }
  return `${out}]`;
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
    const columns = toColumns(value, true);
    return columns && { columns };
  }

  #materialize(key: "content" | "refusal"): TokenLogprob[] | null {
    const list = key === "content" ? this.#content : this.#refusal;
    if ("plain" in list) return list.plain;
    const plain = fromColumns(list.columns);
    if (key === "content") this.#content = { plain };
    else this.#refusal = { plain };
    return plain;
  }

  /** Whether `content` or `refusal` is a list, without building either. */
  hasTokens(): boolean {
    const has = (list: List) => !("plain" in list) || Array.isArray(list.plain);
    return has(this.#content) || has(this.#refusal);
  }

  /** The SDK's form, freshly built: nothing in it is shared with this object. */
  toJSON(): { content: TokenLogprob[] | null; refusal: TokenLogprob[] | null } {
    const read = (list: List) =>
      "plain" in list ? copyJson(list.plain) : fromColumns(list.columns);
    return { content: read(this.#content), refusal: read(this.#refusal) };
  }

  /**
   * The wire JSON text, as `choiceToJson` would write it; undefined when a
   * list was replaced by a plain one (the caller writes that itself).
   */
  wireText(): string | undefined {
    if ("plain" in this.#content && this.#content.plain !== null) return undefined;
    if ("plain" in this.#refusal && this.#refusal.plain !== null) return undefined;
    const text = (list: List) => ("plain" in list ? "null" : columnsJson(list.columns));
    return `{"content":${text(this.#content)},"refusal":${text(this.#refusal)}}`;
  }
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
