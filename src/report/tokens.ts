// Sampled tokens as text: each logprob entry's text, probability and
// alternatives, lined up with the Choice's content when that can be done
// without a tokenizer.

/** One sampled token: its text, its logprob, and the alternatives the server returned. */
export type PageToken = [text: string, logprob: number, alternatives: [string | number, number][]];

/**
 * How the tokens relate to the content: `exact` (their texts join into the
 * content), `order` (one token per piece of the content, in order: the
 * tokens are ids whose text the server did not return), `strip` (they
 * cannot be lined up: shown apart from the text), `raw` (the logprobs are
 * not a list of entries: shown as JSON).
 */
export type TokenMode = "exact" | "order" | "strip" | "raw";

export interface PageTokens {
  mode: TokenMode;
  tokens: PageToken[];
  /** With `order` or `exact`: a last token the content does not show (an end-of-turn token). */
  extra?: number;
  raw?: unknown;
}

const TOKEN_ID = /^token_id:(\d+)$/;
const MAX_ALTERNATIVES = 5;
/** Decodes one alternative at a time (no stream: each call starts afresh); made on first use. */
let altDecoder: TextDecoder | undefined;

const isObject = (x: unknown): x is Record<string, unknown> =>
  !!x && typeof x === "object" && !Array.isArray(x);

/** A byte list as the server sends it (`bytes`), or undefined when it is not one. */
function byteList(value: unknown): Uint8Array | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const b of value)
    if (typeof b !== "number" || !Number.isInteger(b) || b < 0 || b > 255) return undefined;
  return Uint8Array.from(value as number[]);
}

/**
 * The text a token stands for: its string, unless that is a label
 * (`token_id:N` from vLLM, `bytes:\\x..` for part of a character), in which
 * case its bytes when they spell something else (vLLM sends the label's own
 * bytes: then the label stays).
 */
function textOf(entry: Record<string, unknown>, decoder: TextDecoder, stream: boolean): string {
  const token = typeof entry.token === "string" ? entry.token : String(entry.token ?? "");
  if (!TOKEN_ID.test(token) && !token.startsWith("bytes:")) return token;
  const bytes = byteList(entry.bytes);
  if (bytes) {
    const text = decoder.decode(bytes, { stream });
    if (!TOKEN_ID.test(text)) return text;
  }
  return token;
}

/** Content pieces a token could each stand for: words with their leading space, or finer. */
const SPLITS = [
  /\s*\S+|\s+/g,
  /\s?[\p{L}\p{M}]+|\s?\p{N}|\s?[^\s\p{L}\p{M}\p{N}]+|\s+/gu,
  /\s?[\p{L}\p{M}]+|\s?\p{N}|\s?[^\s\p{L}\p{M}\p{N}]|\s+/gu,
];

/**
 * A Choice's logprobs in the page's form. `content` is the Choice's message
 * text (null when the turn is a tool call).
 */
export function pageTokens(logprobs: unknown, content: string | null): PageTokens | undefined {
  if (logprobs === null || logprobs === undefined) return undefined;
  const entries = isObject(logprobs) ? logprobs.content : undefined;
  if (entries === null || entries === undefined) return undefined;
  if (!Array.isArray(entries) || !entries.every(isObject))
    return { mode: "raw", tokens: [], raw: logprobs };
  const decoder = new TextDecoder("utf-8");
  altDecoder ??= new TextDecoder("utf-8");
  const alts = altDecoder;
  const tokens: PageToken[] = entries.map((e) => {
    const alternatives: [string | number, number][] = [];
    if (Array.isArray(e.top_logprobs))
      for (const alt of e.top_logprobs) {
        if (alternatives.length >= MAX_ALTERNATIVES) break;
        if (!isObject(alt)) continue;
        // An id the server gave no text for travels as its number: the page is smaller.
        const text = textOf(alt, alts, false);
        const id = TOKEN_ID.exec(text);
        alternatives.push([id ? Number(id[1]) : text, numberOf(alt.logprob)]);
      }
    return [textOf(e, decoder, true), numberOf(e.logprob), alternatives];
  });
  const last = decoder.decode();
  if (last && tokens.length) (tokens[tokens.length - 1] as PageToken)[0] += last;
  if (content === null || content === "") return { mode: "strip", tokens };
  const ids = tokens.some((t) => TOKEN_ID.test(t[0]));
  if (!ids && tokens.map((t) => t[0]).join("") === content) return { mode: "exact", tokens };
  // An answer that ended by itself carries its end token last (`<eos>`,
  // `<|im_end|>`), as vLLM returns it: the content does not show it.
  if (!ids && tokens.length > 1 && joinedBefore(tokens, tokens.length - 1) === content)
    return { mode: "exact", tokens, extra: 1 };
  if (ids) {
    for (const split of SPLITS) {
      const pieces = content.match(split) ?? [];
      const extra = tokens.length - pieces.length;
      if (extra === 0 || extra === 1) {
        pieces.forEach((p, i) => {
          (tokens[i] as PageToken)[0] = p;
        });
        return extra ? { mode: "order", tokens, extra } : { mode: "order", tokens };
      }
    }
  }
  return { mode: "strip", tokens };
}

/** The texts of the first `n` tokens, joined. */
function joinedBefore(tokens: readonly PageToken[], n: number): string {
  let out = "";
  for (let i = 0; i < n; i++) out += (tokens[i] as PageToken)[0];
  return out;
}

/** A logprob as the page shows it (4 decimals are plenty for a probability): NaN when it is not one. */
function numberOf(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value)
    ? Math.round(value * 1e4) / 1e4
    : typeof value === "number"
      ? value
      : Number.NaN;
}
