// Trajectory groups as callers hold them: wire JSON, or an object that turns
// itself into it (a `TrajectoryGroup`). The client does not import the data
// model's code (dependencies point the other way), so it takes anything with
// toJSON(); the group's types are the wire folder's.
import type { TrajectoryGroupParam } from "../wire/index.js";

export type { TrajectoryGroupParam };

/**
 * `params` with its `trajectory_groups` widened to {@link TrajectoryGroupParam}.
 *
 * @example
 * const params: WithGroupParams<TrainingJobCreateParams> = { model_id, trajectory_groups: [group] };
 */
export type WithGroupParams<P extends { trajectory_groups: unknown }> = Omit<
  P,
  "trajectory_groups"
> & { trajectory_groups: TrajectoryGroupParam[] };

/** The params with each group that has `toJSON()` replaced by its JSON. */
export function groupsToWire<P extends { trajectory_groups: unknown }>(params: P): P {
  const groups = params?.trajectory_groups;
  if (!Array.isArray(groups)) return params;
  return {
    ...params,
    trajectory_groups: groups.map((g) =>
      g && typeof (g as { toJSON?: unknown }).toJSON === "function"
        ? (g as { toJSON(): unknown }).toJSON()
        : g,
    ),
  };
}
