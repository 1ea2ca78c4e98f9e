// What ART adds to every train() result besides the trainer's own means: a
// summary of the batch the caller handed in, and the wall time of the call
// (OpenPipe/ART `art/metrics_taxonomy.py`, `summarize_trajectory_groups` and
// `build_training_summary_metrics`; `aggregate_rl_training_metrics` in
// `art/_backend_training.py`). A value the service reported under the same
// name wins, as ART only fills names the trainer left out.

import { PreparedGroup, rewardSignalOf } from "../trajectory/index.js";

function countOf(json: unknown, key: "trajectories" | "exceptions"): number {
  const list = (json as Record<string, unknown> | null)?.[key];
  return Array.isArray(list) ? list.length : 0;
}

/**
 * ART's batch summary of the groups given to `train`, added to `metrics`
 * where the service left a name out: one scenario and one submitted group
 * per group, the groups whose rewards differ (trainable), trajectories
 * counted with the rollouts that failed (`exceptions`; a group already
 * prepared as bytes is read back only when the service did not report the
 * count), and `time/step_backend_train_s`, the seconds since `startedMs`.
 */
export function withSummary(
  metrics: Record<string, number>,
  groups: readonly unknown[],
  startedMs: number,
): Record<string, number> {
  const out = { ...metrics };
  out["time/step_backend_train_s"] ??= (performance.now() - startedMs) / 1000;
  out["data/step_num_scenarios"] ??= groups.length;
  if (out["data/step_num_trajectories"] === undefined) {
    let trajectories = 0;
    for (const group of groups) {
      const json = group instanceof PreparedGroup ? group.toJSON() : group;
      trajectories += countOf(json, "trajectories") + countOf(json, "exceptions");
    }
    out["data/step_num_trajectories"] = trajectories;
  }
  out["data/step_num_groups_submitted"] ??= groups.length;
  if (out["data/step_num_groups_trainable"] === undefined)
    out["data/step_num_groups_trainable"] = groups.filter((g) => rewardSignalOf(g) === true).length;
  return out;
}
