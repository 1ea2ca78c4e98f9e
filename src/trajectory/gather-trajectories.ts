// gatherTrajectories: runs rollouts that are not grouped, as ART's
// gather_trajectories, one result per input in input order.
import PQueue from "p-queue";
import { InvalidArgumentError, kindOf } from "../util/argument-error.js";
import { TooManyExceptionsError } from "./errors.js";
import { abortReason, untilAborted, withTimeout } from "./gather-limits.js";
import { MetricMeans } from "./gather-metrics.js";
import { checkGatherTrajectoriesOptions } from "./gather-options.js";
import type {
  GatherOptions,
  GatherTrajectoriesOptions,
  TrajectoriesRollout,
} from "./gather-types.js";
import { infraFailureOf } from "./infra-failure.js";
import { createProgressBar, type GatherProgress } from "./progress.js";
import { Trajectory } from "./trajectory.js";

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
  const state = { done: 0, exceptions: 0, rewardSum: 0, rewards: 0, infraFailures: 0 };
  const metrics = new MetricMeans(undefined);
  let failed: unknown;
  const report = () => {
    const p: GatherProgress = {
      done: state.done,
      total,
      exceptions: state.exceptions,
      rewardMean: state.rewards > 0 ? state.rewardSum / state.rewards : null,
    };
    if (state.infraFailures > 0) p.infraFailures = state.infraFailures;
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
        // A rollout the infrastructure failed says nothing of the policy's reward.
        if (infraFailureOf(t) !== undefined) {
          state.infraFailures++;
          continue;
        }
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
