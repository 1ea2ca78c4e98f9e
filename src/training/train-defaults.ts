// The `experimental_config` ART's serverless backend sends for `model.train()`:
// every key, with its defaults, explicit nulls, and the values one option
// implies for another. Source: `ServerlessBackend.train` and `_train_model`
// (`OpenPipe/ART` src/art/serverless/backend.py) with `build_rl_train_configs`
// (src/art/_backend_training.py).

import { InvalidTrainingOptionsError } from "../util/training-options-error.js";
import type { ExperimentalTrainingConfig } from "../wire/index.js";

type Wire = ExperimentalTrainingConfig;

/**
 * What ART sends when an option is left out. `loss_fn`, `ppo`,
 * `normalize_advantages`, `scale_rewards` and `kl_penalty_source` also depend
 * on other options, as they do in ART.
 *
 * @example
 * ART_TRAIN_DEFAULTS.learning_rate; // 5e-6
 */
export const ART_TRAIN_DEFAULTS = Object.freeze({
  advantage_balance: 0,
  allow_training_without_logprobs: false,
  epsilon: null,
  epsilon_high: null,
  importance_sampling_level: "token",
  kimi_k2_tau: null,
  kl_penalty_coef: 0,
  kl_penalty_reference_step: null,
  kl_penalty_source: "current_learner",
  kl_penalty_step_lag: null,
  kl_ref_adapter_path: null,
  learning_rate: 5e-6,
  logprob_calculation_chunk_size: 1024,
  loss_fn: "cispo",
  mask_prob_ratio: false,
  max_negative_advantage_importance_sampling_weight: null,
  normalize_advantages: true,
  num_trajectories_learning_rate_multiplier_power: 0,
  packed_sequence_length: null,
  plot_tensors: false,
  ppo: false,
  precalculate_logprobs: false,
  scale_learning_rate_by_reward_std_dev: false,
  scale_rewards: true,
  truncated_importance_sampling: null,
} as const satisfies Required<{ [K in keyof Wire]: Wire[K] }>);

/**
 * Fills every key the way ART does. `set` holds only the options the caller
 * gave, already validated (null counts as unset).
 */
export function withArtDefaults(set: Wire): Required<Wire> {
  const given = <K extends keyof Wire>(key: K) => (set[key] ?? undefined) as Wire[K] | undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(ART_TRAIN_DEFAULTS)) {
    out[key] = given(key as keyof Wire) ?? value;
  }
  // `loss_fn` wins; the legacy `ppo` flag only picks it when it is unset.
  const lossFn = given("loss_fn") ?? (given("ppo") ? "ppo" : "cispo");
  out.loss_fn = lossFn;
  out.ppo = lossFn === "ppo";
  // ART sends `normalize_advantages` as the resolved `scale_rewards`, which
  // `normalize_advantages: false` forces off.
  const scale = (given("scale_rewards") ?? true) && (given("normalize_advantages") ?? true);
  out.scale_rewards = scale;
  out.normalize_advantages = scale;
  const coef = given("kl_penalty_coef") ?? 0;
  out.kl_penalty_source = given("kl_penalty_source") ?? (coef > 0 ? "sample" : "current_learner");
  return out as Required<Wire>;
}

/**
 * Refuses, before anything is sent, the combinations ART's serverless backend
 * refuses. Runs on the raw wire keys, so ill-typed values are left to the
 * schema's check.
 */
export function refuseArtConflicts(set: Record<string, unknown>, method: string): void {
  const problems: string[] = [];
  const lossFn = typeof set.loss_fn === "string" ? set.loss_fn : undefined;
  const ppo = typeof set.ppo === "boolean" ? set.ppo : undefined;
  if (lossFn !== undefined && ppo !== undefined && ppo !== (lossFn === "ppo")) {
    problems.push(
      `lossFn: ${JSON.stringify(lossFn)} conflicts with ppo: ${ppo}; set only lossFn (ppo is its legacy alias)`,
    );
  }
  const number = (v: unknown) => (typeof v === "number" ? v : undefined);
  const referenceStep = number(set.kl_penalty_reference_step);
  const stepLag = number(set.kl_penalty_step_lag);
  if (referenceStep !== undefined && referenceStep < 0) {
    problems.push(
      `klPenaltyReferenceStep: expected an integer >= 0 (a checkpoint step), got ${referenceStep}`,
    );
  }
  if (stepLag !== undefined && stepLag < 1) {
    problems.push(
      `klPenaltyStepLag: expected an integer >= 1 (steps behind the current one), got ${stepLag}`,
    );
  }
  if (referenceStep !== undefined && stepLag !== undefined) {
    problems.push(
      "klPenaltyReferenceStep: only one of klPenaltyReferenceStep and klPenaltyStepLag may be set",
    );
  }
  if (problems.length > 0) throw new InvalidTrainingOptionsError(method, problems);
}
