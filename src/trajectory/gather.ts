import PQueue from "p-queue";
import { InvalidArgumentError } from "../util/argument-error.js";
import { TooManyExceptionsError } from "./errors.js";
import { PendingGroup, type Rollout, runRollout, TrajectoryGroup } from "./group.js";
import { createProgressBar, type GatherProgress, type ProgressStream } from "./progress.js";
import type { GroupSink } from "./sink.js";
import type { Trajectory } from "./trajectory.js";

/** A group to gather: a pending group of rollouts, a group, a promise of one, or a list of rollouts. */
export type GatherGroupInput =
  | PendingGroup
  | TrajectoryGroup
  | PromiseLike<TrajectoryGroup>
  | readonly Rollout[];

/** Options of {@link gatherTrajectoryGroups}. */
export interface GatherOptions {
  /**
   * How many rollouts may fail before the gather gives up. A number below 1
   * (and above 0) is a fraction of all rollouts; otherwise a count. Default `0`:
   * the first failure aborts, as in ART.
   */
  maxExceptions?: number;
  /** How many rollouts run at once. Default `Infinity` (bounded only for rollouts given as functions). */
  concurrency?: number;
  /**
   * Called after each rollout finishes. With `afterEach`, a rollout's reward
   * joins `rewardMean` only once its group went through the hook.
   */
  onProgress?: (progress: GatherProgress) => void;
  /**
   * Runs on each group as soon as it finishes, before it goes to `sink` and
   * before its rewards are reported: the place for group-relative rewards or
   * a judge. Change the group in place, or return a group to use instead.
   * A hook that throws fails the gather, like a failing sink.
   *
   * Unlike ART's `after_each`, returning nothing keeps the group (it is not dropped).
   *
   * @example
   * await gatherTrajectoryGroups(groups, {
   *   afterEach: (g) => applyGroupReward(g, (g) => rankRewards(g.trajectories.map(score))),
   *   sink: shipper,
   * });
   */
  afterEach?: (
    group: TrajectoryGroup,
    // biome-ignore lint/suspicious/noConfusingVoidType: an `async (g) => { ... }` hook returns Promise<void>, which `undefined` would refuse.
  ) => void | TrajectoryGroup | PromiseLike<void | TrajectoryGroup>;
  /** Receives each group as soon as it finishes (e.g. the shipper). */
  sink?: GroupSink;
  /** Label of the progress bar. Default `"gather"`. */
  label?: string;
  /** Where the progress bar draws; it draws only if this is a TTY. Default `process.stderr`. */
  progressStream?: ProgressStream;
}

/**
 * Runs groups of rollouts with bounded concurrency and returns the finished
 * groups in input order. A failed rollout is recorded in its group's
 * `exceptions` until more than `maxExceptions` have failed; then the gather
 * throws a {@link TooManyExceptionsError} and starts nothing new. A group given
 * as a promise that rejects counts as one failure and is dropped. Each finished
 * group goes to `sink.add`; a progress bar with the running reward mean shows
 * on stderr when it is a terminal.
 *
 * @example
 * const groups = await gatherTrajectoryGroups(
 *   scenarios.map((s) => TrajectoryGroup.from(Array.from({ length: 8 }, () => () => rollout(s)))),
 *   { concurrency: 16, maxExceptions: 0.05, sink: shipper },
 * );
 */
export async function gatherTrajectoryGroups(
  groups: Iterable<GatherGroupInput>,
  options: GatherOptions = {},
): Promise<TrajectoryGroup[]> {
  if (typeof (groups as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] !== "function")
    throw new InvalidArgumentError(
      "gatherTrajectoryGroups(groups, options)",
      "groups",
      "an iterable of groups (TrajectoryGroup.from(...) or arrays of rollouts)",
      groups,
    );
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError(
      "gatherTrajectoryGroups(groups, options)",
      "options",
      "an object",
      options,
    );
  const inputs = [...groups];
  inputs.forEach((input, i) => {
    const thenable = typeof (input as { then?: unknown } | null)?.then === "function";
    if (!thenable && !Array.isArray(input) && !(input instanceof TrajectoryGroup))
      throw new InvalidArgumentError(
        "gatherTrajectoryGroups(groups, options)",
        `groups[${i}]`,
        "a TrajectoryGroup, a pending group, a promise of a group or an array of rollouts",
        input,
      );
  });
  const queue = new PQueue({ concurrency: options.concurrency ?? Number.POSITIVE_INFINITY });
  const total = inputs.reduce((n, g) => n + rolloutCount(g), 0);
  const max = options.maxExceptions ?? 0;
  const limit = max > 0 && max < 1 ? max * total : max;
  const bar = createProgressBar(options.label ?? "gather", options.progressStream);
  const state = { done: 0, exceptions: 0, rewardSum: 0, rewards: 0, failed: undefined as unknown };

  const report = () => {
    const p: GatherProgress = {
      done: state.done,
      total,
      exceptions: state.exceptions,
      rewardMean: state.rewards > 0 ? state.rewardSum / state.rewards : null,
    };
    options.onProgress?.(p);
    bar.update(p);
  };
  // With a hook, rewards may still change: they are counted after it ran.
  const countRewards = (ts: readonly Trajectory[]) => {
    for (const t of ts) {
      state.rewardSum += t.reward;
      state.rewards++;
    }
  };
  const succeed = (t: Trajectory) => {
    state.done++;
    if (!options.afterEach) countRewards([t]);
    report();
  };
  const fail = (error: unknown) => {
    state.done++;
    state.exceptions++;
    report();
    if (state.exceptions > limit) {
      state.failed ??= new TooManyExceptionsError(state.exceptions, limit, { cause: error });
      queue.clear();
      throw state.failed;
    }
  };

  const runGroup = async (input: GatherGroupInput): Promise<TrajectoryGroup | undefined> => {
    let group: TrajectoryGroup;
    if (input instanceof TrajectoryGroup) {
      group = input;
      for (const t of group.trajectories) succeed(t);
    } else if (input instanceof PendingGroup || Array.isArray(input)) {
      const pending =
        input instanceof PendingGroup ? input : new PendingGroup(input as Rollout[], {});
      const items = await Promise.all(
        pending.rollouts.map((r) =>
          queue.add(async () => {
            if (state.failed) throw state.failed;
            try {
              const t = await runRollout(r);
              succeed(t);
              return t;
            } catch (error) {
              if (error === state.failed) throw error;
              fail(error);
              return error instanceof Error ? error : new Error(String(error));
            }
          }),
        ),
      );
      group = new TrajectoryGroup(items as (Trajectory | Error)[], pending.options);
    } else {
      try {
        group = await (input as PromiseLike<TrajectoryGroup>);
        if (!(group instanceof TrajectoryGroup))
          throw new TypeError("A group given as a promise must resolve to a TrajectoryGroup.");
      } catch (error) {
        fail(error);
        return undefined;
      }
      // A promised group counts as one step of the bar.
      state.done++;
      if (!options.afterEach) countRewards(group.trajectories);
      report();
    }
    if (options.afterEach) {
      group = await runAfterEach(options.afterEach, group);
      countRewards(group.trajectories);
      report();
    }
    await options.sink?.add(group);
    return group;
  };

  try {
    const results = await Promise.all(inputs.map(runGroup));
    return results.filter((g): g is TrajectoryGroup => g !== undefined);
  } finally {
    bar.end();
  }
}

async function runAfterEach(
  hook: NonNullable<GatherOptions["afterEach"]>,
  group: TrajectoryGroup,
): Promise<TrajectoryGroup> {
  const out = await hook(group);
  if (out === undefined) return group;
  if (out instanceof TrajectoryGroup) return out;
  throw new TypeError(
    `gatherTrajectoryGroups: afterEach returned ${typeof out}; expected a TrajectoryGroup or nothing.`,
  );
}

function rolloutCount(input: GatherGroupInput): number {
  if (input instanceof PendingGroup) return input.rollouts.length;
  if (Array.isArray(input)) return input.length;
  if (input instanceof TrajectoryGroup) return input.trajectories.length;
  return 1;
}
