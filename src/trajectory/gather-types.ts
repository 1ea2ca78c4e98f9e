// The gathers' options and inputs: what gatherTrajectoryGroups and
// gatherTrajectories take (checked at run time by gather-options.ts).
import type { PendingGroup, Rollout, TrajectoryGroup } from "./group.js";
import type { GatherProgress, ProgressStream } from "./progress.js";
import type { GroupSink } from "./sink.js";
import type { Trajectory } from "./trajectory.js";

/** A group to gather: a pending group of rollouts, a group, a promise of one, or a list of rollouts. */
export type GatherGroupInput =
  | PendingGroup
  | TrajectoryGroup
  | PromiseLike<TrajectoryGroup>
  | readonly Rollout[];

/** What `afterEach` returns: a group, groups to keep in its place, or nothing to drop it. */
export type AfterEachResult = TrajectoryGroup | readonly TrajectoryGroup[] | null | undefined;

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
   * a judge. As ART's `after_each`: return the group (changed in place or a
   * new one) to keep it, a list of groups to keep each of them in its place,
   * or `undefined`/`null` to drop the group. A hook that throws loses only
   * its own group: it is left out, counted in `failedGroups` of the progress,
   * and logged; every other group is kept.
   *
   * @example
   * await gatherTrajectoryGroups(groups, {
   *   afterEach: (g) => applyGroupReward(g, (g) => rankRewards(g.trajectories.map(score))),
   *   sink: shipper,
   * });
   */
  afterEach?: (
    group: TrajectoryGroup,
  ) => GatherOptions.AfterEachResult | PromiseLike<GatherOptions.AfterEachResult>;
  /**
   * How many trajectory metrics the progress shows (their means, first seen
   * first), as ART's `max_metrics`. Default: all.
   */
  maxMetrics?: number;
  /** Where a group left out (its `afterEach` or its promise failed) is logged. Default `console`. */
  logger?: { warn(message: string): void };
  /** Receives each group as soon as it finishes (e.g. the shipper). */
  sink?: GroupSink;
  /** Label of the progress bar. Default `"gather"`. */
  label?: string;
  /** Where the progress bar draws; it draws only if this is a TTY. Default `process.stderr`. */
  progressStream?: GatherOptions.ProgressStream;
  /**
   * Stops the gather when it aborts: nothing new starts, and the gather
   * rejects with the signal's reason (as `fetch` does). Rollouts already
   * running are not waited for; give them the same signal to stop them.
   */
  signal?: AbortSignal;
  /**
   * How long one rollout (or a group given as a promise) may take, in ms. One
   * that takes longer fails with `GatherTimeoutError` (from `trajectory-recorder/errors`), counted against
   * `maxExceptions` like any failed rollout. Default: no limit.
   */
  rolloutTimeout?: number;
  /**
   * How long `afterEach` and `sink.add` may each take on one group, in ms.
   * An `afterEach` past it loses its group (as one that throws); a `sink.add`
   * past it fails the gather with `GatherTimeoutError` (from `trajectory-recorder/errors`), as one that
   * rejects does. Default: no limit.
   */
  hookTimeout?: number;
}

/** The types {@link GatherOptions}, {@link gatherTrajectoryGroups} and {@link gatherTrajectories} use. */
export declare namespace GatherOptions {
  export type { AfterEachResult, GatherGroupInput, ProgressStream, TrajectoriesRollout };
}

/** Options of {@link gatherTrajectories}. */
export interface GatherTrajectoriesOptions {
  /**
   * How many rollouts may fail. `0` (the default): the first failure
   * rejects, as in ART. Above it, each failure is returned in its slot as an
   * `Error`; past the limit (a count, or below 1 a fraction) the gather throws
   * {@link TooManyExceptionsError}.
   */
  maxExceptions?: number;
  /** How many rollouts given as functions run at once. Default `Infinity`. */
  concurrency?: number;
  /** Called after each rollout ends, with the counts so far. */
  onProgress?: (progress: GatherProgress) => void;
  /** Label of the progress bar. Default `"gather"`. */
  label?: string;
  /** Where the progress bar is drawn. Default: stderr when it is a terminal, else none. */
  progressStream?: GatherOptions.ProgressStream;
  /** Stops the gather when it aborts, as {@link GatherOptions.signal}. */
  signal?: AbortSignal;
  /** How long one rollout may take, in ms, as {@link GatherOptions.rolloutTimeout}. */
  rolloutTimeout?: number;
}

/** One rollout of `gatherTrajectories`: a trajectory, or several from one rollout. */
export type TrajectoriesRollout =
  | Rollout
  | PromiseLike<Iterable<Trajectory>>
  | (() => PromiseLike<Iterable<Trajectory>> | Iterable<Trajectory>);
