// The names ART reports training results under. Its serverless backend renames
// the keys of each `gradient_step` event before averaging them
// (OpenPipe/ART src/art/serverless/backend.py, `_canonicalize_upstream_metrics`):
// dashboards and code ported from ART look for these names.

/** Raw `gradient_step` keys and the name ART reports each under. */
export const ART_METRIC_NAMES: Readonly<Record<string, string>> = Object.freeze({
  reward: "reward",
  reward_std_dev: "reward_std_dev",
  exception_rate: "exception_rate",
  policy_loss: "loss/train",
  loss: "loss/train",
  entropy: "loss/entropy",
  kl_div: "loss/kl_div",
  kl_policy_ref: "loss/kl_policy_ref",
  grad_norm: "loss/grad_norm",
  learning_rate: "loss/learning_rate",
  num_groups_submitted: "data/step_num_groups_submitted",
  num_groups_trainable: "data/step_num_groups_trainable",
  num_trajectories: "data/step_num_trajectories",
  num_trainable_tokens: "data/step_trainer_tokens",
  train_tokens: "data/step_trainer_tokens",
  num_datums: "data/step_num_datums",
});

/** The key ART reports the number of gradient steps under. */
export const ART_GRADIENT_STEPS_KEY = "data/step_num_gradient_steps";

/**
 * The name ART reports a raw `gradient_step` key under, or `undefined` for a
 * key it drops (`tokens_per_second`). Names that already hold a `/` are kept;
 * `group_metric_<x>` becomes `group_<x>`; unknown keys pass through.
 *
 * @example
 * artMetricName("policy_loss"); // "loss/train"
 * artMetricName("group_metric_accuracy"); // "group_accuracy"
 */
export function artMetricName(key: string): string | undefined {
  if (typeof key !== "string") return undefined;
  if (key.includes("/")) return key;
  if (key === "tokens_per_second") return undefined;
  if (key.startsWith("group_metric_")) return `group_${key.slice("group_metric_".length)}`;
  return Object.hasOwn(ART_METRIC_NAMES, key) ? ART_METRIC_NAMES[key] : key;
}
