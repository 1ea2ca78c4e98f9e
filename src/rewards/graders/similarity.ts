// The text_similarity metrics computed here, by their standard definitions:
// fuzzy_match as rapidfuzz's `fuzz.ratio` (normalised Indel similarity),
// BLEU-4 (Papineni et al.: clipped n-gram precisions, geometric mean, brevity
// penalty; no smoothing), GLEU as NLTK's sentence_gleu, ROUGE-n and ROUGE-L
// as the F-measure of Google's rouge_score (lowercased alphanumeric tokens).

/** The metrics computed locally. */
export const LOCAL_METRICS = [
  "fuzzy_match",
  "bleu",
  "gleu",
  "rouge_1",
  "rouge_2",
  "rouge_3",
  "rouge_4",
  "rouge_5",
  "rouge_l",
] as const;
export type LocalMetric = (typeof LOCAL_METRICS)[number];

/** Scores `output` against `reference` with a local metric, in [0, 1]. */
export function similarity(metric: LocalMetric, output: string, reference: string): number {
  if (metric === "fuzzy_match") return fuzzyRatio(output, reference);
  if (metric === "bleu") return bleu(bleuTokens(output), bleuTokens(reference));
  if (metric === "gleu") return gleu(bleuTokens(output), bleuTokens(reference));
  const a = rougeTokens(output);
  const b = rougeTokens(reference);
  if (metric === "rouge_l") return fMeasure(lcsLength(a, b), a.length, b.length);
  const n = Number(metric.slice("rouge_".length));
  return fMeasure(
    overlap(ngrams(a, n), ngrams(b, n)),
    Math.max(a.length - n + 1, 0),
    Math.max(b.length - n + 1, 0),
  );
}

/** 2·LCS / (|a| + |b|) over characters: rapidfuzz `fuzz.ratio` / 100. */
export function fuzzyRatio(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  if (x.length + y.length === 0) return 1;
  return (2 * lcsLength(x, y)) / (x.length + y.length);
}

function lcsLength<T>(a: readonly T[], b: readonly T[]): number {
  // One row at a time: memory of the shorter side only.
  const [long, short] = a.length >= b.length ? [a, b] : [b, a];
  let prev = new Array<number>(short.length + 1).fill(0);
  for (const item of long) {
    const row = new Array<number>(short.length + 1).fill(0);
    for (let j = 1; j <= short.length; j++)
      row[j] =
        item === short[j - 1]
          ? (prev[j - 1] as number) + 1
          : Math.max(prev[j] as number, row[j - 1] as number);
    prev = row;
  }
  return prev[short.length] as number;
}

// Words and single punctuation marks, case kept (as BLEU's usual tokenisation).
function bleuTokens(text: string): string[] {
  return text.match(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) ?? [];
}

// rouge_score's default tokenizer: lowercase, runs of [a-z0-9].
function rougeTokens(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

function ngrams(tokens: readonly string[], n: number): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const key = tokens.slice(i, i + n).join("\u0000");
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

function overlap(a: Map<string, number>, b: Map<string, number>): number {
  let n = 0;
  for (const [k, count] of a) n += Math.min(count, b.get(k) ?? 0);
  return n;
}

function fMeasure(matches: number, outputCount: number, referenceCount: number): number {
  if (matches === 0 || outputCount === 0 || referenceCount === 0) return 0;
  const precision = matches / outputCount;
  const recall = matches / referenceCount;
  return (2 * precision * recall) / (precision + recall);
}

function bleu(output: string[], reference: string[]): number {
  if (output.length === 0) return 0;
  let logSum = 0;
  for (let n = 1; n <= 4; n++) {
    const total = Math.max(output.length - n + 1, 0);
    const matched = overlap(ngrams(output, n), ngrams(reference, n));
    if (total === 0 || matched === 0) return 0;
    logSum += Math.log(matched / total) / 4;
  }
  const brevity =
    output.length >= reference.length ? 1 : Math.exp(1 - reference.length / output.length);
  return brevity * Math.exp(logSum);
}

function gleu(output: string[], reference: string[]): number {
  let matched = 0;
  let outputTotal = 0;
  let referenceTotal = 0;
  for (let n = 1; n <= 4; n++) {
    const o = ngrams(output, n);
    matched += overlap(o, ngrams(reference, n));
    outputTotal += Math.max(output.length - n + 1, 0);
    referenceTotal += Math.max(reference.length - n + 1, 0);
  }
  const denominator = Math.max(outputTotal, referenceTotal);
  return denominator === 0 ? 0 : matched / denominator;
}

/** Cosine similarity of two vectors (0 when either is all zeros). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
