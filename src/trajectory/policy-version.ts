// Policy versions: the training step of the checkpoint that sampled a turn,
// as ART stamps trajectories (`initial_policy_version`, `final_policy_version`),
// and how old a group is by them.

import { PreparedGroup } from "./prepared.js";

// The Training Service names a pinned checkpoint `<model>:step<N>`
// (inferenceModelName in src/client builds it); the latest has no suffix.
const PINNED_STEP = /:step(\d+)$/;

/**
 * The step a model name pins (`wandb-artifact:///me/demo/agent:step3` → 3),
 * `undefined` for a name without one (the latest checkpoint, another model).
 *
 * @example
 * stepOfModelName("wandb-artifact:///me/demo/agent-001:step3"); // 3
 */
export function stepOfModelName(model: string | null | undefined): number | undefined {
  if (typeof model !== "string") return undefined;
  const m = PINNED_STEP.exec(model);
  if (!m) return undefined;
  const step = Number(m[1]);
  return Number.isSafeInteger(step) ? step : undefined;
}

const OLDEST = new WeakMap<PreparedGroup, number | null>();

/**
 * The oldest policy a group was sampled from: the smallest
 * `initial_policy_version` of its trajectories (as ART's pipeline trainer
 * judges a group), `undefined` when none carries one. A group prepared as
 * bytes is read back once.
 */
export function oldestPolicyVersion(group: unknown): number | undefined {
  if (group instanceof PreparedGroup) {
    let known = OLDEST.get(group);
    if (known === undefined) {
      known = oldestPolicyVersion(group.toJSON()) ?? null;
      OLDEST.set(group, known);
    }
    return known ?? undefined;
  }
  const trajectories = (group as { trajectories?: unknown } | null)?.trajectories;
  if (!Array.isArray(trajectories)) return undefined;
  let oldest: number | undefined;
  for (const t of trajectories) {
    const v = (t as { initial_policy_version?: unknown } | null)?.initial_policy_version;
    if (typeof v === "number" && Number.isInteger(v) && (oldest === undefined || v < oldest))
      oldest = v;
  }
  return oldest;
}
