// The RL objective, following ART's loss (ART's src/art/loss.py; how the
// emulator applies it: src/emulator/MODEL.md, "What it is"): a per-token
// importance ratio against the sampler's logprobs, optionally replaced by a
// per-history ratio, capped and masked, then either PPO's clipped surrogate or
// CISPO's clipped-weight policy gradient. The model's parameters live
// elsewhere: this file turns logprobs into d(objective)/d(logprob) per token.

type Json = Record<string, unknown>;

export interface LossConfig {
  lossFn: "ppo" | "cispo";
  /** The ratio's band is [1 − epsilon, 1 + epsilonHigh]. */
  epsilon: number;
  epsilonHigh: number;
  level: "token" | "sequence" | "average" | "geometric_average";
  /** max_negative_advantage_importance_sampling_weight: caps the ratio of every token. */
  ratioCap: number | undefined;
  /** mask_prob_ratio: a ratio outside the open band becomes 0. */
  maskRatio: boolean;
  /** kimi_k2_tau: A ← A − τ·(new − old). */
  kimiTau: number | undefined;
}

const numberOr = (x: unknown, fallback: number) => (typeof x === "number" ? x : fallback);

/**
 * Reads the loss settings of an `experimental_config` with ART's defaults:
 * `loss_fn` wins over `ppo`; with neither the objective is CISPO; epsilon
 * defaults to 0.2 (PPO) or 1.0 (CISPO), epsilon_high to epsilon (PPO) or 4.0.
 */
export function lossConfig(cfg: Json): LossConfig {
  const lossFn =
    cfg.loss_fn === "ppo" || cfg.loss_fn === "cispo"
      ? cfg.loss_fn
      : cfg.ppo === true
        ? "ppo"
        : "cispo";
  const epsilon = numberOr(cfg.epsilon, lossFn === "ppo" ? 0.2 : 1.0);
  const epsilonHigh = numberOr(cfg.epsilon_high, lossFn === "ppo" ? epsilon : 4.0);
  const level = cfg.importance_sampling_level;
  return {
    lossFn,
    epsilon,
    epsilonHigh,
    level:
      level === "sequence" || level === "average" || level === "geometric_average"
        ? level
        : "token",
    // ART skips a cap of 0 (a falsy value) too.
    ratioCap:
      typeof cfg.max_negative_advantage_importance_sampling_weight === "number" &&
      cfg.max_negative_advantage_importance_sampling_weight !== 0
        ? cfg.max_negative_advantage_importance_sampling_weight
        : undefined,
    maskRatio: cfg.mask_prob_ratio === true,
    kimiTau:
      typeof cfg.kimi_k2_tau === "number" && cfg.kimi_k2_tau !== 0 ? cfg.kimi_k2_tau : undefined,
  };
}

/** One trainable token: its logprob now, the sampler's (null: unknown), its advantage. */
export interface TokenInput {
  newLogprob: number;
  oldLogprob: number | null;
  advantage: number;
}

export interface HistoryTerms {
  /** d(objective)/d(new logprob) per token: the weight of its log-prob gradient. */
  weights: number[];
  /** Sum of the per-token losses. */
  loss: number;
  /** Tokens whose ratio left the band (PPO: clipped terms; CISPO: clipped weights; masked). */
  clipped: number;
  /** Sum of the per-token ratios, after the sequence level, cap and mask. */
  ratioSum: number;
}

/**
 * The loss terms of one history (the tokens of one trajectory's conversation,
 * which is what ART's per-sequence ratio averages over).
 */
export function historyTerms(tokens: TokenInput[], c: LossConfig): HistoryTerms {
  const n = tokens.length;
  // A missing sampler logprob counts as sampled by the current policy: ratio 1.
  const diffs = tokens.map((t) => (t.oldLogprob === null ? 0 : t.newLogprob - t.oldLogprob));
  const meanDiff = n ? diffs.reduce((a, b) => a + b, 0) / n : 0;
  const seqRatio = Math.exp(meanDiff);
  const weights = new Array<number>(n).fill(0);
  // Gradient that reaches every token through the per-history ratio.
  let shared = 0;
  let loss = 0;
  let clipped = 0;
  let ratioSum = 0;
  const lo = 1 - c.epsilon;
  const hi = 1 + c.epsilonHigh;
  tokens.forEach((t, i) => {
    const d = diffs[i] as number;
    const tokenRatio = Math.exp(d);
    // ratio and its derivatives by this token's logprob (own) and by each logprob of the history (each).
    let ratio: number;
    let own: number;
    let each: number;
    switch (c.level) {
      case "token":
        [ratio, own, each] = [tokenRatio, tokenRatio, 0];
        break;
      case "sequence":
        [ratio, own, each] = [seqRatio, 0, seqRatio / n];
        break;
      case "average":
        [ratio, own, each] = [(tokenRatio + seqRatio) / 2, tokenRatio / 2, seqRatio / (2 * n)];
        break;
      default: {
        const r = Math.sqrt(tokenRatio * seqRatio);
        [ratio, own, each] = [r, r / 2, r / (2 * n)];
      }
    }
    if (c.ratioCap !== undefined && ratio > c.ratioCap) [ratio, own, each] = [c.ratioCap, 0, 0];
    const masked = c.maskRatio && !(ratio > lo && ratio < hi);
    if (masked) [ratio, own, each] = [0, 0, 0];
    ratioSum += ratio;
    const a = c.kimiTau === undefined ? t.advantage : t.advantage - c.kimiTau * d;
    const band = Math.min(Math.max(ratio, lo), hi);
    if (c.lossFn === "ppo") {
      loss -= Math.min(ratio * a, band * a);
      // The clipped term is constant: no gradient where it is the smaller one.
      const cut = (a > 0 && ratio > hi) || (a < 0 && ratio < lo);
      if (cut || masked) clipped++;
      const g = cut ? 0 : a;
      weights[i] = (weights[i] as number) + g * own;
      shared += g * each;
    } else {
      // CISPO: the clipped ratio is a constant weight on the log-prob gradient
      // (a masked ratio of 0 is clipped up to 1 − epsilon, as in ART).
      loss -= band * a * t.newLogprob;
      if (ratio !== band || masked) clipped++;
      weights[i] = (weights[i] as number) + band * a;
    }
  });
  if (shared !== 0) for (let i = 0; i < n; i++) weights[i] = (weights[i] as number) + shared;
  return { weights, loss, clipped, ratioSum };
}
