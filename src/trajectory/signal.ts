import { InvalidArgumentError } from "../util/argument-error.js";
import type { TrajectoryGroup } from "./group.js";
import { infraFailureOf } from "./infra-failure.js";

/**
 * Whether RL can learn anything from a group: at least two trajectories whose
 * rewards differ. A group whose rewards are all equal (or that holds a single
 * trajectory) gives every trajectory an advantage of zero, so the trainer
 * learns nothing from it; ART's trainer leaves such groups out, and the
 * service fails a job made only of them. Trajectories marked as
 * infrastructure failures (`metadata.infra_failure`) do not count: they are
 * left out of training.
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
  const rewards: number[] = [];
  trajectories.forEach((t, i) => {
    const reward = (t as { reward?: unknown } | null)?.reward;
    if (typeof reward !== "number")
      throw new InvalidArgumentError(call, `group.trajectories[${i}].reward`, "a number", reward);
    if (infraFailureOf(t) === undefined) rewards.push(reward);
  });
  const first = rewards[0];
  return rewards.some((r) => r !== first);
}
