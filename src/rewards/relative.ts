import { InvalidArgumentError } from "../util/argument-error.js";

/**
 * Ranks scores within a group onto [0, 1]: the lowest gets 0, the highest 1,
 * ties share their mean rank. A group of one (or all equal) gets 0.5 each.
 *
 * @example
 * rankRewards([3, 10, 3, 7]); // [0.1667, 1, 0.1667, 0.6667] (rounded)
 */
export function rankRewards(scores: readonly number[]): number[] {
  checkScores("rankRewards(scores)", scores);
  const n = scores.length;
  const order = scores.map((s, i) => ({ s, i })).sort((a, b) => a.s - b.s);
  const ranks = new Array<number>(n);
  for (let start = 0; start < n; ) {
    let end = start;
    while (end + 1 < n && (order[end + 1] as { s: number }).s === (order[start] as { s: number }).s)
      end++;
    const mean = (start + end) / 2;
    for (let k = start; k <= end; k++) ranks[(order[k] as { i: number }).i] = mean;
    start = end + 1;
  }
  return ranks.map((r) => (n > 1 && !allEqual(scores) ? r / (n - 1) : 0.5));
}

/**
 * Standardises scores within a group: `(score - mean) / std` (population
 * standard deviation). All-equal scores give zeros.
 *
 * @example
 * zScores([1, 2, 3]); // [-1.2247, 0, 1.2247] (rounded)
 */
export function zScores(scores: readonly number[]): number[] {
  checkScores("zScores(scores)", scores);
  if (scores.length === 0) return [];
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  const std = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / scores.length);
  return scores.map((s) => (std === 0 ? 0 : (s - mean) / std));
}

/**
 * Rescales scores linearly onto [0, 1] (min to 0, max to 1); all-equal scores give 0.5.
 *
 * @example
 * minMaxRewards([2, 4, 6]); // [0, 0.5, 1]
 */
export function minMaxRewards(scores: readonly number[]): number[] {
  checkScores("minMaxRewards(scores)", scores);
  // A loop, not Math.min(...scores): spreading a long array overflows the stack.
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const s of scores) {
    if (s < min) min = s;
    if (s > max) max = s;
  }
  return scores.map((s) => (max === min ? 0.5 : (s - min) / (max - min)));
}

function allEqual(scores: readonly number[]): boolean {
  return scores.every((s) => s === scores[0]);
}

// A NaN or an infinity would turn every reward of the group into NaN.
function checkScores(call: string, scores: unknown): asserts scores is readonly number[] {
  if (!Array.isArray(scores))
    throw new InvalidArgumentError(call, "scores", "an array of finite numbers", scores);
  // Indexed, not forEach: a sparse array's holes are bad scores too.
  for (let i = 0; i < scores.length; i++) {
    const s: unknown = scores[i];
    if (typeof s !== "number" || !Number.isFinite(s))
      throw new InvalidArgumentError(call, `scores[${i}]`, "a finite number", s);
  }
}
