import { InvalidArgumentError } from "../util/argument-error.js";
import type { TrajectoryGroup } from "./group.js";

/**
 * Whether RL can learn anything from a group: at least two trajectories whose
 * rewards differ. A group whose rewards are all equal (or that holds a single
 * trajectory) gives every trajectory an advantage of zero, so the trainer
 * learns nothing from it; ART's trainer leaves such groups out, and the
 * service fails a job made only of them.
 *
 * @example
 * const mixed = groups.filter(hasRewardSignal);
 */
export function hasRewardSignal(group: Pick<TrajectoryGroup, "trajectories">): boolean {
  const trajectories = (group as { trajectories?: unknown } | null | undefined)?.trajectories;
  const call = "hasRewardSignal(group)";
  if (!Array.isArray(trajectories))
    throw new InvalidArgumentError(
      call,
      group === null || typeof group !== "object" ? "group" : "group.trajectories",
      group === null || typeof group !== "object"
        ? "a group (an object with a trajectories array)"
        : "an array of trajectories",
      group === null || typeof group !== "object" ? group : trajectories,
    );
  const rewards = trajectories.map((t, i) => {
    const reward = (t as { reward?: unknown } | null)?.reward;
    if (typeof reward !== "number")
      throw new InvalidArgumentError(call, `group.trajectories[${i}].reward`, "a number", reward);
    return reward;
  });
  const first = rewards[0];
  return rewards.some((r) => r !== first);
}
