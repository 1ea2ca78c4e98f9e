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
  const first = group.trajectories[0]?.reward;
  return group.trajectories.some((t) => t.reward !== first);
}
