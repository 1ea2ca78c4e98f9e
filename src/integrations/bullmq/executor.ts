// The BullMQ mode behind the RolloutExecutor seam: submit enqueues a group
// flow (the producer), workers anywhere run it, and collecting is the
// coordinator's hand-off to a sink, here the executor's outcome channel; so
// the executor relies on what producer, collector and coordinator already
// guarantee and reads none of their Redis keys itself.
import { Queue, QueueEvents } from "bullmq";
import type { TrainableModel } from "../../training/index.js";
import {
  checkGroupRequest,
  OutcomeChannel,
  type RolloutExecutor,
  type RolloutExecutorStats,
  type RolloutGroupRequest,
  type RolloutOutcome,
  type TrajectoryGroup,
} from "../../trajectory/index.js";
import { InvalidArgumentError } from "../../util/argument-error.js";
import { TrajectoryRecorderError } from "../../util/error-family.js";
import { errorMessage, keepClassName } from "../../util/index.js";
import type { GroupCollectorOptions } from "./collector.js";
import { TrainingCoordinator } from "./coordinator.js";
import { resolveCluster } from "./options.js";
import { type KeepJobs, RolloutProducer } from "./producer.js";
import { bullConnection, type DistributedLogger, queueOptions } from "./redis.js";

/** Options of {@link BullMQExecutor}. */
export interface BullMQExecutorOptions extends GroupCollectorOptions {
  /**
   * The model the workers sample: its `getStep` is read each poll and the
   * step published to the workers (`ctx.step()`, `ctx.model()`).
   */
  model: Pick<TrainableModel, "getStep">;
  /** Attempts per rollout when it throws (the producer's). Default 1. */
  attempts?: number;
  /** How long finished jobs stay in Redis (the producer's `keepJobs`). */
  keepJobs?: KeepJobs;
  /** How often to look for finished groups and the model's step, in ms. Default 1000. */
  pollIntervalMs?: number;
  /** The coordinator lock's lifetime without renewal, in ms. Default 30000. */
  lockTtlMs?: number;
  /** Also collect (score and store) groups in this process. Default true. */
  collect?: boolean;
}

/**
 * Runs groups of rollouts on `RolloutWorker`s (any number of processes and
 * machines) and hands them back scored, in the order they are collected: the
 * BullMQ mode as a `RolloutExecutor`, so that `trainWithExecutor` runs the
 * same with it as with `InProcessExecutor`. It holds the run's coordinator
 * lock (one per run `name`) and hands over each group at most once, as
 * `TrainingCoordinator` with a `sink` does; a group this process is killed
 * while holding is reported by the next one (`coordinator.unhanded()`).
 * Groups an earlier process submitted and did not collect come out too.
 *
 * @example
 * const executor = await BullMQExecutor.start({ connection, model, afterEach: score });
 * // workers, elsewhere: RolloutWorker.start({ connection, recorder, rollout: ({ payload }) => ... })
 * await trainWithExecutor(model, executor, { scenarios, rolloutsPerGroup: 8, trainEvery: { groups: 4 } });
 * await executor.close();
 */
export class BullMQExecutor<S = unknown> implements RolloutExecutor<S> {
  readonly #producer: RolloutProducer<S>;
  readonly #groups: Queue;
  readonly #events: QueueEvents;
  readonly #channel = new OutcomeChannel("BullMQExecutor");
  readonly #logger: DistributedLogger;
  /** Submitted here and not yet ended. */
  readonly #running = new Set<string>();
  /** Cancelled: dropped if they are collected all the same. */
  readonly #cancelled = new Set<string>();
  readonly #counts = { submitted: 0, scored: 0, failed: 0, cancelled: 0 };
  #coordinator: TrainingCoordinator | undefined;
  #closed = false;

  private constructor(options: BullMQExecutorOptions) {
    const cluster = resolveCluster(options, "BullMQExecutor");
    this.#logger = options.logger ?? console;
    this.#producer = new RolloutProducer<S>({
      ...options,
      attempts: options.attempts,
      keepJobs: options.keepJobs,
      logger: this.#logger,
    });
    this.#groups = new Queue(cluster.groupQueue, queueOptions(cluster));
    this.#groups.on("error", () => {});
    this.#events = new QueueEvents(cluster.groupQueue, {
      connection: bullConnection(cluster),
      prefix: cluster.prefix,
    });
    this.#events.on("error", () => {});
    // Only a group's last failure is a `failed` event (retries are not).
    this.#events.on("failed", ({ jobId, failedReason }) => this.#failed(jobId, failedReason));
  }

  /**
   * Checks Redis, starts collecting, and resolves once this process holds
   * the run's coordinator lock.
   *
   * @throws RedisUnavailableError when Redis cannot be reached.
   */
  static async start<S = unknown>(options: BullMQExecutorOptions): Promise<BullMQExecutor<S>> {
    if (typeof options?.model?.getStep !== "function")
      throw new InvalidArgumentError(
        "BullMQExecutor",
        "options.model",
        "a TrainableModel (its getStep)",
        options?.model,
      );
    const executor = new BullMQExecutor<S>(options);
    try {
      await executor.#events.waitUntilReady();
      executor.#coordinator = await TrainingCoordinator.start({
        ...options,
        sink: { add: (group) => executor.#handOver(group) },
        // Every group comes out: a tied one, or one sampled long ago, is the
        // training loop's to judge (its trainEvery.noSignal, maxStepsOffPolicy).
        noSignal: "send",
        maxStepsOffPolicy: Number.POSITIVE_INFINITY,
      });
    } catch (error) {
      await executor.#release();
      throw error;
    }
    return executor;
  }

  /**
   * Enqueues the group's flow; resolves once Redis holds it. The scenario
   * must be plain JSON (every worker reads it back the same).
   *
   * @example
   * await executor.submit({ id: "q42", scenario: { question: "2+2?" }, rollouts: 8 });
   */
  async submit(request: RolloutGroupRequest<S>): Promise<void> {
    const call = "BullMQExecutor.submit(request)";
    checkGroupRequest(call, request);
    if (this.#closed) throw new TrajectoryRecorderError(`${call}: the executor is closed.`);
    const { id, scenario, rollouts, metadata } = request;
    const { existing } = await this.#producer.enqueue([
      { id, payload: scenario, rollouts, metadata },
    ]);
    // Enqueued before (a restarted loop): it comes out once, as any other.
    if (existing.length > 0)
      this.#logger.info(`BullMQExecutor: group ${id} was enqueued already; not enqueued again.`);
    this.#cancelled.delete(id);
    this.#running.add(id);
    this.#counts.submitted++;
  }

  /**
   * The outcomes, in the order groups are collected.
   *
   * @example
   * for await (const o of executor.collect()) if (o.status === "scored") await shipper.add(o.group);
   */
  collect(): AsyncIterable<RolloutOutcome> {
    return this.#channel.iterate();
  }

  /**
   * Removes the group's rollouts that have not started; if none is running
   * the whole flow goes, else the group is dropped when it is collected.
   * Resolves true if the group was running here or was still in Redis.
   *
   * @example
   * await executor.cancel("q42");
   */
  async cancel(id: string): Promise<boolean> {
    if (typeof id !== "string")
      throw new InvalidArgumentError("BullMQExecutor.cancel(id)", "id", "a string", id);
    const parent = await this.#groups.getJob(id);
    // Collected (or failed) already: nothing is left to stop in the queues.
    const state = parent ? await parent.getState() : undefined;
    const ended = state === "completed" || state === "failed";
    const mine = this.#running.delete(id);
    if (!mine && (!parent || ended)) return false;
    // Dropped if it is collected all the same (a rollout of it was running).
    this.#cancelled.add(id);
    if (parent && !ended) {
      // 0 when a rollout of it is running (locked): then only the rest goes.
      const removed = await this.#groups.remove(id, { removeChildren: true });
      if (removed !== 1) await parent.removeUnprocessedChildren();
    }
    this.#counts.cancelled++;
    this.#logger.info(`BullMQExecutor: group ${id} cancelled.`);
    return true;
  }

  /**
   * Cancels every group submitted here and not yet ended.
   *
   * @example
   * const stopped = await executor.cancelAll();
   */
  async cancelAll(): Promise<number> {
    let n = 0;
    for (const id of [...this.#running]) if (await this.cancel(id)) n++;
    return n;
  }

  /**
   * The counts so far (`running` counts this process's submissions only).
   *
   * @example
   * console.log(executor.stats().running);
   */
  stats(): RolloutExecutorStats {
    return { ...this.#counts, running: this.#running.size, waiting: this.#channel.waiting };
  }

  /**
   * Ends `collect()` and stops collecting; groups not taken stay in Redis
   * for the next process (the one being handed over goes back first in line).
   * Rollouts still queued or running are left to the workers.
   *
   * @example
   * await executor.close();
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#channel.close();
    await this.#release();
    if (this.#running.size > 0)
      this.#logger.info(
        `BullMQExecutor: closed with ${this.#running.size} group(s) submitted here still queued or running; they stay in Redis and come out of the next executor on this run.`,
      );
  }

  async #release(): Promise<void> {
    await this.#coordinator?.close();
    await Promise.allSettled([this.#producer.close(), this.#groups.close(), this.#events.close()]);
  }

  // The coordinator's sink: resolves once the consumer is done with the group.
  async #handOver(group: TrajectoryGroup): Promise<void> {
    const id = String(group.metadata.group_id ?? "");
    if (this.#cancelled.delete(id)) {
      this.#logger.info(`BullMQExecutor: group ${id} was cancelled; dropped as it was collected.`);
      return;
    }
    this.#running.delete(id);
    this.#counts.scored++;
    await this.#channel.push({ status: "scored", id, group });
  }

  #failed(id: string, reason: string): void {
    if (this.#cancelled.has(id) || this.#closed) return;
    this.#running.delete(id);
    this.#counts.failed++;
    const error = new TrajectoryRecorderError(`BullMQExecutor: group ${id} failed: ${reason}`);
    this.#channel.push({ status: "failed", id, error }).catch((e) => {
      this.#logger.warn(`BullMQExecutor: ${errorMessage(e)} (${error.message})`);
    });
  }
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(BullMQExecutor, "BullMQExecutor");
