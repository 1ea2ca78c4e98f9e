// Token lineage: whether a later turn's prompt holds exactly the tokens an
// earlier turn of the same history was shown and sampled. A chat template
// that renders an earlier turn again differently (reasoning stripped, tool
// call arguments re-serialized, whitespace changed) breaks it, and a history
// trained as one sequence would then condition the later turn on tokens the
// model never had. Everything here is one pass over integer arrays.
import { CompactLogprobs } from "../logprobs/index.js";

/**
 * How the recorder builds histories from the token ids a server returns:
 *
 * - `"tokens"` (default): a turn extends its history only when its
 *   `prompt_token_ids` start with the previous Choice's `prompt_token_ids`
 *   followed by that Choice's `token_ids`; otherwise it goes on in a new
 *   additional history holding its full prompt, and `logs` say where the
 *   tokens diverged (as OpenPipe ART does since its PR #782).
 * - `"text"`: histories are built by comparing messages, and a turn whose
 *   tokens diverge stays in its history whatever the tokens are; each
 *   divergence is said in `logs`. This keeps more than ART's
 *   `reconcile_text_equivalent_tokenizations` opt-in, which merges only
 *   tokenizations that decode to the same text: here a template that drops
 *   earlier reasoning or re-serialises tool arguments is kept too.
 * - `"off"`: no token check at all (histories by message comparison only).
 *
 * Choices without token ids are always attributed by message comparison.
 */
export type LineageMode = "tokens" | "text" | "off";

export const LINEAGE_MODES: readonly LineageMode[] = ["tokens", "text", "off"];

/** How many tokens either side of a divergence the logs show. */
export const WINDOW = 4;

/** The start of every log line that reports a split (the report counts them by it). */
export const SPLIT_LOG = "token lineage split:";

/** The token ids of a Choice-like object, when it carries both lists. */
export interface ChoiceTokens {
  prompt: readonly number[];
  sampled: readonly number[];
  /** The last sampled token is a stop token (EOS or a `stop_token_ids` entry), not text. */
  endsOnStopToken: boolean;
}

/** The token ids `choice` carries, or undefined when it lacks either list. */
export function choiceTokens(choice: unknown): ChoiceTokens | undefined {
  if (typeof choice !== "object" || choice === null) return undefined;
  const c = choice as {
    prompt_token_ids?: unknown;
    token_ids?: unknown;
    finish_reason?: unknown;
    stop_reason?: unknown;
  };
  if (!Array.isArray(c.prompt_token_ids) || !Array.isArray(c.token_ids)) return undefined;
  // vLLM keeps the token it stopped on in `token_ids`: the EOS token
  // (stop_reason null) or a `stop_token_ids` entry (stop_reason that id). A
  // template renders the turn's end its own way, so that one token may differ
  // or be left out. A stop string (stop_reason a string) is text the message
  // no longer holds: its tokens must still be in the next prompt.
  const stopped = c.finish_reason === "stop" || c.finish_reason === "tool_calls";
  const reason = c.stop_reason;
  return {
    prompt: c.prompt_token_ids as number[],
    sampled: c.token_ids as number[],
    endsOnStopToken:
      stopped && c.token_ids.length > 0 && (reason == null || typeof reason === "number"),
  };
}

/**
 * The first position at which `prompt` departs from `prev.prompt` followed by
 * `prev.sampled`, or -1 when it extends them. The last sampled token of a
 * turn that ended on a stop token may differ (a template writes its own
 * end-of-turn token in its place), unless the prompt holds the sampled
 * token right after the one that differs: that shape is a token
 * inserted before it, which means the server left its stop token out of
 * `token_ids` and the last sampled token was text (Qwen3 samples
 * `</tool_call>` `\n` and its template renders `</tool_call>` `<|im_end|>`
 * `\n`). Forgiven there, a trainer would pair the text token's logprob with
 * the end-of-turn position.
 */
export function lineageDeparture(prev: ChoiceTokens, prompt: readonly number[]): number {
  const before = prev.prompt;
  const sampled = prev.sampled;
  const p = before.length;
  const n = p + sampled.length;
  const m = Math.min(prompt.length, n);
  const head = Math.min(p, m);
  for (let i = 0; i < head; i++) if (prompt[i] !== before[i]) return i;
  for (let i = p; i < m; i++)
    if (prompt[i] !== sampled[i - p]) {
      if (i === n - 1 && prev.endsOnStopToken && prompt[n] !== sampled[i - p]) return -1;
      return i;
    }
  return prompt.length >= n ? -1 : prompt.length;
}

/**
 * The tokens a departure's message shows, read out of the sequences (a few
 * numbers, no text): the message is written from them only when asked for.
 */
interface Departure {
  at: number;
  /** Where both windows start. */
  from: number;
  prevPromptLength: number;
  expected: { length: number; tokens: number[] };
  got: { length: number; tokens: number[] };
}

function departureAt(prev: ChoiceTokens, prompt: readonly number[], at: number): Departure {
  const p = prev.prompt;
  const n = p.length + prev.sampled.length;
  const from = Math.max(0, at - WINDOW);
  const expected: number[] = [];
  for (let i = from; i < Math.min(n, at + WINDOW + 1); i++)
    expected.push((i < p.length ? p[i] : prev.sampled[i - p.length]) as number);
  const got: number[] = [];
  for (let i = from; i < Math.min(prompt.length, at + WINDOW + 1); i++)
    got.push(prompt[i] as number);
  return {
    at,
    from,
    prevPromptLength: p.length,
    expected: { length: n, tokens: expected },
    got: { length: prompt.length, tokens: got },
  };
}

/** The window of one sequence, built by concatenation (no arrays). */
function windowText(w: Departure["expected"], d: Departure): string {
  const { at, from } = d;
  const to = from + w.tokens.length;
  let out = from > 0 ? "…" : "";
  for (let i = from; i < to; i++) {
    const id = w.tokens[i - from];
    const token = i === at ? `[${id}]` : String(id);
    out = out === "" ? token : `${out} ${token}`;
  }
  if (at >= w.length) out = out === "" ? "[end]" : `${out} [end]`;
  return to < w.length ? `${out} …` : out;
}

/** The message of a divergence, for logs and validation problems. */
export function describeDeparture(
  prev: ChoiceTokens,
  prompt: readonly number[],
  at: number,
): string {
  return departureText(departureAt(prev, prompt, at));
}

/**
 * {@link describeDeparture}, its tokens read now and its text written when
 * first asked for: a split's log line costs its text only when read.
 */
export function departureNote(
  prev: ChoiceTokens,
  prompt: readonly number[],
  at: number,
): () => string {
  const d = departureAt(prev, prompt, at);
  return () => departureText(d);
}

function departureText(d: Departure): string {
  const where =
    d.at < d.prevPromptLength
      ? "inside the previous turn's prompt"
      : `at token ${d.at - d.prevPromptLength} of the previous turn's sampled tokens`;
  return `its prompt_token_ids depart at position ${d.at} (${where}): the lineage holds ${windowText(d.expected, d)}, the prompt holds ${windowText(d.got, d)}`;
}

/**
 * How many `logprobs.content` entries a Choice holds (compact or plain), or
 * undefined when it has no such list.
 */
export function logprobCount(logprobs: unknown): number | undefined {
  if (logprobs instanceof CompactLogprobs) return logprobs.contentLength();
  if (typeof logprobs !== "object" || logprobs === null) return undefined;
  const content = (logprobs as { content?: unknown }).content;
  return Array.isArray(content) ? content.length : undefined;
}

/** A token sequence held as two arrays read one after the other (a prompt, then its sampled tokens). */
export interface TokenSequence {
  head: readonly number[];
  tail: readonly number[];
}

const lengthOf = (x: TokenSequence) => x.head.length + x.tail.length;
const tokenAt = (x: TokenSequence, i: number) =>
  (i < x.head.length ? x.head[i] : x.tail[i - x.head.length]) as number;

/**
 * How many tokens of `sequences` a prefix tree would hold once but the
 * trainer reads again: the sum of their lengths less the number of distinct
 * prefixes. Sorting puts each sequence next to the one it shares most with.
 * Nothing is copied: a sequence may be two arrays read one after the other.
 */
export function duplicatePrefixTokens(
  sequences: readonly (readonly number[] | TokenSequence)[],
): number {
  if (sequences.length < 2) return 0;
  const seqs = sequences.map((x) =>
    Array.isArray(x) ? { head: x as readonly number[], tail: [] } : (x as TokenSequence),
  );
  seqs.sort(compareTokens);
  let shared = 0;
  for (let i = 1; i < seqs.length; i++)
    shared += commonPrefix(seqs[i - 1] as TokenSequence, seqs[i] as TokenSequence);
  return shared;
}

function compareTokens(a: TokenSequence, b: TokenSequence): number {
  const n = Math.min(lengthOf(a), lengthOf(b));
  for (let i = 0; i < n; i++) {
    const d = tokenAt(a, i) - tokenAt(b, i);
    if (d !== 0) return d;
  }
  return lengthOf(a) - lengthOf(b);
}

function commonPrefix(a: TokenSequence, b: TokenSequence): number {
  const n = Math.min(lengthOf(a), lengthOf(b));
  let i = 0;
  while (i < n && tokenAt(a, i) === tokenAt(b, i)) i++;
  return i;
}
