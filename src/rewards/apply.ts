import {
  infraFailureOf,
  Trajectory,
  TrajectoryGroup,
  withoutInfraFailures,
} from "../trajectory/index.js";
import { InvalidArgumentError, isObjectLike, kindOf } from "../util/argument-error.js";
import { isMarked, markError } from "../util/error-family.js";

/**
 * A reward function gave something other than one finite number per
 * trajectory; no reward of the group was changed. A `RangeError`.
 *
 * @example
 * try { await applyGroupReward(group, () => [1]); }
 * catch (e) { if (e instanceof InvalidRewardError) console.error(e.message); }
 */
export class InvalidRewardError extends RangeError {
  static {
    markError(InvalidRewardError, "InvalidRewardError");
  }
  /** True when `value` is this error, from any entry point or copy of the package. */
  static isInstance<T extends abstract new (...args: never[]) => unknown>(
    this: T,
    value: unknown,
  ): value is InstanceType<T> {
    // biome-ignore lint/complexity/noThisInStatic: the class isInstance was called on.
    return isMarked(this, value);
  }
  /** The class's name, `"InvalidRewardError"` (what `error.name` reads). */
  override name = "InvalidRewardError";
}

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
 * function (run concurrently), and returns the group. Trajectories marked as
 * infrastructure failures (`t.infraFailure`) are not scored: they keep their
 * reward and are left out of the group's statistics and of training.
 *
 * @example
 * await applyReward(group, async (t) => ((await runTests(t)) ? 1 : 0));
 */
export async function applyReward(
  group: TrajectoryGroup,
  reward: TrajectoryReward,
): Promise<TrajectoryGroup> {
  checkArguments("applyReward(group, reward)", group, reward);
  const values = await Promise.all(
    group.trajectories.map(async (t) => (infraFailureOf(t) === undefined ? reward(t) : undefined)),
  );
  values.forEach((value, i) => {
    if (value === undefined && infraFailureOf(group.trajectories[i]) !== undefined) return;
    (group.trajectories[i] as Trajectory).reward = checkReward(value, i);
  });
  return group;
}

/**
 * Sets `reward` on every trajectory of the group from a group-relative
 * function, and returns the group. Trajectories marked as infrastructure
 * failures (`t.infraFailure`) are left out: the function sees the group
 * without them (so a mean or a standard deviation it takes is the healthy
 * rollouts' own) and returns one reward per trajectory it sees; the marked
 * ones keep their reward.
 *
 * @throws RangeError when the function returns the wrong number of rewards or a non-finite one.
 * @example
 * await applyGroupReward(group, (g) => zScores(g.trajectories.map(score)));
 */
export async function applyGroupReward(
  group: TrajectoryGroup,
  reward: GroupReward,
): Promise<TrajectoryGroup> {
  checkArguments("applyGroupReward(group, reward)", group, reward);
  const scored = withoutInfraFailures(group.trajectories);
  const values: unknown = await reward(scored === group.trajectories ? group : healthyView(group));
  if (!Array.isArray(values))
    throw new InvalidRewardError(
      `The group reward returned ${kindOf(values)}; expected an array of one reward per trajectory.`,
    );
  const left = group.trajectories.length - scored.length;
  if (values.length !== scored.length) {
    throw new InvalidRewardError(
      `The group reward returned ${values.length} rewards for ${scored.length} trajectories${left > 0 ? ` (${left} more marked as infrastructure failures are left out)` : ""}; expected one per trajectory.`,
    );
  }
  const checked = values.map((value, i) => checkReward(value, i));
  checked.forEach((value, i) => {
    (scored[i] as Trajectory).reward = value;
  });
  return group;
}

/**
 * The group without its infrastructure failures, for a group reward to see:
 * a new group sharing the healthy trajectories and the group's fields (a
 * view over the group when its trajectories come from another copy of the
 * package, which the constructor would not take as trajectories).
 */
export function healthyView(group: TrajectoryGroup): TrajectoryGroup {
  const healthy = withoutInfraFailures(group.trajectories) as Trajectory[];
  if (healthy.every((t) => t instanceof Trajectory))
    return new TrajectoryGroup({
      trajectories: healthy,
      exceptions: group.exceptions,
      metadata: group.metadata,
      metrics: group.metrics,
      logs: group.logs,
    });
  return Object.create(group, { trajectories: { value: healthy, enumerable: true } });
}

function checkReward(value: unknown, index: number): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidRewardError(
      `The reward for trajectory ${index} is ${typeof value === "number" ? value : kindOf(value)}; expected a finite number.`,
    );
  }
  return value;
}

/**
 * Checks that `group` is a group of trajectories, as the helpers of this
 * folder take it. Structural, so a group from another copy of the package fits.
 */
export function checkGroup(call: string, group: unknown): asserts group is TrajectoryGroup {
  const trajectories = isObjectLike(group) ? group.trajectories : undefined;
  if (!Array.isArray(trajectories))
    throw new InvalidArgumentError(call, "group", "a TrajectoryGroup", group);
  for (let i = 0; i < trajectories.length; i++) {
    const t: unknown = trajectories[i];
    if (!isObjectLike(t) || typeof t.messages !== "function")
      throw new InvalidArgumentError(call, `group.trajectories[${i}]`, "a Trajectory", t);
  }
}

function checkArguments(call: string, group: unknown, reward: unknown): void {
  checkGroup(call, group);
  if (typeof reward !== "function")
    throw new InvalidArgumentError(call, "reward", "a function", reward);
}
