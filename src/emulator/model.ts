// The emulator's trainable policy: a tiny bag-of-words model over a word
// vocabulary. The logit of the next token is the sum of the context rows of
// the prompt's features, a bigram row of the previous token, and shared copy
// weights (plus fixed priors) for words a tool answered or the user asked
// about (MODEL.md).
// Tool names and argument words are tokens of the same model, so RL moves
// them like any other token. Everything is plain arrays.
import { findJsonProblem } from "../util/json-check.js";

/** The words the policy can say, then its special tokens. */
export const WORDS = [
  "red",
  "green",
  "blue",
  "yellow",
  "cat",
  "dog",
  "bird",
  "fish",
  "apple",
  "banana",
  "cherry",
  "grape",
  "one",
  "two",
  "three",
  "four",
  "yes",
  "no",
  "hello",
  "the",
  "a",
  "is",
  "and",
  "ok",
] as const;
export const EOS = "<eos>";
export const UNK = "<unk>";
export const TOOL = "<tool>";
/** How many tools of a request the policy tells apart (one name token each). */
export const TOOL_SLOTS = 16;
const SLOT_NAMES = Array.from({ length: TOOL_SLOTS }, (_, i) => `<tool_${i}>`);
export const VOCAB: readonly string[] = [...WORDS, EOS, UNK, TOOL, ...SLOT_NAMES];
export const V = VOCAB.length;
export const EOS_ID = VOCAB.indexOf(EOS);
export const UNK_ID = VOCAB.indexOf(UNK);
export const TOOL_ID = VOCAB.indexOf(TOOL);
/** Id of the name token of the request's `i`-th tool (tools share a token every 16th). */
export const slotId = (toolIndex: number) => TOOL_ID + 1 + (toolIndex % TOOL_SLOTS);
/** The tool index (below 16) a name token stands for, or -1. */
export const slotOf = (id: number) => (id > TOOL_ID && id < V ? id - TOOL_ID - 1 : -1);
const INDEX = new Map(VOCAB.map((w, i) => [w, i]));
const W = WORDS.length;

// Feature rows: a vocabulary word of the last user message, a vocabulary word
// of a tool result after it, "a tool answered", hashed buckets for the user's
// other words (so "colour" and "shape" are told apart), and hashed buckets
// for the question as a whole (so two questions that share most of their
// words are still told apart, as a language model tells them apart).
const USER_ROW = 0;
const TOOL_RESULT_ROW = W;
const TOOL_SEEN_ROW = 2 * W;
const HASH_ROW = 2 * W + 1;
export const HASH_BUCKETS = 64;
const QUESTION_ROW = HASH_ROW + HASH_BUCKETS;
export const QUESTION_BUCKETS = 64;
export const FEATURE_ROWS = QUESTION_ROW + QUESTION_BUCKETS;
/**
 * The question's own row counts this many times in the logits (and so in the
 * gradient): what is learnt about one question mostly stays with it, and the
 * rows of words shared by every question (`the`, `what`, `is`) move the
 * others less, so one question's signal does not drag them all onto its answer.
 */
const QUESTION_WEIGHT = 2;
/**
 * "A tool has answered" counts this many times, unscaled by the prompt's
 * length: whether to look something up or to answer now is what separates
 * the turns of an agent loop, and it is learnt from every rollout.
 */
const TOOL_SEEN_WEIGHT = 3;

/**
 * Where in an answer a token is, as the context weights see it: its first
 * token (`start`), a later word of a text answer (`text`), a tool's name
 * (`name`) or an argument word (`arg`); and whether a tool has answered since
 * the last user message. Each of these eight has its own context table, as a
 * language model's next-token distribution depends on where it is and on
 * what the conversation holds: learning to call a tool on a question does not
 * make the reply to its result call it again, and learning to stop after a
 * word does not make a reply start with `<eos>` (an empty answer).
 */
const PLACES = ["start", "text", "name", "arg"] as const;
const TABLE = FEATURE_ROWS * V;
/** The offset of the context table of position `at` (`answered`: a tool has answered). */
function tableOf(at: Position, answered: boolean): number {
  // `end` holds only `<eos>` (nothing to learn): it reads the argument table.
  const place = PLACES.indexOf(at.kind === "end" ? "arg" : at.kind);
  return TABLE * (2 * place + (answered ? 1 : 0));
}

/**
 * Parameters of one checkpoint: a context table (FEATURE_ROWS × V) per place
 * of `PLACES`, before and after a tool answered, then the bigram table (V ×
 * V), row-major.
 */
export type Params = number[];
const BIGRAM = 2 * PLACES.length * TABLE;
/**
 * Copy weights, shared by every word so that "say what the tool answered" or
 * "pass the word the user asked about" is one thing to learn, not one per
 * word: one per kind of position, added to the logit of a word that a tool
 * result holds, and one added to an argument word that the user's message holds.
 */
const COPY = BIGRAM + V * V;
const KINDS = ["start", "text", "name", "arg"] as const;
/** The copy weight of a kind of position (`end` shares `arg`'s: it holds no word). */
const copyIndex = (kind: Position["kind"]) => COPY + KINDS.indexOf(kind === "end" ? "arg" : kind);
const COPY_USER_ARG = COPY + KINDS.length;
export const PARAM_COUNT = COPY_USER_ARG + 1;

export function initialParams(): Params {
  return new Array(PARAM_COUNT).fill(0);
}

/** Parameters of another layout (a data dir from an older emulator) start over. */
export function usableParams(params: Params | undefined): Params {
  return params && params.length === PARAM_COUNT ? params : initialParams();
}

/** Splits text into vocabulary ids; unknown words become `<unk>`. */
export function tokenize(text: string): number[] {
  return words(text).map((w) => INDEX.get(w) ?? UNK_ID);
}

/** How many tokens `tokenize(text)` makes, without making them (cheap on a huge text). */
export function countTokens(text: string): number {
  const re = /<[a-z_0-9]+>|[a-z]+/g;
  const lower = text.toLowerCase();
  let n = 0;
  while (re.exec(lower)) n++;
  return n;
}

function words(text: string): string[] {
  return text.toLowerCase().match(/<[a-z_0-9]+>|[a-z]+/g) ?? [];
}

/**
 * Maps a logprob token string (`" red"`, `"token_id:3"`, a tool's name) back
 * to its id; `tools` are the names offered, for name tokens spelled as names.
 */
export function tokenId(token: string, tools: readonly string[] = []): number {
  const m = /^token_id:(\d+)$/.exec(token);
  if (m) {
    const id = Number(m[1]);
    return id >= 0 && id < V ? id : UNK_ID;
  }
  const tool = tools.indexOf(token.trim());
  if (tool !== -1) return slotId(tool);
  return INDEX.get(token.trim().toLowerCase()) ?? UNK_ID;
}

/**
 * The text of token `id` at position `pos` of a completion (words are
 * space-separated). `<eos>` is spelled as itself, without a space: as a
 * special token's logprob entry is in vLLM; it is never part of the content.
 */
export function tokenText(id: number, pos: number): string {
  const word = VOCAB[id] ?? UNK;
  return pos === 0 || id === EOS_ID ? word : ` ${word}`;
}

/** FNV-1a, so a word lands in the same bucket in every process; `salt` varies the hash. */
function bucket(word: string, salt = 0): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % HASH_BUCKETS;
}

type MessageLike = { role?: unknown; content?: unknown };

/**
 * The prompt's features (sorted row ids): the words of the last user message
 * (vocabulary words by themselves, other words by hashed bucket), the message
 * as a whole (hashed), and the vocabulary words of the tool results that came
 * after it.
 */
export function promptFeatures(messages: readonly MessageLike[]): number[] {
  const rows = new Set<number>();
  let last = -1;
  for (let i = messages.length - 1; i >= 0 && last === -1; i--)
    if (messages[i]?.role === "user") last = i;
  if (last === -1) return [];
  const asked = words(contentText(messages[last]?.content));
  for (const w of asked) {
    const id = INDEX.get(w);
    rows.add(id !== undefined && id < W ? USER_ROW + id : HASH_ROW + bucket(w));
  }
  if (asked.length > 0) rows.add(QUESTION_ROW + (bucket(asked.join(" "), 2) % QUESTION_BUCKETS));
  for (const m of messages.slice(last + 1)) {
    if (m?.role !== "tool") continue;
    rows.add(TOOL_SEEN_ROW);
    for (const id of tokenize(contentText(m.content))) if (id < W) rows.add(TOOL_RESULT_ROW + id);
  }
  return [...rows].sort((a, b) => a - b);
}

/** Plain text of a message content (string or list of text parts). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : ""))
      .join(" ");
  }
  return "";
}

/**
 * Which tokens a position may hold, by its place in the completion; sampler
 * and trainer derive it the same way, so recorded logprobs are recomputable.
 * `start`: words, `<eos>`, and `<tool>` when tools are offered; `text`: words
 * and `<eos>`; `name`: a name token per offered tool; `arg`: words; `end`:
 * only `<eos>` (a tool call's arguments are complete, so the call ends there).
 */
export interface Position {
  kind: "start" | "text" | "name" | "arg" | "end";
  /** How many tools the request offered. */
  tools: number;
}

/**
 * The position of token `pos` in a completion whose first token is `first`;
 * `token` is the token there, when known: in a tool call, `<eos>` after the
 * arguments is the call's end (the schema, not the policy, says where the
 * arguments stop).
 */
export function positionAt(
  pos: number,
  first: number | undefined,
  tools: number,
  token?: number,
): Position {
  if (pos === 0) return { kind: "start", tools };
  if (first === TOOL_ID) {
    if (pos === 1) return { kind: "name", tools };
    return { kind: token === EOS_ID ? "end" : "arg", tools };
  }
  return { kind: "text", tools };
}

/**
 * The untrained model calls an offered tool half the time on a fresh question:
 * `<tool>` starts with the weight of all 25 other first tokens together. Once
 * a tool has answered, the prior is gone (1 in 26), so agent loops end.
 */
const TOOL_PRIOR = Math.log(W + 1);

/**
 * The "previous token" at the start of an answer: `<eos>`, or `<unk>` (never
 * said, so its bigram row is free) once a tool has answered, so replying to a
 * tool result and starting on a fresh question are learnt apart.
 */
export function startPrev(features: readonly number[]): number {
  return features.includes(TOOL_SEEN_ROW) ? UNK_ID : EOS_ID;
}

/**
 * The copy weights count this many times: "repeat what the tool said" is
 * one rule for every word, and a real model learns the rule, not a word per
 * question, so its update outweighs the rows of the words themselves.
 */
const COPY_WEIGHT = 3;
const FUNCTION_WORDS = new Set(["the", "a", "is", "and"].map((w) => INDEX.get(w) as number));
/**
 * What an instruct model brings to tool use before any training: it passes
 * the word the user asked about as an argument (a content word, not `the`,
 * `a`, `is` or `and`, and only until a tool has answered), and it repeats
 * what a tool answered. Each is a fixed bonus on the logit of such a word (on
 * top of the learnt copy weights), worth four times the mass of the other
 * words together, so an untrained model copies about 4 times in 5.
 */
export const COPY_PRIOR = Math.log(4 * (W - 1));

/**
 * An instruct model answers and stops: past the first word of a text answer,
 * `<eos>` starts with the weight of all 24 words together, so an untrained
 * model ends after each word half the time (a one-word answer half the time,
 * two words a quarter, ...). The copy prior is for the answer's first word
 * only: a model says what the tool answered once, it does not repeat it.
 */
export const EOS_PRIOR = Math.log(W);

/** How much a feature row counts in the logits (and so in the gradient). */
function rowWeight(f: number, scale: number): number {
  if (f === TOOL_SEEN_ROW) return TOOL_SEEN_WEIGHT;
  return f >= QUESTION_ROW ? scale * QUESTION_WEIGHT : scale;
}

/** Raw logits of the next token (temperature 1; tokens the position cannot hold are -Infinity). */
export function logits(
  params: Params,
  features: readonly number[],
  prev: number,
  at: Position,
): number[] {
  const out = new Array<number>(V).fill(Number.NEGATIVE_INFINITY);
  const scale = featureScale(features.length);
  const allowed = allowedIds(at);
  const copy = copyIndex(at.kind);
  const answered = features.includes(TOOL_SEEN_ROW);
  const table = tableOf(at, answered);
  for (const v of allowed) {
    let x = params[BIGRAM + prev * V + v] as number;
    for (const f of features) x += rowWeight(f, scale) * (params[table + f * V + v] as number);
    if (v < W && at.kind !== "name" && features.includes(TOOL_RESULT_ROW + v)) {
      x += COPY_WEIGHT * (params[copy] as number);
      if (at.kind !== "text") x += COPY_PRIOR;
    }
    if (at.kind === "arg" && features.includes(USER_ROW + v)) {
      x += COPY_WEIGHT * (params[COPY_USER_ARG] as number);
      if (!answered && !FUNCTION_WORDS.has(v)) x += COPY_PRIOR;
    }
    out[v] = x;
  }
  if (at.kind === "start" && at.tools > 0 && !features.includes(TOOL_SEEN_ROW))
    out[TOOL_ID] = (out[TOOL_ID] as number) + TOOL_PRIOR;
  if (at.kind === "text") out[EOS_ID] = (out[EOS_ID] as number) + EOS_PRIOR;
  return out;
}

const WORD_IDS = Array.from({ length: W }, (_, i) => i);
const TEXT_IDS = [...WORD_IDS, EOS_ID];
const START_WITH_TOOL = [...TEXT_IDS, TOOL_ID];
const END_IDS = [EOS_ID];

function allowedIds(at: Position): readonly number[] {
  switch (at.kind) {
    case "start":
      return at.tools > 0 ? START_WITH_TOOL : TEXT_IDS;
    case "text":
      return TEXT_IDS;
    case "arg":
      return WORD_IDS;
    case "end":
      return END_IDS;
    case "name":
      return Array.from({ length: Math.min(Math.max(at.tools, 1), TOOL_SLOTS) }, (_, i) =>
        slotId(i),
      );
  }
}

/** Log-softmax of `logits / temperature`. */
export function logSoftmax(raw: number[], temperature = 1): number[] {
  const t = temperature > 0 ? temperature : 1;
  const scaled = raw.map((x) => x / t);
  const max = Math.max(...scaled);
  let sum = 0;
  for (const x of scaled) sum += Math.exp(x - max);
  const lse = max + Math.log(sum);
  return scaled.map((x) => x - lse);
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Samples from log-probabilities with nucleus filtering; temperature 0 is greedy. */
export function sample(
  logp: number[],
  random: () => number,
  topP: number,
  greedy: boolean,
): number {
  const order = logp
    .map((lp, id) => ({ id, p: Math.exp(lp) }))
    .filter((x) => x.p > 0)
    .sort((a, b) => b.p - a.p || a.id - b.id);
  if (greedy || order.length === 1) return (order[0] as { id: number }).id;
  const kept: typeof order = [];
  let mass = 0;
  for (const x of order) {
    kept.push(x);
    mass += x.p;
    if (mass >= topP) break;
  }
  let r = random() * mass;
  for (const x of kept) {
    r -= x.p;
    if (r <= 0) return x.id;
  }
  return (kept[kept.length - 1] as { id: number }).id;
}

/**
 * Adds `scale * d log p(token) / d params` to `grad`: `(onehot(token) −
 * softmax)` on the bigram row of `prev` and, scaled like the logits, on the
 * context row of each feature. Returns the distribution's entropy, for metrics.
 */
export function accumulateLogpGrad(
  grad: number[],
  params: Params,
  features: readonly number[],
  prev: number,
  token: number,
  at: Position,
  scale: number,
): number {
  const lp = logSoftmax(logits(params, features, prev, at));
  const fScale = featureScale(features.length);
  const copy = copyIndex(at.kind);
  const table = tableOf(at, features.includes(TOOL_SEEN_ROW));
  let entropy = 0;
  for (let v = 0; v < V; v++) {
    const p = Math.exp(lp[v] as number);
    if (p > 0) entropy -= p * (lp[v] as number);
    const g = scale * ((v === token ? 1 : 0) - p);
    if (g === 0) continue;
    grad[BIGRAM + prev * V + v] = (grad[BIGRAM + prev * V + v] as number) + g;
    for (const f of features)
      grad[table + f * V + v] = (grad[table + f * V + v] as number) + rowWeight(f, fScale) * g;
    if (v < W && at.kind !== "name" && features.includes(TOOL_RESULT_ROW + v))
      grad[copy] = (grad[copy] as number) + COPY_WEIGHT * g;
    if (at.kind === "arg" && features.includes(USER_ROW + v))
      grad[COPY_USER_ARG] = (grad[COPY_USER_ARG] as number) + COPY_WEIGHT * g;
  }
  return entropy;
}

/** log p(token | features, prev) under `params` at temperature 1. */
export function tokenLogprob(
  params: Params,
  features: readonly number[],
  prev: number,
  token: number,
  at: Position,
): number {
  return logSoftmax(logits(params, features, prev, at))[token] as number;
}

/**
 * The tokens of a tool call as the policy would have produced them: `<tool>`,
 * the name token, then the vocabulary words of the arguments' strings in order.
 */
export function toolCallTokens(name: string, args: string, tools: readonly string[]): number[] {
  const index = tools.indexOf(name);
  const out = [TOOL_ID, slotId(Math.max(index, 0))];
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return out;
  }
  // Arguments nested deeper than any real call are read as text (no words).
  if (findJsonProblem(parsed)) return out;
  const visit = (x: unknown): void => {
    if (typeof x === "string") {
      for (const id of tokenize(x)) if (id < W) out.push(id);
    } else if (Array.isArray(x)) x.forEach(visit);
    else if (x && typeof x === "object") Object.values(x).forEach(visit);
  };
  visit(parsed);
  return out;
}

/**
 * The context rows are summed; past 8 features they are scaled down so that a
 * gradient step moves a long prompt's logits no more than an 8-word one's.
 */
function featureScale(n: number): number {
  return n <= FULL_FEATURES ? 1 : Math.sqrt(FULL_FEATURES / n);
}
const FULL_FEATURES = 8;
