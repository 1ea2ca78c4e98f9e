// The in-process RolloutExecutor: each group is one gatherTrajectoryGroups
// call (its hooks, limits and exceptions as always), and one queue shared by
// every group bounds how many rollouts run at once.
import PQueue from "p-queue";
import { InvalidArgumentError } from "../util/argument-error.js";
import { TrajectoryRecorderError } from "../util/error-family.js";
import { errorMessage } from "../util/error-message.js";
import {
  checkGroupRequest,
  type RolloutExecutor,
  type RolloutExecutorStats,
  type RolloutGroupRequest,
  type RolloutOutcome,
} from "./executor.js";
import { OutcomeChannel } from "./executor-channel.js";
import { gatherTrajectoryGroups } from "./gather.js";
import { checkGatherOptions } from "./gather-options.js";
import type { GatherOptions } from "./gather-types.js";
import { PendingGroup } from "./group.js";
import type { Trajectory } from "./trajectory.js";

/** What {@link InProcessExecutorOptions.rollout} receives beside the scenario. */
export interface InProcessRolloutContext {
  /** The group's id. */
  groupId: string;
  /** This rollout's place in its group, from 0. */
  index: number;
  /** Aborts when the group is cancelled or the executor closes: pass it on to stop early. */
  signal: AbortSignal;
}

/** Options of {@link InProcessExecutor}. */
export interface InProcessExecutorOptions<S = unknown> {
  /** Runs one rollout of a scenario and resolves with its trajectory (e.g. from `recorder.rollout`). */
  rollout: (scenario: S, context: InProcessRolloutContext) => Trajectory | PromiseLike<Trajectory>;
  /** Rollouts running at once, across all groups. Default 16. */
  concurrency?: number;
  /**
   * Failed rollouts a group may have: a count, or below 1 a fraction of its
   * rollouts. Past it the group fails (its outcome says why). Default 0, as
   * `gatherTrajectoryGroups`.
   */
  maxExceptions?: number;
  /**
   * Scores each finished group, as `gatherTrajectoryGroups`' `afterEach`:
   * return the group (or groups) to keep, nothing to drop it (its outcome is
   * then a failure saying so).
   */
  afterEach?: GatherOptions["afterEach"];
  /** How long one rollout may take, in ms (`gatherTrajectoryGroups`' `rolloutTimeout`). Default: no limit. */
  rolloutTimeout?: number;
  /** How long `afterEach` may take on a group, in ms. Default: no limit. */
  hookTimeout?: number;
  /** Where dropped work is logged. Default `console`. */
  logger?: { warn(message: string): void };
}

// No progress bar per group: the loop that collects reports progress.
const NO_BAR = { isTTY: false, write: () => true };

/**
 * Runs groups of rollouts in this process with bounded concurrency, through
 * `gatherTrajectoryGroups`, and hands them back as they finish: the
 * `RolloutExecutor` to develop with, and the one to swap for `BullMQExecutor`
 * when rollouts outgrow one machine.
 *
 * @example
 * const executor = new InProcessExecutor({
 *   rollout: (scenario) => recorder.rollout(async (t) => { t.reward = await runAgent(scenario); }),
 *   concurrency: 16,
 *   afterEach: (g) => applyGroupReward(g, (g) => rankRewards(g.trajectories.map((t) => t.reward))),
 * });
 * await trainWithExecutor(model, executor, { scenarios, rolloutsPerGroup: 8, trainEvery: { groups: 4 } });
 * await executor.close();
 */
export class InProcessExecutor<S = unknown> implements RolloutExecutor<S> {
  readonly #options: InProcessExecutorOptions<S>;
  readonly #queue: PQueue;
  readonly #channel = new OutcomeChannel("InProcessExecutor");
  readonly #running = new Map<string, AbortController>();
  readonly #counts = { submitted: 0, scored: 0, failed: 0, cancelled: 0 };
  #closed = false;

  constructor(options: InProcessExecutorOptions<S>) {
    const call = "new InProcessExecutor(options)";
    if (options === null || typeof options !== "object")
      throw new InvalidArgumentError(call, "options", "an object", options);
    if (typeof options.rollout !== "function")
      throw new InvalidArgumentError(
        call,
        "options.rollout",
        "a function (scenario, context) => Trajectory",
        options.rollout,
      );
    const concurrency = options.concurrency ?? 16;
    if (
      !(
        concurrency === Number.POSITIVE_INFINITY ||
        (Number.isInteger(concurrency) && concurrency >= 1)
      )
    )
      throw new InvalidArgumentError(
        call,
        "options.concurrency",
        "a whole number of rollouts of at least 1 (or Infinity)",
        concurrency,
      );
    // The rest is what each group's gather takes: checked now, named as given here.
    const { maxExceptions, afterEach, rolloutTimeout, hookTimeout, logger } = options;
    checkGatherOptions({ maxExceptions, afterEach, rolloutTimeout, hookTimeout, logger }, call);
    this.#options = options;
    this.#queue = new PQueue({ concurrency });
  }

  /**
   * Starts the group's rollouts (as the shared concurrency allows).
   *
   * @example
   * await executor.submit({ id: "q42", scenario: { question: "2+2?" }, rollouts: 8 });
   */
  async submit(request: RolloutGroupRequest<S>): Promise<void> {
    const call = "InProcessExecutor.submit(request)";
    checkGroupRequest(call, request);
    if (this.#closed) throw new TrajectoryRecorderError(`${call}: the executor is closed.`);
    if (this.#running.has(request.id))
      throw new InvalidArgumentError(
        call,
        "request.id",
        "",
        undefined,
        `group ${JSON.stringify(request.id)} is running already; ids must be unique`,
      );
    const abort = new AbortController();
    this.#running.set(request.id, abort);
    this.#counts.submitted++;
    void this.#run(request, abort);
  }

  /**
   * The outcomes, in the order groups finish.
   *
   * @example
   * for await (const o of executor.collect()) if (o.status === "scored") await shipper.add(o.group);
   */
  collect(): AsyncIterable<RolloutOutcome> {
    return this.#channel.iterate();
  }

  /**
   * Cancels a running group: its queued rollouts never start, running ones
   * see their `signal` abort, and it produces no outcome.
   *
   * @example
   * await executor.cancel("q42");
   */
  async cancel(id: string): Promise<boolean> {
    if (typeof id !== "string")
      throw new InvalidArgumentError("InProcessExecutor.cancel(id)", "id", "a string", id);
    const abort = this.#running.get(id);
    if (!abort) return false;
    this.#running.delete(id);
    this.#counts.cancelled++;
    abort.abort(new TrajectoryRecorderError(`InProcessExecutor: group ${id} was cancelled.`));
    return true;
  }

  /**
   * Cancels every running group.
   *
   * @example
   * const stopped = await executor.cancelAll();
   */
  async cancelAll(): Promise<number> {
    let n = 0;
    for (const id of [...this.#running.keys()]) if (await this.cancel(id)) n++;
    return n;
  }

  /**
   * The counts so far.
   *
   * @example
   * console.log(executor.stats().running);
   */
  stats(): RolloutExecutorStats {
    return { ...this.#counts, running: this.#running.size, waiting: this.#channel.waiting };
  }

  /**
   * Cancels what runs, ends `collect()`, and logs the outcomes not taken.
   *
   * @example
   * await executor.close();
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const cancelled = await this.cancelAll();
    const left = this.#channel.close();
    if (cancelled > 0 || left > 0)
      (this.#options.logger ?? console).warn(
        `InProcessExecutor: closed with ${cancelled} group(s) still running (cancelled) and ${left} finished group(s) not collected (dropped); stats() counts them.`,
      );
  }

  async #run(request: RolloutGroupRequest<S>, abort: AbortController): Promise<void> {
    const { id, scenario } = request;
    const { signal } = abort;
    const rollouts = Array.from(
      { length: request.rollouts },
      (_, index) => () =>
        this.#queue.add(() => this.#options.rollout(scenario, { groupId: id, index, signal }), {
          signal,
        }) as Promise<Trajectory>,
    );
    const o = this.#options;
    let outcomes: RolloutOutcome[];
    try {
      const groups = await gatherTrajectoryGroups(
        [new PendingGroup(rollouts, { metadata: { ...request.metadata, group_id: id } })],
        {
          maxExceptions: o.maxExceptions,
          afterEach: o.afterEach,
          rolloutTimeout: o.rolloutTimeout,
          hookTimeout: o.hookTimeout,
          logger: o.logger,
          signal,
          progressStream: NO_BAR,
        },
      );
      outcomes =
        groups.length > 0
          ? groups.map((group): RolloutOutcome => ({ status: "scored", id, group }))
          : [
              {
                status: "failed",
                id,
                error: new TrajectoryRecorderError(
                  `InProcessExecutor: group ${id} was left out by afterEach (it returned nothing, or threw: see the log).`,
                ),
              },
            ];
    } catch (error) {
      // Cancelled: counted by cancel, and no outcome.
      if (signal.aborted) return;
      outcomes = [
        {
          status: "failed",
          id,
          error: error instanceof Error ? error : new Error(errorMessage(error)),
        },
      ];
    }
    if (this.#running.get(id) !== abort) return;
    this.#running.delete(id);
    for (const outcome of outcomes) {
      if (outcome.status === "scored") this.#counts.scored++;
      else this.#counts.failed++;
      // Refused only by close(), which logs what it dropped.
      this.#channel.push(outcome).catch(() => {});
    }
  }
}
