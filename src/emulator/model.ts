// The emulator's trainable policy: a tiny contextual bigram model over a word
// vocabulary. Logits for the next word are `context[f][v] + bigram[prev][v]`,
// where `f` is a feature of the prompt (the last vocabulary word of the last
// user message) and `prev` the previous word. Everything is plain arrays.

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
export const VOCAB: readonly string[] = [...WORDS, EOS, UNK, TOOL];
export const V = VOCAB.length;
export const EOS_ID = VOCAB.indexOf(EOS);
export const UNK_ID = VOCAB.indexOf(UNK);
export const TOOL_ID = VOCAB.indexOf(TOOL);
const INDEX = new Map(VOCAB.map((w, i) => [w, i]));

/** Parameters of one checkpoint: `context` then `bigram`, each V×V, row-major. */
export type Params = number[];
export const PARAM_COUNT = 2 * V * V;

export function initialParams(): Params {
  return new Array(PARAM_COUNT).fill(0);
}

/** Splits text into vocabulary ids; unknown words become `<unk>`. */
export function tokenize(text: string): number[] {
  const words = text.toLowerCase().match(/<[a-z]+>|[a-z]+/g) ?? [];
  return words.map((w) => INDEX.get(w) ?? UNK_ID);
}

/** Maps a logprob token string (`" red"`, `"token_id:3"`) back to its id. */
export function tokenId(token: string): number {
  const m = /^token_id:(\d+)$/.exec(token);
  if (m) {
    const id = Number(m[1]);
    return id >= 0 && id < V ? id : UNK_ID;
  }
  return INDEX.get(token.trim().toLowerCase()) ?? UNK_ID;
}

/** The text of token `id` at position `pos` of a completion (words are space-separated). */
export function tokenText(id: number, pos: number): string {
  const word = VOCAB[id] ?? UNK;
  return pos === 0 ? word : ` ${word}`;
}

/** The prompt feature: the last vocabulary word of the last user message. */
export function promptFeature(messages: readonly { role?: unknown; content?: unknown }[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    const ids = tokenize(contentText(m.content)).filter((id) => id < WORDS.length);
    return ids.length ? (ids[ids.length - 1] as number) : UNK_ID;
  }
  return UNK_ID;
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

/** Which tokens may be produced at a position. */
export interface Mask {
  allowTool: boolean;
  forceTool: boolean;
}

/** Raw logits of the next token (temperature 1, masked entries are -Infinity). */
export function logits(params: Params, feature: number, prev: number, mask: Mask): number[] {
  const out = new Array<number>(V);
  for (let v = 0; v < V; v++) {
    out[v] = (params[feature * V + v] as number) + (params[V * V + prev * V + v] as number);
  }
  out[UNK_ID] = Number.NEGATIVE_INFINITY;
  if (!mask.allowTool) out[TOOL_ID] = Number.NEGATIVE_INFINITY;
  if (mask.forceTool) {
    for (let v = 0; v < V; v++) if (v !== TOOL_ID) out[v] = Number.NEGATIVE_INFINITY;
  }
  return out;
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
 * Adds `scale * (onehot(token) - softmax)` to the gradient rows used at one
 * position: the gradient of `log p(token)` with respect to both tables.
 * Returns the entropy of the distribution, for metrics.
 */
export function accumulateLogpGrad(
  grad: number[],
  params: Params,
  feature: number,
  prev: number,
  token: number,
  mask: Mask,
  scale: number,
): number {
  const lp = logSoftmax(logits(params, feature, prev, mask));
  let entropy = 0;
  for (let v = 0; v < V; v++) {
    const p = Math.exp(lp[v] as number);
    if (p > 0) entropy -= p * (lp[v] as number);
    const g = scale * ((v === token ? 1 : 0) - p);
    grad[feature * V + v] = (grad[feature * V + v] as number) + g;
    grad[V * V + prev * V + v] = (grad[V * V + prev * V + v] as number) + g;
  }
  return entropy;
}

/** log p(token | feature, prev) under `params` at temperature 1. */
export function tokenLogprob(
  params: Params,
  feature: number,
  prev: number,
  token: number,
  mask: Mask,
): number {
  return logSoftmax(logits(params, feature, prev, mask))[token] as number;
}
