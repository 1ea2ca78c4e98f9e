// The distinct tokens met while recording, each kept once: columns of
// recorded logprobs hold ids into this table instead of a text, a bytes
// array and an object per token.
import { numberedToken } from "./rules.js";
import { bytesOf, encodeUtf8 } from "./utf8.js";

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
  readonly #bytesField: (string | undefined)[] = [];
  readonly #heads: (string | undefined)[] = [];
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

  /** The id of a token met before whose bytes are its text's UTF-8, or -1. */
  knownPlain(token: string): number {
    return this.#plain.get(token) ?? -1;
  }

  /** The id of the token `token_id:N` met before with its text's UTF-8 as bytes, or -1. */
  knownNumbered(n: number): number {
    return n < this.#numbered.length ? (this.#numbered[n] as number) - 1 : -1;
  }

  /**
   * How a token starts, compact, up to its logprob: `{"token":"T","logprob":`
   * with T as it is (a scan compares it only with texts that need no escape).
   */
  head(id: number): string {
    let head = this.#heads[id];
    if (head === undefined) {
      head = `{"token":"${this.tokens[id]}","logprob":`;
      this.#heads[id] = head;
    }
    return head;
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
    } else return this.plainId(numberedToken(n));
    const id = this.plainId(numberedToken(n));
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

  /** The token's bytes with their key, compact, as a server writes them: `,"bytes":[…]` or `,"bytes":null`. */
  bytesField(id: number): string {
    let json = this.#bytesField[id];
    if (json === undefined) {
      const bytes = this.sharedBytes(id);
      json = `,"bytes":${bytes === null ? "null" : `[${bytes.join(",")}]`}`;
      this.#bytesField[id] = json;
    }
    return json;
  }

  /** The ids of the variants of the text `token` met so far (bytes not its UTF-8). */
  variants(token: string): readonly number[] | undefined {
    return this.#odd.get(token);
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
    const id = this.oddId(numberedToken(n), bytes);
    same.push(id);
    return id;
  }

  /** `{"token":…,"bytes":[…],"logprob":` of the token, as UTF-8. */
  prefix(id: number): Uint8Array {
    let prefix = this.#prefixes[id];
    if (prefix === undefined) {
      const bytes = this.sharedBytes(id);
      prefix = encodeUtf8(
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
