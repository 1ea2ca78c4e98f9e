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
// see capture.ts). The SDK's lists are read at the rollout's end, where the
// rollout settles what it recorded: work left for "after the call" in the
// same process lands on the next call's path, since the SDK sends the next
// request only after a turn of the event loop. Copies (the wrapped client's,
// a stream's) are the recorder's own: they wait until first written or read,
// so that neither a call nor its rollout's end waits for the token table.
// Past a cap of waiting tokens, the oldest are compacted in slices (held.ts).

import { keepClassName } from "../util/class-name.js";
import { copyJson } from "../util/copy-json.js";
import { TokenCapture } from "./capture.js";
import { type Columns, fromColumns, type TokenLogprob, toColumns } from "./columns.js";
import { type HeldSlot, holdForCompaction, mayReference, releaseHeld } from "./held.js";
import { LOGPROBS_KEYS } from "./rules.js";
import { TokenTable } from "./token-table.js";
import { logprobsWireBytes } from "./wire-bytes.js";

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
   * {@link from}). With `later`, compacting waits for {@link settle} (the
   * rollout's end, see {@link hold}) or the first read; until then the SDK's
   * lists are kept as they are, read at that point (a list whose tokens turn
   * out to have another shape is then kept as plain data), or, past
   * {@link MAX_REFERENCED_TOKENS} waiting, copied now. Editing the SDK's
   * objects before the rollout's end may change what is recorded; after it,
   * nothing does. With `"copy"`, the lists are copied now in one cheap pass
   * (texts by reference, no token looked up in the table), and the copy is
   * compacted when first written or read, or past the cap of waiting tokens:
   * for objects the caller keeps and may edit.
   */
  static capture(logprobs: unknown, later: boolean | "copy" = true): CompactLogprobs | undefined {
    if (typeof logprobs !== "object" || logprobs === null || logprobs instanceof CompactLogprobs)
      return undefined;
    const raw = logprobs as Record<string, unknown>;
    for (const key in raw) if (!LOGPROBS_KEYS.includes(key)) return undefined;
    if (later === true && mayReference()) {
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
   * Holds these logprobs for compaction (the rollout that recorded them
   * calls {@link settle} when it ends; copies wait for their first write or
   * read). Past
   * {@link MAX_WAITING_TOKENS} held tokens in all, the oldest are compacted
   * in slices after the current turn of the event loop.
   */
  hold(): void {
    const tokens = waitingTokens(this.#content) + waitingTokens(this.#refusal);
    if (tokens === 0 || this.#held) return;
    this.#held = holdForCompaction(this, tokens);
  }

  /** Leaves the held set (compacted, or its lists replaced). */
  #release(): void {
    const slot = this.#held;
    if (!slot) return;
    this.#held = undefined;
    releaseHeld(slot);
  }

  /** Whether no list waits to be compacted (compacted, plain, or absent). */
  isCompacted(): boolean {
    return !waits(this.#content) && !waits(this.#refusal);
  }

  /**
   * Reads the lists that are still the SDK's objects (done when their
   * rollout ends: the caller's objects must not be read later). Copies stay
   * as they are, held, until they are first written or read (see
   * {@link compact}) or more than {@link MAX_WAITING_TOKENS} wait: compacting
   * them at the rollout's end would keep its caller waiting for nothing.
   */
  settle(): void {
    // Both lists are referenced or both copied (see capture): compacting
    // both costs nothing more.
    if ("sdk" in this.#content || "sdk" in this.#refusal) this.compact();
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
    return logprobsWireBytes(columns(this.#content), columns(this.#refusal));
  }
}

/**
 * A Choice with its logprobs in the compact form when they have the SDK's
 * shape; otherwise the Choice as it is.
 */
export function compactChoice<T extends { logprobs?: unknown }>(
  choice: T,
  later: boolean | "copy" = false,
): T {
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

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(CompactLogprobs, "CompactLogprobs");
