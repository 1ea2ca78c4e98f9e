import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Redis } from "ioredis";
import { errorMessage, keepClassName } from "../../util/index.js";
import { payloadStoreOf } from "./claim-check.js";
import { type GroupCollector, startCollector } from "./collector.js";
import { drain } from "./control.js";
import {
  type ResolvedCoordinatorOptions,
  resolveCoordinatorOptions,
  type TrainingCoordinatorOptions,
} from "./coordinator-options.js";
import { CoordinatorRun } from "./coordinator-run.js";
import { handAgain, type UnhandedGroups, unhanded } from "./handoff.js";
import { CoordinatorLock } from "./lock.js";
import { type Cluster, resolveCluster } from "./options.js";
import { OwnTraining } from "./own-training.js";
import type { ClusterProgress } from "./progress.js";
import { assertReachable, type DistributedLogger, OutageLog, openClient } from "./redis.js";
import { Rerunner } from "./rerun.js";
import { Retention } from "./retention.js";
import { SinkHandOff } from "./sink-handoff.js";
import { storeKeys } from "./store.js";

export type {
  CoordinatorBaseOptions,
  CoordinatorSinkOptions,
  CoordinatorTrainingOptions,
  TrainingCoordinatorOptions,
} from "./coordinator-options.js";

/**
 * Trains on collected groups, `trainEvery` at a time, one job at a time,
 * while workers keep running rollouts (pipelined RL); publishes each new
 * checkpoint step through Redis, where workers pick it up for their next
 * calls. Forming a batch is atomic in Redis, so a group is trained in exactly
 * one job; a job's id is saved as soon as the service names it, and a
 * coordinator started after a crash follows that job instead of training
 * the batch again. Only one coordinator trains at a time (a lock in Redis).
 *
 * With `sink` (a `TrajectoryShipper`), the coordinator hands each collected
 * group to it instead, at most once, and publishes the steps the shipper's
 * training jobs produce.
 *
 * @example
 * const coordinator = await TrainingCoordinator.start({
 *   connection, model, trainEvery: { groups: 8, config: { learningRate: 1e-5 } }, maxStepsOffPolicy: 2,
 *   afterEach: (g) => applyGroupReward(g, (g) => rankRewards(g.trajectories.map(score))),
 * });
 * // or through a shipper, which logs, retries, spools and trains:
 * const shipper = new TrajectoryShipper({ model, spoolDir: ".spool", trainEvery: { groups: 8 } });
 * const viaShipper = await TrainingCoordinator.start({ connection, model, sink: shipper });
 * // ... later
 * await coordinator.close();
 */
export class TrainingCoordinator {
  readonly #cluster: Cluster;
  readonly #options: TrainingCoordinatorOptions;
  readonly #resolved: ResolvedCoordinatorOptions;
  readonly #logger: DistributedLogger;
  readonly #client: Redis;
  readonly #abort = new AbortController();
  readonly #rerunner: Rerunner;
  readonly #outage: OutageLog;
  readonly #lock: CoordinatorLock;
  readonly #run: CoordinatorRun;
  #collector: GroupCollector | undefined;
  #loop: Promise<void> | undefined;

  private constructor(
    cluster: Cluster,
    options: TrainingCoordinatorOptions,
    resolved: ResolvedCoordinatorOptions,
  ) {
    this.#cluster = cluster;
    this.#options = options;
    this.#resolved = resolved;
    this.#logger = options.logger ?? console;
    this.#outage = new OutageLog(cluster, "TrainingCoordinator", this.#logger);
    this.#client = openClient(cluster, this.#outage);
    this.#rerunner = new Rerunner(
      this.#client,
      cluster,
      options.maxReruns ?? 1,
      this.#logger,
      this.#outage,
    );
    const token = `${hostname()}:${process.pid}:${randomUUID()}`;
    this.#lock = new CoordinatorLock(
      this.#client,
      storeKeys(cluster).lock,
      token,
      options.lockTtlMs ?? 30_000,
      this.#logger,
    );
    const payloads = payloadStoreOf(options.payloads, this.#client, cluster);
    this.#run = new CoordinatorRun({
      cluster,
      client: this.#client,
      logger: this.#logger,
      signal: this.#abort.signal,
      token,
      resolved,
      rerunner: this.#rerunner,
      outage: this.#outage,
      payloads,
      retention: new Retention(this.#client, cluster, payloads, resolved.retentionMs, this.#logger),
    });
  }

  /**
   * Checks Redis (waiting up to `connectTimeoutMs` for it), starts
   * collecting, waits for the coordinator lock and resolves once it holds
   * it; then resumes unfinished jobs and trains as groups arrive.
   *
   * @throws RedisUnavailableError when Redis cannot be reached.
   */
  static async start(options: TrainingCoordinatorOptions): Promise<TrainingCoordinator> {
    const cluster = resolveCluster(options, "TrainingCoordinator");
    const resolved = resolveCoordinatorOptions(options);
    await assertReachable(cluster, "TrainingCoordinator");
    const coordinator = new TrainingCoordinator(cluster, options, resolved);
    try {
      if (options.collect !== false) {
        coordinator.#collector = await startCollector(options, coordinator.#outage);
      }
      await coordinator.#lock.acquire(coordinator.#abort.signal, () => coordinator.#abort.abort());
      // For readProgress's `idle`: how many collected groups make a batch.
      await coordinator.#client.set(
        storeKeys(cluster).mode,
        JSON.stringify(
          resolved.own ? { trainEvery: resolved.own.trainEvery.groups } : { sink: true },
        ),
        "PX",
        resolved.retentionMs,
      );
    } catch (error) {
      await coordinator.#collector?.close().catch(() => {});
      coordinator.#lock.stop();
      coordinator.#client.disconnect();
      throw error;
    }
    coordinator.#loop = coordinator.#main().catch((error) => {
      if (!coordinator.#abort.signal.aborted) {
        coordinator.#logger.error(`TrainingCoordinator stopped: ${errorMessage(error)}`);
      }
    });
    return coordinator;
  }

  /** The collector this process runs, if any. */
  get collector(): GroupCollector | undefined {
    return this.#collector;
  }

  /**
   * Groups not handed to the sink: `uncertain` (a stopped coordinator left
   * their hand-off unconfirmed: the sink may or may not have them) and
   * `failed` (the sink's `add` rejected them 3 times). They are kept: a
   * record each in Redis under `<prefix>:<name>:tr:groups`, their
   * trajectories in the payload store.
   *
   * @example
   * const { uncertain } = await coordinator.unhanded();
   */
  unhanded(): Promise<UnhandedGroups> {
    return unhanded(this.#client, this.#cluster);
  }

  /**
   * Hands uncertain or refused groups to the sink again, first in line; for
   * groups you checked the sink does not have. Returns the ids moved.
   *
   * @example
   * await coordinator.handAgain((await coordinator.unhanded()).failed);
   */
  handAgain(ids: string[]): Promise<string[]> {
    return handAgain(this.#client, this.#cluster, ids);
  }

  /**
   * Trains uncertain or training-failed groups again, first in the next
   * batch: for groups whose job you checked the service did not run (an
   * uncertain group's job may exist: see `unhanded()`). The same as
   * `handAgain`. Returns the ids moved.
   *
   * @example
   * const { uncertain } = await coordinator.unhanded();
   * await coordinator.retrain(uncertain); // after checking the service's jobs
   */
  retrain(ids: string[]): Promise<string[]> {
    return handAgain(this.#client, this.#cluster, ids);
  }

  /**
   * Finishes the run: once no group is queued or running, trains the last
   * batch even if smaller than `trainEvery` (with a sink: hands the rest
   * over and calls the sink's `flush()` if it has one). Resolves with the
   * progress once every group is in a final state (trained, failed, stale,
   * no signal, uncertain, ...). The coordinator keeps running; a later group
   * waits for a full batch again.
   *
   * @example
   * await producer.enqueue(groups);
   * const p = await coordinator.drain();
   * console.log(p.groups);
   */
  drain(options: { signal?: AbortSignal } = {}): Promise<ClusterProgress> {
    return drain({
      ...this.#options,
      pollIntervalMs: Math.min(this.#run.pollMs, 500),
      signal: options.signal,
    });
  }

  /**
   * Stops collecting and training; a job being followed keeps running on the
   * service and is followed by the next coordinator. A group being handed to
   * the sink is handed (and marked) first.
   */
  async close(): Promise<void> {
    this.#abort.abort();
    this.#lock.stop();
    await this.#collector?.close();
    await this.#loop;
    await this.#rerunner.close();
    await this.#run.close();
    await this.#lock.release();
    this.#client.disconnect();
  }

  async #main(): Promise<void> {
    await this.#run.publishLatestStep();
    await this.#run.retention.adopt();
    // What a stopped coordinator left to delete.
    await this.#run.tidy();
    await this.#rerunner.run();
    const { own, sink } = this.#resolved;
    if (sink) return new SinkHandOff(this.#run, sink).run();
    if (own) return new OwnTraining(this.#run, own).run();
  }
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(TrainingCoordinator, "TrainingCoordinator");
