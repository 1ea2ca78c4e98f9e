// The metrics a step's history carries for a split (`train/reward`, ...),
// over every rollout of that step: each group logged under the split at the
// step, and, for `train`, the groups of the RL jobs sampled at it. As ART's
// history, so a step's mean reward covers the groups trained on and the ones
// left out for lack of signal alike.
import type { Store, StoredLog } from "./store.js";

/**
 * The trajectory metadata key and value `train` (and the shipper's
 * `trainEvery`) mark logged groups with when they were left out of training
 * because their rewards all tie.
 */
export const LEFT_OUT_KEY = "left_out";
export const LEFT_OUT_NO_SIGNAL = "no_reward_signal";
/** `left_out` of trajectories `train` took out of their groups as infrastructure failures. */
export const LEFT_OUT_INFRA_FAILURE = "infra_failure";
/** The metadata key of a rollout marked as an infrastructure failure (see the recorder). */
export const INFRA_FAILURE_KEY = "infra_failure";

type Json = Record<string, unknown>;

function trajectoriesOf(group: unknown): Json[] {
  const t = (group as { trajectories?: unknown } | null)?.trajectories;
  return Array.isArray(t) ? (t as Json[]) : [];
}

/** Whether a logged group was marked as left out of training (no reward signal). */
export function leftOut(group: unknown): boolean {
  return leftOutAs(group) === LEFT_OUT_NO_SIGNAL;
}

/** Why a logged group was left out of training (`left_out` of its first trajectory), if it was. */
function leftOutAs(group: unknown): unknown {
  const first = trajectoriesOf(group)[0];
  const meta = first?.metadata as Json | undefined;
  return meta?.[LEFT_OUT_KEY];
}

/** Whether a trajectory is marked as an infrastructure failure: not part of the reward statistics. */
function infraFailure(t: Json): boolean {
  const value = (t.metadata as Json | undefined)?.[INFRA_FAILURE_KEY];
  return (typeof value === "string" && value !== "") || value === true;
}

/** Count, mean, spread and range of the rewards of `groups`. */
export function rewardMetrics(groups: readonly unknown[]): Record<string, number> {
  let n = 0;
  let sum = 0;
  let sumSq = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let infra = 0;
  // Loops, not spreads: a group may hold 1,000,000 trajectories.
  for (const g of groups)
    for (const t of trajectoriesOf(g)) {
      // A rollout the infrastructure failed is counted, never averaged as a reward.
      if (infraFailure(t)) {
        infra++;
        continue;
      }
      const r = typeof t.reward === "number" ? t.reward : 0;
      n += 1;
      sum += r;
      sumSq += r * r;
      if (r < min) min = r;
      if (r > max) max = r;
    }
  const mean = n ? sum / n : 0;
  return {
    num_groups: groups.length,
    num_trajectories: n + infra,
    reward: mean,
    reward_std_dev: n ? Math.sqrt(Math.max(0, sumSq / n - mean * mean)) : 0,
    reward_min: n ? min : 0,
    reward_max: n ? max : 0,
    ...(infra > 0 ? { num_infra_failures: infra } : {}),
  };
}

/**
 * Writes `{split}/...` onto checkpoint `step` of `modelId` from every rollout
 * the step holds for the split. For `train`, the groups of RL jobs sampled at
 * the step count, with the logged groups marked as left out; logged `train`
 * groups without the mark count only when no job was sampled at the step (a
 * shipper logs every group before its job trains on them: counted once).
 */
export function refreshStepMetrics(
  store: Store,
  modelId: string,
  split: string,
  step: number,
): void {
  const cp = store.modelCheckpoints(modelId).find((c) => c.step === step);
  if (!cp) return;
  const logs = store.logs.filter(
    (l: StoredLog) => l.model_id === modelId && l.split === split && (l.step ?? 0) === step,
  );
  const logged = logs.flatMap((l) => l.trajectory_groups);
  let groups = logged;
  let left = logged.filter(leftOut).length;
  if (split === "train") {
    const jobGroups = [...store.jobs.values()]
      .filter((j) => j.kind === "rl" && j.model_id === modelId && j.base_step === step)
      .flatMap((j) => {
        const g = (j.request as { trajectory_groups?: unknown[] } | null)?.trajectory_groups;
        return Array.isArray(g) ? g : [];
      });
    if (jobGroups.length > 0) {
      // Groups left out for lack of signal, and the infrastructure failures
      // taken out of the job's groups: rollouts of the step all the same.
      const marked = logged.filter((g) => leftOutAs(g) !== undefined);
      groups = [...jobGroups, ...marked];
      left = marked.filter(leftOut).length;
    }
  }
  if (groups.length === 0) return;
  const metrics: Record<string, number> = rewardMetrics(groups);
  if (left > 0) metrics.num_groups_left_out = left;
  for (const [k, v] of Object.entries(metrics)) cp.metrics[`${split}/${k}`] = v;
}
