import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Redis } from "ioredis";
import { abortableSleep } from "../../client/index.js";
import {
  type TrainableModel,
  type TrainConfig,
  TrainingFailedError,
  type TrainResult,
} from "../../training/index.js";
import { TrajectoryGroup } from "../../trajectory/index.js";
import { errorMessage } from "../../util/error-message.js";
import { GroupCollector, type GroupCollectorOptions } from "./collector.js";
import { type Cluster, resolveCluster } from "./options.js";
import { policyKeys, publishStep } from "./policy.js";
import { assertReachable, type DistributedLogger, openClient } from "./redis.js";
import {
  type BatchRecord,
  claimBatch,
  finishBatch,
  openBatches,
  saveBatch,
  storeKeys,
} from "./store.js";

/** Options of {@link TrainingCoordinator}. */
export interface TrainingCoordinatorOptions extends GroupCollectorOptions {
  /** The model trained (a `TrainableModel`). */
  model: Pick<TrainableModel, "train" | "followJob" | "getStep">;
  /** A training job every this many collected groups. */
  trainEvery: number;
  /** The jobs' training options (`learningRate`, ...). */
  config?: TrainConfig;
  /**
   * How many steps behind the newest one a group's policy (its oldest
   * trajectory's `initial_policy_version`) may be when its batch is formed.
   * Older groups are dropped, counted in `stale` and logged. Default: no limit.
   */
  maxStaleness?: number;
  /** Also collect groups in this process. Default true. */
  collect?: boolean;
  /** How often to look for a full batch, and to poll a job's events, in ms. Default 1000. */
  pollIntervalMs?: number;
  /**
   * How long the coordinator's lock lives without renewal, in ms: a
   * coordinator started while another holds it waits; one that died is
   * replaced after this long. Default 30000.
   */
  lockTtlMs?: number;
  /** Called after each training job, with the new step. */
  onTrained?: (result: TrainResult & { batch: number; groups: string[] }) => void;
}

/**
 * Trains on collected groups, `trainEvery` at a time, one job at a time,
 * while workers keep running rollouts (pipelined RL); publishes each new
 * checkpoint step through Redis, where workers pick it up for their next
 * calls. Forming a batch is atomic in Redis, so a group is trained in exactly
 * one job; a job's id is saved as soon as the service names it, and a
 * coordinator started after a crash follows that job instead of training
 * the batch again. Only one coordinator trains at a time (a lock in Redis).
 *
 * @example
 * const coordinator = await TrainingCoordinator.start({
 *   connection, model, trainEvery: 8, config: { learningRate: 1e-5 }, maxStaleness: 2,
 *   afterEach: (g) => applyGroupReward(g, (g) => rankRewards(g.trajectories.map(score))),
 * });
 * // ... later
 * await coordinator.close();
 */
export class TrainingCoordinator {
  readonly #cluster: Cluster;
  readonly #options: TrainingCoordinatorOptions;
  readonly #logger: DistributedLogger;
  readonly #client: Redis;
  readonly #abort = new AbortController();
  readonly #token = `${hostname()}:${process.pid}:${randomUUID()}`;
  #collector: GroupCollector | undefined;
  #loop: Promise<void> | undefined;
  #renew: NodeJS.Timeout | undefined;

  private constructor(cluster: Cluster, options: TrainingCoordinatorOptions) {
    this.#cluster = cluster;
    this.#options = options;
    this.#logger = options.logger ?? console;
    this.#client = openClient(cluster, "TrainingCoordinator", this.#logger);
  }

  /**
   * Checks Redis, starts collecting, waits for the coordinator lock, then
   * resumes unfinished jobs and trains as groups arrive.
   *
   * @throws RedisUnavailableError when Redis cannot be reached.
   */
  static async start(options: TrainingCoordinatorOptions): Promise<TrainingCoordinator> {
    const cluster = resolveCluster(options, "TrainingCoordinator");
    if (!Number.isInteger(options.trainEvery) || options.trainEvery < 1) {
      throw new TypeError("TrainingCoordinator: options.trainEvery must be a positive integer.");
    }
    if (!options.model || typeof options.model.train !== "function") {
      throw new TypeError("TrainingCoordinator: options.model must be a TrainableModel.");
    }
    const max = options.maxStaleness;
    if (max !== undefined && !(Number.isInteger(max) && max >= 0)) {
      throw new TypeError(
        "TrainingCoordinator: options.maxStaleness must be an integer, 0 or more.",
      );
    }
    await assertReachable(cluster, "TrainingCoordinator");
    const coordinator = new TrainingCoordinator(cluster, options);
    if (options.collect !== false) coordinator.#collector = await GroupCollector.start(options);
    coordinator.#loop = coordinator.#run().catch((error) => {
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

  /** Stops collecting and training; a job being followed keeps running on the service and is followed by the next coordinator. */
  async close(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#renew);
    await this.#collector?.close();
    await this.#loop;
    await this.#client.eval(RELEASE, 1, storeKeys(this.#cluster).lock, this.#token).catch(() => {});
    this.#client.disconnect();
  }

  get #pollMs(): number {
    return this.#options.pollIntervalMs ?? 1000;
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    await this.#acquire();
    await this.#publishLatestStep();
    for (const { batch, record } of await openBatches(this.#client, this.#cluster)) {
      this.#logger.info(
        `TrainingCoordinator: resuming batch ${batch} (${record.groups.length} groups${record.jobId ? `, job ${record.jobId}` : ""}).`,
      );
      await this.#train(batch, record);
    }
    const policy = policyKeys(this.#cluster);
    while (!signal.aborted) {
      const claim = await claimBatch(
        this.#client,
        this.#cluster,
        this.#options.trainEvery,
        this.#options.maxStaleness,
        policy.step,
      );
      if (claim.stale.length) {
        this.#logger.warn(
          `TrainingCoordinator: dropped ${claim.stale.length} groups more than ${this.#options.maxStaleness} steps behind the policy: ${claim.stale.join(", ")}.`,
        );
      }
      if (claim.batch === undefined) {
        await abortableSleep(this.#pollMs, signal).catch(() => {});
        continue;
      }
      await this.#train(claim.batch, { groups: claim.groups });
    }
  }

  /** Workers start on the model's latest checkpoint; the service may be down for a while. */
  async #publishLatestStep(): Promise<void> {
    const signal = this.#abort.signal;
    for (let attempt = 1; ; attempt++) {
      try {
        const step = await this.#options.model.getStep({ signal });
        await publishStep(this.#client, this.#cluster, step);
        return;
      } catch (error) {
        if (signal.aborted) throw error;
        const delay = Math.min(30_000, this.#pollMs * 2 ** Math.min(attempt, 5));
        this.#logger.warn(
          `TrainingCoordinator: could not read the model's latest step (${errorMessage(error)}); trying again in ${delay} ms.`,
        );
        await abortableSleep(delay, signal);
      }
    }
  }

  /** Trains (or follows) one batch until it ended; transient failures are retried. */
  async #train(batch: number, record: BatchRecord): Promise<void> {
    const signal = this.#abort.signal;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        const result = await this.#trainOnce(batch, record);
        await finishBatch(
          this.#client,
          this.#cluster,
          batch,
          { ...record, step: result.step },
          policyKeys(this.#cluster),
        );
        this.#logger.info(
          `TrainingCoordinator: batch ${batch} (${record.groups.length} groups) trained in job ${result.jobId}: step ${result.step}.`,
        );
        this.#options.onTrained?.({ ...result, batch, groups: record.groups });
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof TrainingFailedError) {
          // The groups stay in Redis, readable under their ids; never trained again.
          await finishBatch(
            this.#client,
            this.#cluster,
            batch,
            { ...record, failed: error.message },
            policyKeys(this.#cluster),
          );
          this.#logger.error(
            `TrainingCoordinator: batch ${batch} failed on the service (${error.message}); its groups are kept and not trained again.`,
          );
          return;
        }
        const delay = Math.min(30_000, this.#pollMs * 2 ** Math.min(attempt, 5));
        this.#logger.warn(
          `TrainingCoordinator: batch ${batch}: ${errorMessage(error)}; trying again in ${delay} ms (attempt ${attempt}).`,
        );
        await abortableSleep(delay, signal).catch(() => {});
      }
    }
  }

  async #trainOnce(batch: number, record: BatchRecord): Promise<TrainResult> {
    const run = { signal: this.#abort.signal, pollIntervalMs: this.#pollMs };
    if (record.jobId !== undefined) {
      return this.#options.model.followJob(record.jobId, {
        ...run,
        stepBefore: record.stepBefore ?? 0,
      });
    }
    const groups = await this.#load(record.groups);
    return this.#options.model.train(groups, this.#options.config, {
      ...run,
      onJobCreated: async ({ jobId, stepBefore }) => {
        record.jobId = jobId;
        record.stepBefore = stepBefore;
        await saveBatch(this.#client, this.#cluster, batch, record);
      },
    });
  }

  async #load(ids: string[]): Promise<TrajectoryGroup[]> {
    const raw = await this.#client.hmget(storeKeys(this.#cluster).groups, ...ids);
    return raw.map((json, i) => {
      if (json === null || json.startsWith("trained:")) {
        throw new Error(`group ${ids[i]} is missing from Redis (${json ?? "no entry"})`);
      }
      return TrajectoryGroup.fromJSON(json);
    });
  }

  /** Waits until this process holds the lock, then keeps renewing it. */
  async #acquire(): Promise<void> {
    const key = storeKeys(this.#cluster).lock;
    const ttl = this.#options.lockTtlMs ?? 30_000;
    let told = false;
    while (!(await this.#client.set(key, this.#token, "PX", ttl, "NX"))) {
      if (!told) {
        told = true;
        this.#logger.info(
          `TrainingCoordinator: another coordinator (${await this.#client.get(key)}) holds the lock; waiting for it.`,
        );
      }
      await abortableSleep(Math.max(100, ttl / 4), this.#abort.signal);
    }
    this.#renew = setInterval(
      () => {
        this.#client
          .eval(RENEW, 1, key, this.#token, String(ttl))
          .then((held) => {
            if (Number(held) === 1) return;
            this.#logger.error("TrainingCoordinator: lost the coordinator lock; stopping.");
            this.#abort.abort();
          })
          .catch(() => {});
      },
      Math.max(50, ttl / 3),
    );
    this.#renew.unref();
  }
}

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
