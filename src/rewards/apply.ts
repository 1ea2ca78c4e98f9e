import type { Trajectory, TrajectoryGroup } from "../trajectory/index.js";

/**
 * Scores one trajectory on its own; may be async (a test run, an API call).
 *
 * @example
 * const exactAnswer: TrajectoryReward = (t) => (t.messages().at(-1)?.content === "4" ? 1 : 0);
 */
export type TrajectoryReward = (trajectory: Trajectory) => number | PromiseLike<number>;

/**
 * Scores the trajectories of a group against each other: returns one reward
 * per trajectory, in order.
 *
 * @example
 * const shortest: GroupReward = (g) => rankRewards(g.trajectories.map((t) => -t.messages().length));
 */
export type GroupReward = (
  group: TrajectoryGroup,
) => readonly number[] | PromiseLike<readonly number[]>;

/**
 * Sets `reward` on every trajectory of the group from a per-trajectory
 * function (run concurrently), and returns the group.
 *
 * @example
 * await applyReward(group, async (t) => ((await runTests(t)) ? 1 : 0));
 */
export async function applyReward(
  group: TrajectoryGroup,
  reward: TrajectoryReward,
): Promise<TrajectoryGroup> {
  const values = await Promise.all(group.trajectories.map(async (t) => reward(t)));
  values.forEach((value, i) => {
    (group.trajectories[i] as Trajectory).reward = checkReward(value, i);
  });
  return group;
}

/**
 * Sets `reward` on every trajectory of the group from a group-relative
 * function, and returns the group.
 *
 * @throws RangeError when the function returns the wrong number of rewards or a non-finite one.
 * @example
 * await applyGroupReward(group, (g) => zScores(g.trajectories.map(score)));
 */
export async function applyGroupReward(
  group: TrajectoryGroup,
  reward: GroupReward,
): Promise<TrajectoryGroup> {
  const values = await reward(group);
  if (values.length !== group.trajectories.length) {
    throw new RangeError(
      `The group reward returned ${values.length} rewards for ${group.trajectories.length} trajectories; expected one per trajectory.`,
    );
  }
  values.forEach((value, i) => {
    (group.trajectories[i] as Trajectory).reward = checkReward(value, i);
  });
  return group;
}

function checkReward(value: unknown, index: number): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new RangeError(
      `The reward for trajectory ${index} is ${String(value)}; expected a finite number.`,
    );
  }
  return value;
}
