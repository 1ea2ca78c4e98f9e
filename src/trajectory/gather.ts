// gatherTrajectoryGroups: runs groups of rollouts with bounded concurrency,
// the hooks, the sink and the progress; gather-trajectories.ts runs rollouts
// that are not grouped.
import PQueue from "p-queue";
import { InvalidArgumentError, kindOf } from "../util/argument-error.js";
import { errorMessage } from "../util/error-message.js";
import { TooManyExceptionsError } from "./errors.js";
import { abortReason, untilAborted, withTimeout } from "./gather-limits.js";
import { MetricMeans } from "./gather-metrics.js";
import { checkGatherOptions } from "./gather-options.js";
import type { GatherGroupInput, GatherOptions } from "./gather-types.js";
import { PendingGroup, type Rollout, runRollout, TrajectoryGroup } from "./group.js";
import { infraFailureOf } from "./infra-failure.js";
import { createProgressBar, type GatherProgress } from "./progress.js";
import type { Trajectory } from "./trajectory.js";

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
    infraFailures: 0,
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
    if (state.infraFailures > 0) p.infraFailures = state.infraFailures;
    const means = metrics.means();
    if (Object.keys(means).length > 0) p.metrics = means;
    options.onProgress?.(p);
    bar.update(p);
  };
  // With a hook, rewards may still change: they are counted after it ran.
  const countRewards = (ts: readonly Trajectory[]) => {
    for (const t of ts) {
      // A rollout the infrastructure failed says nothing of the policy's reward.
      if (infraFailureOf(t) !== undefined) {
        state.infraFailures++;
        continue;
      }
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

function rolloutCount(input: GatherGroupInput): number {
  if (input instanceof PendingGroup) return input.rollouts.length;
  if (Array.isArray(input)) return input.length;
  if (input instanceof TrajectoryGroup) return input.trajectories.length;
  return 1;
}
