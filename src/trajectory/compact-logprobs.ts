// Recorded logprobs in columns: each token as an id into a table of the
// distinct tokens met (a tokenizer's vocabulary is bounded), the logprobs
// beside them, and the alternatives the same way. The SDK's form costs
// about 1 KB of heap per token with five alternatives (an object, a bytes
// array and a string for each); this form 12 bytes per token and
// alternative. Reading `content` or `refusal` gives the SDK's form back
// (kept from then on, so edits stick); `toJSON()` gives the wire JSON.
//
// A recorded call reads nothing: it keeps the SDK's lists (or, with many
// tokens already waiting, copies them into a TokenCapture in one cheap pass,
// see logprob-capture.ts). Compacting waits for the rollout's end, where the
// rollout compacts what it recorded: work left for "after the call" in the
// same process lands on the next call's path, since the SDK sends the next
// request only after a turn of the event loop. Past a cap of waiting tokens,
// the oldest are compacted in slices.

import { copyJson } from "../util/copy-json.js";
import { TokenCapture } from "./logprob-capture.js";

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

/**
 * The distinct tokens recorded, each with its bytes and the start of its wire
 * JSON (`{"token":…,"bytes":[…],"logprob":`), both made once, when first
 * asked for. Columns hold ids into a table; a full table is left to the
 * columns that use it (and freed with them) and a new one is started.
 */
export class TokenTable {
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
  readonly #bytesJson: (string | undefined)[] = [];
  readonly #numberedOdd = new Map<number, number[]>();
  readonly #plain = new Map<string, number>();
  // The ids of `token_id:N` tokens (vLLM's spelling with
  // return_tokens_as_token_ids) whose bytes are their text's UTF-8, by N,
  // plus one (0: not met yet): a scan of the answer's bytes finds them without
  // making the text.
  #numbered = new Uint32Array(1024);
  // Tokens whose bytes are not their text's UTF-8 (a character split over
  // tokens), or null: the ids of each text's variants.
  readonly #odd = new Map<string, number[]>();

  /** The id of a token whose bytes are its text's UTF-8. */
  plainId(token: string): number {
    let id = this.#plain.get(token);
    if (id === undefined) {
      id = this.tokens.push(token) - 1;
      this.#plain.set(token, id);
    }
    return id;
  }

  /** The id of the token `token_id:N` whose bytes are its text's UTF-8 (N a safe integer ≥ 0). */
  numberedId(n: number): number {
    let slots = this.#numbered;
    if (n < slots.length) {
      const slot = slots[n] as number;
      if (slot !== 0) return slot - 1;
    } else if (n < 1 << 20) {
      let size = slots.length * 2;
      while (size <= n) size *= 2;
      const grown = new Uint32Array(size);
      grown.set(slots);
      this.#numbered = slots = grown;
    } else return this.plainId(`token_id:${n}`);
    const id = this.plainId(`token_id:${n}`);
    slots[n] = id + 1;
    return id;
  }

  /**
   * The id of a token whose bytes are not its text's UTF-8 (or null).
   * `bytes` is copied only when the variant is new.
   */
  oddId(token: string, bytes: readonly number[] | null): number {
    let same = this.#odd.get(token);
    if (same === undefined) {
      same = [];
      this.#odd.set(token, same);
    }
    for (const id of same) if (sameList(this.#bytes[id], bytes)) return id;
    const id = this.tokens.push(token) - 1;
    this.#bytes[id] = bytes && Object.freeze([...bytes]);
    same.push(id);
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

  /** The token's bytes as compact JSON (`[…]` or `null`), as a server writes them. */
  bytesJson(id: number): string {
    let json = this.#bytesJson[id];
    if (json === undefined) {
      const bytes = this.sharedBytes(id);
      json = bytes === null ? "null" : `[${bytes.join(",")}]`;
      this.#bytesJson[id] = json;
    }
    return json;
  }

  /** The ids of the variants of `token_id:N` met so far (bytes not its text's UTF-8). */
  numberedVariants(n: number): readonly number[] | undefined {
    return this.#numberedOdd.get(n);
  }

  /**
   * The id of the token `token_id:N` with `bytes` that are not its text's
   * UTF-8 (or null). `bytes` is copied only when the variant is new.
   */
  numberedOddId(n: number, bytes: readonly number[] | null): number {
    let same = this.#numberedOdd.get(n);
    if (same === undefined) {
      same = [];
      this.#numberedOdd.set(n, same);
    }
    for (const id of same) if (sameList(this.#bytes[id], bytes)) return id;
    const id = this.oddId(`token_id:${n}`, bytes);
    same.push(id);
    return id;
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

function sameList(a: readonly number[] | null | undefined, b: readonly number[] | null): boolean {
  if (a === null || b === null || a === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Tokens in columns; `top` holds the alternatives of all tokens, `topEnds[i]` where token i's end. */
export interface Columns {
  table: TokenTable;
  ids: Uint32Array;
  logprobs: Float64Array;
  top: Columns | undefined;
  topEnds: Uint32Array | undefined;
}

/**
 * The columns of captured tokens: their texts become ids of `table`. The
 * columns share one buffer (logprobs first, for their alignment): one
 * allocation per list, 12 bytes per token (16 with alternatives' ends).
 */
function toColumns(capture: TokenCapture, table: TokenTable): Columns {
  const n = capture.length;
  const ends = capture.topEnds;
  const buffer = new ArrayBuffer(n * (ends ? 16 : 12));
  const logprobs = new Float64Array(buffer, 0, n);
  const ids = new Uint32Array(buffer, n * 8, n);
  const topEnds = ends && new Uint32Array(buffer, n * 12, n);
  const { texts, odd } = capture;
  logprobs.set(capture.logprobs);
  if (topEnds) topEnds.set(ends as number[]);
  if (odd === undefined) for (let i = 0; i < n; i++) ids[i] = table.plainId(texts[i] as string);
  else
    for (let i = 0; i < n; i++) {
      const bytes = odd.get(i);
      ids[i] =
        bytes === undefined
          ? table.plainId(texts[i] as string)
          : table.oddId(texts[i] as string, bytes);
    }
  const top = capture.top && toColumns(capture.top, table);
  return { table, ids, logprobs, top, topEnds };
}

/**
 * Columns from ids of `table` and logprobs gathered in plain arrays (a scan
 * of the answer's bytes): one buffer, laid out as {@link toColumns} does.
 */
export function columnsOf(
  table: TokenTable,
  ids: readonly number[],
  logprobs: readonly number[],
  top?: { columns: Columns; ends: readonly number[] },
): Columns {
  const n = ids.length;
  const buffer = new ArrayBuffer(n * (top ? 16 : 12));
  const lp = new Float64Array(buffer, 0, n);
  const idColumn = new Uint32Array(buffer, n * 8, n);
  lp.set(logprobs);
  idColumn.set(ids);
  let topEnds: Uint32Array | undefined;
  if (top) {
    topEnds = new Uint32Array(buffer, n * 12, n);
    topEnds.set(top.ends);
  }
  return { table, ids: idColumn, logprobs: lp, top: top?.columns, topEnds };
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

/**
 * One list (`content` or `refusal`): in columns; copied, waiting to be
 * compacted (streamed chunks); the SDK's own list, read when compacted; or
 * plain data (another shape, or set by the caller).
 */
type List =
  | { columns: Columns }
  | { captured: TokenCapture }
  | { sdk: readonly unknown[] }
  | { plain: TokenLogprob[] | null };

/** How long one slice of compacting may hold the event loop, in ms. */
const SLICE_MS = 1;
/**
 * Tokens (alternatives included) that may wait for their rollout's end, as
 * the SDK's objects or as copies. Past this, the oldest are compacted in
 * slices: a rollout that runs long, or many at once, keep at most this many
 * in a larger form than the compact one.
 */
export const MAX_WAITING_TOKENS = 1 << 18;
/**
 * While fewer tokens than this wait, a recorded answer's lists are kept as
 * the SDK made them and read at the rollout's end: nothing is read on the
 * call path. Past it (many rollouts at once), they are copied on the call
 * path instead (a cheap pass, about 16 bytes a token against about 180 for
 * the SDK's objects), so that a crowd of open rollouts does not keep every
 * answer's objects alive for the garbage collector to walk.
 */
export const MAX_REFERENCED_TOKENS = 1 << 16;
/**
 * Captured logprobs held for compaction, oldest first (a Set keeps insertion
 * order). Held weakly: logprobs of a rollout that can never end (its promise
 * was collected unsettled) are garbage with it, and leave the count then.
 */
const held = new Set<WeakRef<CompactLogprobs>>();
let heldTokens = 0;
interface HeldSlot {
  ref: WeakRef<CompactLogprobs>;
  tokens: number;
}
const collected = new FinalizationRegistry<HeldSlot>((slot) => {
  if (held.delete(slot.ref)) heldTokens -= slot.tokens;
});
let scheduled = false;

function scheduleSlices(): void {
  if (scheduled) return;
  scheduled = true;
  // Unref'd: compacting is worth no wait at exit.
  setImmediate(compactOldest).unref();
}

/** Compacts held logprobs, oldest first, for about {@link SLICE_MS}, until under the cap. */
function compactOldest(): void {
  scheduled = false;
  const until = performance.now() + SLICE_MS;
  for (const ref of held) {
    if (heldTokens <= MAX_WAITING_TOKENS) return;
    const next = ref.deref();
    if (next) next.compact();
    else held.delete(ref);
    if (performance.now() >= until) break;
  }
  if (heldTokens > MAX_WAITING_TOKENS) scheduleSlices();
}

/** Whether `list` still waits to be compacted. */
function waits(list: List): boolean {
  return "captured" in list || "sdk" in list;
}

/** How many tokens (alternatives included) `list` holds while it waits. */
function waitingTokens(list: List): number {
  if ("captured" in list) return list.captured.length + (list.captured.top?.length ?? 0);
  if (!("sdk" in list)) return 0;
  const first = list.sdk[0] as { top_logprobs?: unknown } | undefined;
  const top = Array.isArray(first?.top_logprobs) ? first.top_logprobs.length : 0;
  return list.sdk.length * (1 + top);
}

/** The columns of a waiting list, or the SDK's list as plain data when a token has another shape. */
function compacted(list: List, table: TokenTable): List {
  if ("captured" in list) return { columns: toColumns(list.captured, table) };
  if (!("sdk" in list)) return list;
  const captured = TokenCapture.of(list.sdk);
  return captured ? { columns: toColumns(captured, table) } : { plain: list.sdk as TokenLogprob[] };
}

/**
 * A Choice's `logprobs` kept in columns. Reads like the SDK's object
 * (`content`, `refusal`); serializes to the same wire JSON.
 */
export class CompactLogprobs {
  #content: List;
  #refusal: List;
  /** How {@link hold} counted these logprobs (undefined: not held). */
  #held: HeldSlot | undefined;

  private constructor(content: List, refusal: List) {
    this.#content = content;
    this.#refusal = refusal;
    // Own enumerable properties, so the object reads, spreads and compares
    // like the SDK's. The accessors are shared by every instance (they read
    // `this`): objects with the same accessors share one hidden class, where
    // a closure per object would give each its own.
    Object.defineProperties(this, CompactLogprobs.#accessors);
  }

  static #accessors: PropertyDescriptorMap;
  static {
    const accessor = (key: "content" | "refusal"): PropertyDescriptor => ({
      enumerable: true,
      configurable: true,
      get(this: CompactLogprobs) {
        return this.#materialize(key);
      },
      set(this: CompactLogprobs, value: TokenLogprob[] | null) {
        this.#release();
        if (key === "content") this.#content = { plain: value };
        else this.#refusal = { plain: value };
      },
    });
    CompactLogprobs.#accessors = { content: accessor("content"), refusal: accessor("refusal") };
  }

  declare content: TokenLogprob[] | null;
  declare refusal: TokenLogprob[] | null;

  /**
   * The compact form of an SDK `logprobs` object, or undefined when it has
   * keys or tokens of another shape (it is then kept as it is).
   */
  static from(logprobs: unknown): CompactLogprobs | undefined {
    return CompactLogprobs.capture(logprobs, false);
  }

  /**
   * An SDK `logprobs` object in the compact form (or undefined, as
   * {@link from}). With `later`, compacting waits for {@link compact} (the
   * rollout's end, see {@link hold}) or the first read; until then the SDK's
   * lists are kept as they are, read at that point (a list whose tokens turn
   * out to have another shape is then kept as plain data), or, past
   * {@link MAX_REFERENCED_TOKENS} waiting, copied now. Editing the SDK's
   * objects before the rollout's end may change what is recorded; after it,
   * nothing does.
   */
  static capture(logprobs: unknown, later = true): CompactLogprobs | undefined {
    if (typeof logprobs !== "object" || logprobs === null || logprobs instanceof CompactLogprobs)
      return undefined;
    const raw = logprobs as Record<string, unknown>;
    for (const key in raw) if (key !== "content" && key !== "refusal") return undefined;
    if (later && heldTokens < MAX_REFERENCED_TOKENS) {
      const content = CompactLogprobs.#sdkList(raw.content);
      const refusal = CompactLogprobs.#sdkList(raw.refusal);
      return content && refusal && new CompactLogprobs(content, refusal);
    }
    const content = CompactLogprobs.#list(raw.content);
    const refusal = CompactLogprobs.#list(raw.refusal);
    if (!content || !refusal) return undefined;
    const compact = new CompactLogprobs(content, refusal);
    if (!later) compact.compact();
    return compact;
  }

  /** Lists already in columns (a scan of the answer's bytes; null: the list is null). */
  static fromColumns(content: Columns | null, refusal: Columns | null): CompactLogprobs {
    const list = (c: Columns | null): List => (c ? { columns: c } : { plain: null });
    return new CompactLogprobs(list(content), list(refusal));
  }

  /** Streamed tokens, captured chunk by chunk (null: the list never came), compacted later. */
  static fromCaptures(content: TokenCapture | null, refusal: TokenCapture | null): CompactLogprobs {
    const list = (c: TokenCapture | null): List => (c ? { captured: c } : { plain: null });
    return new CompactLogprobs(list(content), list(refusal));
  }

  static #sdkList(value: unknown): List | undefined {
    if (value === null || value === undefined) return { plain: null };
    return Array.isArray(value) ? { sdk: value } : undefined;
  }

  static #list(value: unknown): List | undefined {
    if (value === null || value === undefined) return { plain: null };
    if (!Array.isArray(value)) return undefined;
    const captured = TokenCapture.of(value);
    return captured && { captured };
  }

  /**
   * Holds these logprobs for compaction by their owner (the rollout that
   * recorded them calls {@link compact} when it ends). Past
   * {@link MAX_WAITING_TOKENS} held tokens in all, the oldest are compacted
   * in slices after the current turn of the event loop.
   */
  hold(): void {
    const tokens = waitingTokens(this.#content) + waitingTokens(this.#refusal);
    if (tokens === 0 || this.#held) return;
    const slot: HeldSlot = { ref: new WeakRef(this), tokens };
    held.add(slot.ref);
    collected.register(this, slot, slot);
    this.#held = slot;
    heldTokens += tokens;
    if (heldTokens > MAX_WAITING_TOKENS) scheduleSlices();
  }

  /** Leaves the held set (compacted, or its lists replaced). */
  #release(): void {
    const slot = this.#held;
    if (!slot) return;
    this.#held = undefined;
    collected.unregister(slot);
    if (held.delete(slot.ref)) heldTokens -= slot.tokens;
  }

  /** Whether no list waits to be compacted (compacted, plain, or absent). */
  isCompacted(): boolean {
    return !waits(this.#content) && !waits(this.#refusal);
  }

  /** Turns waiting lists into columns of the token table (done once; cheap when done). */
  compact(): void {
    this.#release();
    if (this.isCompacted()) return;
    // One table for both lists: a Choice's columns never span two.
    const table = TokenTable.current();
    this.#content = compacted(this.#content, table);
    this.#refusal = compacted(this.#refusal, table);
  }

  #materialize(key: "content" | "refusal"): TokenLogprob[] | null {
    this.compact();
    const list = key === "content" ? this.#content : this.#refusal;
    if (!("columns" in list)) return (list as { plain: TokenLogprob[] | null }).plain;
    const plain = fromColumns(list.columns, false);
    if (key === "content") this.#content = { plain };
    else this.#refusal = { plain };
    return plain;
  }

  /** How many tokens `content` holds (undefined when it is null), without building it. */
  contentLength(): number | undefined {
    const list = this.#content;
    if ("columns" in list) return list.columns.ids.length;
    if ("captured" in list) return list.captured.length;
    if ("sdk" in list) return list.sdk.length;
    return list.plain ? list.plain.length : undefined;
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
    this.compact();
    const shared = typeof key === "string";
    const read = (list: List) =>
      "plain" in list
        ? copyJson(list.plain)
        : fromColumns((list as { columns: Columns }).columns, shared);
    return { content: read(this.#content), refusal: read(this.#refusal) };
  }

  /**
   * The wire JSON as UTF-8, as `choiceToJson` would write it; undefined when
   * a list was replaced by a plain one (the caller writes that itself).
   */
  wireBytes(): Uint8Array | undefined {
    this.compact();
    if ("plain" in this.#content && this.#content.plain !== null) return undefined;
    if ("plain" in this.#refusal && this.#refusal.plain !== null) return undefined;
    const columns = (list: List) => ("columns" in list ? list.columns : undefined);
    const content = columns(this.#content);
    const refusal = columns(this.#refusal);
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
export function compactChoice<T extends { logprobs?: unknown }>(choice: T, later = false): T {
  const compact = CompactLogprobs.capture(choice.logprobs, later);
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
