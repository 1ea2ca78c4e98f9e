import PQueue from "p-queue";
import { InvalidArgumentError, kindOf } from "../util/argument-error.js";
import { errorMessage } from "../util/error-message.js";
import { TooManyExceptionsError } from "./errors.js";
import { abortReason, untilAborted, withTimeout } from "./gather-limits.js";
import { checkGatherOptions, checkGatherTrajectoriesOptions } from "./gather-options.js";
import { PendingGroup, type Rollout, runRollout, TrajectoryGroup } from "./group.js";
import type { ProgressStream } from "./progress.js";
import { createProgressBar, type GatherProgress } from "./progress.js";
import type { GroupSink } from "./sink.js";
import { Trajectory } from "./trajectory.js";

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
  groups: Iterable<GatherOptions.GatherGroupInput>,
  options: GatherOptions = {},
): Promise<TrajectoryGroup[]> {
  if (typeof (groups as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] !== "function")
    throw new InvalidArgumentError(
      "gatherTrajectoryGroups(groups, options)",
      "groups",
      "an iterable of groups (TrajectoryGroup.from(...) or arrays of rollouts)",
      groups,
    );
  checkGatherOptions(options);
  const { signal, rolloutTimeout, hookTimeout } = options;
  if (signal?.aborted) throw abortReason(signal);
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
  const state = {
    done: 0,
    exceptions: 0,
    rewardSum: 0,
    rewards: 0,
    failedGroups: 0,
    failed: undefined as unknown,
  };
  const metrics = new MetricMeans(options.maxMetrics);

  const report = () => {
    const p: GatherProgress = {
      done: state.done,
      total,
      exceptions: state.exceptions,
      rewardMean: state.rewards > 0 ? state.rewardSum / state.rewards : null,
    };
    // Present only when there is something to say, so a plain gather's progress stays as it was.
    if (state.failedGroups > 0) p.failedGroups = state.failedGroups;
    const means = metrics.means();
    if (Object.keys(means).length > 0) p.metrics = means;
    options.onProgress?.(p);
    bar.update(p);
  };
  // With a hook, rewards may still change: they are counted after it ran.
  const countRewards = (ts: readonly Trajectory[]) => {
    for (const t of ts) {
      state.rewardSum += t.reward;
      state.rewards++;
      metrics.add(t);
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

  const runGroup = async (input: GatherGroupInput, index: number): Promise<TrajectoryGroup[]> => {
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
              const t = await withTimeout(
                runRollout(r),
                rolloutTimeout,
                () => `a rollout of groups[${index}]`,
                "rolloutTimeout",
              );
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
        group = await withTimeout(
          input as PromiseLike<TrajectoryGroup>,
          rolloutTimeout,
          () => `the promised group groups[${index}]`,
          "rolloutTimeout",
        );
        if (!(group instanceof TrajectoryGroup))
          throw new InvalidArgumentError(
            "gatherTrajectoryGroups(groups, options)",
            `groups[${index}]`,
            "a promise resolving to a TrajectoryGroup",
            group,
            `a group given as a promise must resolve to a TrajectoryGroup; it resolved to ${kindOf(group)}`,
          );
      } catch (error) {
        fail(error);
        // Within maxExceptions the gather goes on without this group: say so,
        // as for a group whose afterEach failed (nothing is dropped unsaid).
        (options.logger ?? console).warn(
          `gatherTrajectoryGroups: groups[${index}] failed and is left out (${state.exceptions} failure(s) so far, maxExceptions ${limit}): ${errorMessage(error)}`,
        );
        return [];
      }
      // A promised group counts as one step of the bar.
      state.done++;
      if (!options.afterEach) countRewards(group.trajectories);
      report();
    }
    let kept: TrajectoryGroup[] = [group];
    if (options.afterEach) {
      try {
        kept = await withTimeout(
          runAfterEach(options.afterEach, group),
          hookTimeout,
          () => `afterEach of groups[${index}]`,
          "hookTimeout",
        );
      } catch (error) {
        // Only this group is lost: counted, logged, and the gather goes on.
        state.failedGroups++;
        report();
        (options.logger ?? console).warn(
          `gatherTrajectoryGroups: afterEach failed on groups[${index}], which is left out (${state.failedGroups} so far): ${errorMessage(error)}`,
        );
        return [];
      }
      for (const g of kept) countRewards(g.trajectories);
      report();
    }
    const sink = options.sink;
    if (sink)
      for (const g of kept)
        await withTimeout(
          sink.add(g),
          hookTimeout,
          () => `sink.add of groups[${index}]`,
          "hookTimeout",
        );
    return kept;
  };

  // Aborted: nothing queued starts, and every rollout about to start throws.
  const onAbort = () => {
    if (!signal) return;
    state.failed ??= abortReason(signal);
    queue.clear();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const results = await untilAborted(Promise.all(inputs.map(runGroup)), signal);
    return results.flat();
  } finally {
    signal?.removeEventListener("abort", onAbort);
    bar.end();
  }
}

// As ART: None drops the group, a list stands in its place, a group replaces it.
async function runAfterEach(
  hook: NonNullable<GatherOptions["afterEach"]>,
  group: TrajectoryGroup,
): Promise<TrajectoryGroup[]> {
  const out: unknown = await hook(group);
  if (out === undefined || out === null) return [];
  if (out instanceof TrajectoryGroup) return [out];
  if (Array.isArray(out) && out.every((g) => g instanceof TrajectoryGroup)) return [...out];
  throw new InvalidArgumentError(
    "gatherTrajectoryGroups(groups, options)",
    "options.afterEach",
    "",
    undefined,
    `returned ${Array.isArray(out) ? "a list holding something other than groups" : kindOf(out)}; expected a TrajectoryGroup, a list of them, or null to drop the group`,
  );
}

/** Running means of trajectory metrics (and completion_tokens), as ART's progress bar keeps them. */
class MetricMeans {
  readonly #sums = new Map<string, { total: number; count: number }>();
  constructor(private readonly max: number | undefined) {}

  add(t: Trajectory): void {
    const tokens = completionTokens(t);
    // As ART's record_metrics: set on the trajectory when every Choice has a count.
    if (tokens !== undefined) t.metrics.completion_tokens = tokens;
    for (const [name, value] of Object.entries(t.metrics)) {
      const n = typeof value === "boolean" ? Number(value) : value;
      if (typeof n !== "number" || !Number.isFinite(n)) continue;
      const entry = this.#sums.get(name) ?? { total: 0, count: 0 };
      entry.total += n;
      entry.count++;
      this.#sums.set(name, entry);
    }
  }

  means(): Record<string, number> {
    const out: Record<string, number> = {};
    let shown = 0;
    for (const [name, { total, count }] of this.#sums) {
      if (this.max !== undefined && shown >= this.max) break;
      out[name] = total / count;
      shown++;
    }
    return out;
  }
}

// The sampled tokens of every Choice of the trajectory, or undefined when one has no count.
function completionTokens(t: Trajectory): number | undefined {
  const items = [
    ...t.messages_and_choices,
    ...t.additional_histories.flatMap((h) => h.messages_and_choices),
  ];
  let sum = 0;
  let choices = 0;
  for (const item of items) {
    if (!item || typeof item !== "object" || !("finish_reason" in item)) continue;
    choices++;
    const choice = item as { token_ids?: unknown; logprobs?: { content?: unknown } | null };
    const count = Array.isArray(choice.token_ids)
      ? choice.token_ids.length
      : Array.isArray(choice.logprobs?.content)
        ? choice.logprobs.content.length
        : 0;
    if (count <= 0) return undefined;
    sum += count;
  }
  return choices > 0 ? sum : undefined;
}

function rolloutCount(input: GatherGroupInput): number {
  if (input instanceof PendingGroup) return input.rollouts.length;
  if (Array.isArray(input)) return input.length;
  if (input instanceof TrajectoryGroup) return input.trajectories.length;
  return 1;
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

/** One rollout of {@link gatherTrajectories}: a trajectory, or several from one rollout. */
export type TrajectoriesRollout =
  | Rollout
  | PromiseLike<Iterable<Trajectory>>
  | (() => PromiseLike<Iterable<Trajectory>> | Iterable<Trajectory>);

/**
 * Runs rollouts that are not grouped and returns one result per input, in
 * input order, as ART's `gather_trajectories`: a Trajectory, or a list of
 * them when the rollout gave several, or (with `maxExceptions` above 0) the
 * `Error` of a rollout that failed.
 *
 * @example
 * const results = await gatherTrajectories(prompts.map((p) => () => rollout(p)), { maxExceptions: 0.1 });
 * const trajectories = results.filter((r) => r instanceof Trajectory);
 */
export async function gatherTrajectories(
  rollouts: Iterable<GatherOptions.TrajectoriesRollout>,
  options: GatherTrajectoriesOptions = {},
): Promise<(Trajectory | Trajectory[] | Error)[]> {
  const call = "gatherTrajectories(rollouts, options)";
  if (typeof (rollouts as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] !== "function")
    throw new InvalidArgumentError(call, "rollouts", "an iterable of rollouts", rollouts);
  checkGatherTrajectoriesOptions(options);
  const { signal, rolloutTimeout } = options;
  if (signal?.aborted) throw abortReason(signal);
  const inputs = [...rollouts];
  const queue = new PQueue({ concurrency: options.concurrency ?? Number.POSITIVE_INFINITY });
  const total = inputs.length;
  const max = options.maxExceptions ?? 0;
  const limit = max > 0 && max < 1 ? max * total : max;
  const bar = createProgressBar(options.label ?? "gather", options.progressStream);
  const state = { done: 0, exceptions: 0, rewardSum: 0, rewards: 0 };
  const metrics = new MetricMeans(undefined);
  let failed: unknown;
  const report = () => {
    const p: GatherProgress = {
      done: state.done,
      total,
      exceptions: state.exceptions,
      rewardMean: state.rewards > 0 ? state.rewardSum / state.rewards : null,
    };
    const means = metrics.means();
    if (Object.keys(means).length > 0) p.metrics = means;
    options.onProgress?.(p);
    bar.update(p);
  };
  const run = async (
    input: TrajectoriesRollout,
    index: number,
  ): Promise<Trajectory | Trajectory[] | Error> => {
    if (failed) throw failed;
    try {
      const value: unknown = await withTimeout(
        typeof input === "function" ? input() : input,
        rolloutTimeout,
        () => `rollouts[${index}]`,
        "rolloutTimeout",
      );
      let out: Trajectory | Trajectory[];
      if (value instanceof Trajectory) out = value;
      else if (
        value !== null &&
        typeof value === "object" &&
        Symbol.iterator in value &&
        [...(value as Iterable<unknown>)].every((t) => t instanceof Trajectory)
      )
        out = [...(value as Iterable<Trajectory>)];
      else
        throw new InvalidArgumentError(
          "gatherTrajectories(rollouts, options)",
          `rollouts[${index}]`,
          "",
          undefined,
          `a rollout must resolve to a Trajectory or an iterable of Trajectories; it resolved to ${kindOf(value)}`,
        );
      for (const t of Array.isArray(out) ? out : [out]) {
        state.rewardSum += t.reward;
        state.rewards++;
        metrics.add(t);
      }
      state.done++;
      report();
      return out;
    } catch (error) {
      if (error === failed) throw error;
      state.done++;
      state.exceptions++;
      report();
      if (state.exceptions > limit) {
        failed ??= new TooManyExceptionsError(state.exceptions, limit, { cause: error });
        queue.clear();
        throw failed;
      }
      return error instanceof Error ? error : new Error(String(error));
    }
  };
  const onAbort = () => {
    if (!signal) return;
    failed ??= abortReason(signal);
    queue.clear();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const all = Promise.all(
      inputs.map((input, i) =>
        typeof input === "function"
          ? (queue.add(() => run(input, i)) as Promise<Trajectory | Trajectory[] | Error>)
          : run(input, i),
      ),
    );
    return await untilAborted(all, signal);
  } finally {
    signal?.removeEventListener("abort", onAbort);
    bar.end();
  }
}
