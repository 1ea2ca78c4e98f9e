import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { abortableSleep } from "../../client/index.js";
import {
  type TrainableModel,
  type TrainConfig,
  TrainingFailedError,
  type TrainResult,
} from "../../training/index.js";
import { type GroupSink, TrajectoryGroup } from "../../trajectory/index.js";
import { errorMessage } from "../../util/index.js";
import { type GroupCollector, type GroupCollectorOptions, startCollector } from "./collector.js";
import { drain } from "./control.js";
import {
  confirmHandOff,
  handAgain,
  recoverHandOffs,
  refusedHandOff,
  takeForHandOff,
  type UnhandedGroups,
  unhanded,
} from "./handoff.js";
import { type Cluster, resolveCluster } from "./options.js";
import { policyKeys, publishStep } from "./policy.js";
import type { ClusterProgress } from "./progress.js";
import { assertReachable, type DistributedLogger, OutageLog, openClient } from "./redis.js";
import { Rerunner } from "./rerun.js";
import {
  type BatchRecord,
  claimBatch,
  finishBatch,
  type NoSignalMode,
  openBatches,
  type StaleMode,
  saveBatch,
  storeKeys,
  uncertainBatch,
} from "./store.js";

/** Tries of a group whose `sink.add` rejects before it is set aside as refused. */
const HAND_OFF_ATTEMPTS = 3;

/** Options of {@link TrainingCoordinator}. */
export interface TrainingCoordinatorOptions extends GroupCollectorOptions {
  /**
   * The model trained (a `TrainableModel`). With `sink`, only its
   * `getStep` is used: the sink trains, and the coordinator publishes the
   * steps it sees.
   */
  model: Pick<TrainableModel, "train" | "followJob" | "getStep">;
  /**
   * A training job (`model.train`) every this many collected groups.
   * Required without `sink`; not allowed with it (give the shipper its own
   * `trainEvery`).
   */
  trainEvery?: number;
  /** The jobs' training options (`learningRate`, ...). Without `sink` only. */
  config?: TrainConfig;
  /**
   * Where collected groups go instead of the coordinator's own training jobs:
   * usually a `TrajectoryShipper` with a `spoolDir` and `trainEvery`, which
   * logs, trains and retries. Each group is handed over at most once, in the
   * order collected; a group whose hand-off a killed coordinator left
   * unconfirmed is reported (logged, counted in `groups.uncertain`, listed by
   * {@link TrainingCoordinator.unhanded}) and never handed again unless you
   * call {@link TrainingCoordinator.handAgain}. The coordinator does not close
   * the sink: close it after the coordinator.
   */
  sink?: GroupSink;
  /**
   * How many steps behind the newest one a group's policy (its oldest
   * trajectory's `initial_policy_version`) may be when its batch is formed
   * (with `sink`: when it is handed over). Older groups are dropped or re-run
   * (`onStale`). Default: no limit.
   */
  maxStaleness?: number;
  /**
   * What happens to a group past `maxStaleness`: `"drop"` (counted in
   * `groups.stale` and logged) or `"rerun"`: its rollouts are enqueued again
   * as a new group `<id>.rerun<n>` (counted in `groups.rerun`), at most
   * `maxReruns` times, then dropped. Default `"drop"`.
   */
  onStale?: StaleMode;
  /** Re-runs of one group with `onStale: "rerun"`. Default 1. */
  maxReruns?: number;
  /**
   * What happens to a collected group whose rewards are all equal
   * (`hasRewardSignal` is false: RL learns nothing from it): `"skip"`
   * releases it (its JSON is dropped, it is counted in `groups.noSignal`,
   * never trained or handed over); `"send"` trains it (hands it over) like
   * any other. Default `"skip"`, as in `model.train` and the shipper.
   */
  noSignal?: NoSignalMode;
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
  /** Called after each training job, with the new step. Without `sink` only. */
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
 * With `sink` (a `TrajectoryShipper`), the coordinator hands each collected
 * group to it instead, at most once, and publishes the steps the shipper's
 * training jobs produce.
 *
 * @example
 * const coordinator = await TrainingCoordinator.start({
 *   connection, model, trainEvery: 8, config: { learningRate: 1e-5 }, maxStaleness: 2,
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
  readonly #logger: DistributedLogger;
  readonly #client: Redis;
  readonly #abort = new AbortController();
  readonly #token = `${hostname()}:${process.pid}:${randomUUID()}`;
  readonly #rerunner: Rerunner;
  readonly #outage: OutageLog;
  #groupQueue: Queue | undefined;
  #countSinkJobs: (() => Promise<void>) | undefined;
  #collector: GroupCollector | undefined;
  #loop: Promise<void> | undefined;
  #renew: NodeJS.Timeout | undefined;

  private constructor(cluster: Cluster, options: TrainingCoordinatorOptions) {
    this.#cluster = cluster;
    this.#options = options;
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
    checkOptions(options);
    await assertReachable(cluster, "TrainingCoordinator");
    const coordinator = new TrainingCoordinator(cluster, options);
    try {
      if (options.collect !== false) {
        coordinator.#collector = await startCollector(options, coordinator.#outage);
      }
      await coordinator.#acquire();
      // For readProgress's `idle`: how many collected groups make a batch.
      await coordinator.#client.set(
        storeKeys(cluster).mode,
        JSON.stringify(options.sink ? { sink: true } : { trainEvery: options.trainEvery }),
      );
    } catch (error) {
      await coordinator.#collector?.close().catch(() => {});
      clearInterval(coordinator.#renew);
      coordinator.#client.disconnect();
      throw error;
    }
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

  /**
   * Groups not handed to the sink: `uncertain` (a stopped coordinator left
   * their hand-off unconfirmed: the sink may or may not have them) and
   * `failed` (the sink's `add` rejected them 3 times). Their JSON stays in
   * Redis under `<prefix>:<name>:tr:groups`.
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
      pollIntervalMs: Math.min(this.#pollMs, 500),
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
    clearInterval(this.#renew);
    await this.#collector?.close();
    await this.#loop;
    await this.#rerunner.close();
    await this.#groupQueue?.close();
    await this.#client.eval(RELEASE, 1, storeKeys(this.#cluster).lock, this.#token).catch(() => {});
    this.#client.disconnect();
  }

  get #pollMs(): number {
    return this.#options.pollIntervalMs ?? 1000;
  }

  async #run(): Promise<void> {
    await this.#publishLatestStep();
    await this.#rerunner.run();
    if (this.#options.sink) return this.#handOffLoop(this.#options.sink);
    for (const { batch, record } of await openBatches(this.#client, this.#cluster)) {
      if (record.jobId === undefined && record.creating) {
        await this.#uncertain(batch, record, "the previous coordinator stopped");
        continue;
      }
      this.#logger.info(
        `TrainingCoordinator: resuming batch ${batch} (${record.groups.length} groups${record.jobId ? `, job ${record.jobId}` : ""}).`,
      );
      await this.#train(batch, record);
    }
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let claim = await this.#claim(false);
      if (claim.batch === undefined && (await this.#draining())) {
        claim = await this.#claim(true);
        if (claim.batch === undefined) await this.#drained();
      }
      if (claim.batch === undefined) {
        await this.#idle();
        continue;
      }
      await this.#train(claim.batch, { groups: claim.groups });
    }
  }

  async #claim(partial: boolean) {
    const claim = await claimBatch(
      this.#client,
      this.#cluster,
      this.#options.trainEvery as number,
      {
        maxStaleness: this.#options.maxStaleness,
        onStale: this.#onStale,
        noSignal: this.#options.noSignal ?? "skip",
        partial,
      },
      policyKeys(this.#cluster).step,
    );
    await this.#stale(claim.stale);
    this.#released(claim.noSignal);
    return claim;
  }

  #released(ids: string[]): void {
    if (ids.length === 0) return;
    this.#logger.info(
      `TrainingCoordinator: released ${ids.length} group(s) whose rewards are all equal (nothing to learn; noSignal "skip"), counted in groups.noSignal: ${ids.join(", ")}.`,
    );
  }

  /**
   * Whether a drain was asked for (`drain()`, from any process) and no more
   * groups are coming: none queued, running or being collected, no re-run
   * being enqueued.
   */
  async #draining(): Promise<boolean> {
    const k = storeKeys(this.#cluster);
    if ((await this.#client.exists(k.drain)) === 0) return false;
    if ((await this.#client.llen(k.rerun)) > 0) return false;
    if (!this.#groupQueue) {
      this.#groupQueue = new Queue(this.#cluster.groupQueue, {
        connection: this.#client,
        prefix: this.#cluster.prefix,
      });
      this.#groupQueue.on("error", this.#outage.listener());
    }
    const counts = await this.#groupQueue.getJobCounts(
      "waiting-children",
      "waiting",
      "active",
      "delayed",
      "prioritized",
    );
    return Object.values(counts).every((n) => n === 0);
  }

  /** A drain found nothing left: the sink is flushed and the request answered. */
  async #drained(): Promise<void> {
    const sink = this.#options.sink as { flush?: () => Promise<void> } | undefined;
    if (typeof sink?.flush === "function") {
      try {
        await sink.flush();
      } catch (error) {
        this.#logger.warn(`TrainingCoordinator: the sink's flush failed (${errorMessage(error)}).`);
      }
    }
    await this.#countSinkJobs?.();
    await this.#client.del(storeKeys(this.#cluster).drain);
    this.#logger.info("TrainingCoordinator: drained: every group is in a final state.");
  }

  /** A batch whose job the service may have created: reported, never trained again on our own. */
  async #uncertain(batch: number, record: BatchRecord, why: string): Promise<void> {
    await uncertainBatch(this.#client, this.#cluster, batch, { ...record, uncertain: why });
    this.#logger.error(
      `TrainingCoordinator: batch ${batch} (${record.groups.length} groups: ${record.groups.join(", ")}) was being sent to the service when ${why}; the service may have created its job, so the groups are not trained again. They stay in Redis, counted in groups.uncertain; check the service's jobs, then coordinator.retrain(ids) (or retrain(options, ids) from any process) trains them again.`,
    );
  }

  /** Nothing to train or hand over: a re-run that could not be enqueued is tried again, then a pause. */
  async #idle(): Promise<void> {
    if (this.#onStale === "rerun") await this.#rerunner.run();
    await abortableSleep(this.#pollMs, this.#abort.signal).catch(() => {});
  }

  get #onStale(): StaleMode {
    return this.#options.onStale ?? "drop";
  }

  async #stale(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    if (this.#onStale === "rerun") return this.#rerunner.run();
    this.#logger.warn(
      `TrainingCoordinator: dropped ${ids.length} groups more than ${this.#options.maxStaleness} steps behind the policy: ${ids.join(", ")}.`,
    );
  }

  /**
   * With a sink: hands each collected group over, one at a time, recorded
   * in Redis before and after `add` (see handoff.ts for what a crash leaves).
   */
  async #handOffLoop(sink: GroupSink): Promise<void> {
    const signal = this.#abort.signal;
    const left = await recoverHandOffs(this.#client, this.#cluster);
    if (left.length > 0) {
      this.#logger.error(
        `TrainingCoordinator: ${left.length} group(s) were being handed to the sink when the previous coordinator stopped: ${left.join(", ")}. Whether the sink kept them is unknown, so they are not handed again; they stay in Redis, counted in groups.uncertain (coordinator.unhanded() lists them, coordinator.handAgain(ids) hands them again).`,
      );
    }
    const watch = this.#watchStep(sink);
    const refusals = new Map<string, number>();
    try {
      while (!signal.aborted) {
        const taken = await takeForHandOff(
          this.#client,
          this.#cluster,
          this.#options.maxStaleness,
          this.#onStale,
          this.#options.noSignal ?? "skip",
          policyKeys(this.#cluster).step,
          this.#token,
        );
        await this.#stale(taken.stale);
        this.#released(taken.noSignal);
        if (taken.id === undefined) {
          if (await this.#draining()) await this.#drained();
          await this.#idle();
          continue;
        }
        await this.#handOver(sink, taken.id, taken.json, refusals);
      }
    } finally {
      await watch;
    }
  }

  async #handOver(
    sink: GroupSink,
    id: string,
    json: string,
    refusals: Map<string, number>,
  ): Promise<void> {
    try {
      await sink.add(TrajectoryGroup.fromJSON(json));
    } catch (error) {
      const tries = (refusals.get(id) ?? 0) + 1;
      refusals.set(id, tries);
      const final = tries >= HAND_OFF_ATTEMPTS;
      await refusedHandOff(this.#client, this.#cluster, id, final);
      if (final) {
        refusals.delete(id);
        this.#logger.error(
          `TrainingCoordinator: the sink refused group ${id} ${tries} times (${errorMessage(error)}); it is kept in Redis, counted in groups.handOffFailed (coordinator.handAgain([id]) tries again).`,
        );
      } else {
        this.#logger.warn(
          `TrainingCoordinator: the sink refused group ${id} (${errorMessage(error)}); trying again (attempt ${tries} of ${HAND_OFF_ATTEMPTS}).`,
        );
        await abortableSleep(this.#pollMs * 2 ** tries, this.#abort.signal).catch(() => {});
      }
      return;
    }
    refusals.delete(id);
    await confirmHandOff(this.#client, this.#cluster, id);
  }

  /**
   * The sink trains (a shipper's `trainEvery`): each new step of the model is
   * published for the workers. A shipper's count of training jobs says when
   * to look; another sink is asked every poll.
   */
  async #watchStep(sink: GroupSink): Promise<void> {
    const signal = this.#abort.signal;
    const stats = () =>
      (sink as { stats?: () => { trainingJobs?: number; trainingFailed?: number } }).stats?.();
    const jobs = () => stats()?.trainingJobs;
    let seen = jobs();
    // The sink's jobs, counted in readProgress's trainingJobs (as deltas: a
    // new coordinator's shipper starts again from 0).
    let counted = { jobs: seen ?? 0, failed: stats()?.trainingFailed ?? 0 };
    const count = async () => {
      const now = stats();
      if (now?.trainingJobs !== undefined) {
        const jobsDelta = now.trainingJobs - counted.jobs;
        const failedDelta = (now.trainingFailed ?? 0) - counted.failed;
        if (jobsDelta > 0 || failedDelta > 0) {
          const k = storeKeys(this.#cluster).stats;
          await this.#client
            .multi()
            .hincrby(k, "training_jobs", Math.max(0, jobsDelta))
            .hincrby(k, "failed_jobs", Math.max(0, failedDelta))
            .exec()
            .then(() => {
              counted = { jobs: now.trainingJobs as number, failed: now.trainingFailed ?? 0 };
            })
            .catch(() => {});
        }
      }
      return now;
    };
    this.#countSinkJobs = async () => {
      await count();
    };
    while (!signal.aborted) {
      await abortableSleep(this.#pollMs, signal).catch(() => {});
      const now = await count();
      if (signal.aborted || (now?.trainingJobs !== undefined && now.trainingJobs === seen))
        continue;
      const current = now?.trainingJobs;
      try {
        await publishStep(
          this.#client,
          this.#cluster,
          await this.#options.model.getStep({ signal }),
        );
        seen = current;
      } catch (error) {
        if (!signal.aborted) {
          this.#logger.warn(
            `TrainingCoordinator: could not read the model's latest step (${errorMessage(error)}); trying again.`,
          );
        }
      }
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
        const outcome = record.jobId === undefined ? creationOutcome(error) : "retry";
        if (outcome === "uncertain") {
          await this.#uncertain(
            batch,
            record,
            `the service's answer was lost (${errorMessage(error)})`,
          );
          return;
        }
        if (error instanceof TrainingFailedError || outcome === "refused") {
          // The groups stay in Redis, readable under their ids; never trained again.
          await finishBatch(
            this.#client,
            this.#cluster,
            batch,
            { ...record, failed: errorMessage(error) },
            policyKeys(this.#cluster),
          );
          this.#logger.error(
            `TrainingCoordinator: batch ${batch} (${record.groups.length} groups: ${record.groups.join(", ")}) failed (${errorMessage(error)}); its groups are kept in Redis, counted in groups.trainingFailed, and not trained again (coordinator.retrain(ids) sends them again).`,
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
    // Marked before the request: a coordinator that dies before the job's id
    // is saved leaves this mark, and the next one reports the batch instead
    // of training it again (the service may have created the job).
    if (!record.creating) {
      record.creating = true;
      await saveBatch(this.#client, this.#cluster, batch, record);
    }
    return this.#options.model.train(groups, this.#options.config, {
      ...run,
      // The batch was formed under the coordinator's own rule for such groups.
      noSignal: this.#options.noSignal ?? "skip",
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

function checkOptions(options: TrainingCoordinatorOptions): void {
  const fail = (message: string) => {
    throw new TypeError(`TrainingCoordinator: ${message}`);
  };
  if (!options.model || typeof options.model.getStep !== "function") {
    fail("options.model must be a TrainableModel.");
  }
  if (options.sink !== undefined) {
    if (typeof options.sink?.add !== "function") {
      fail(
        "options.sink must be a GroupSink (an object with add(group)), e.g. a TrajectoryShipper.",
      );
    }
    for (const field of ["trainEvery", "config", "onTrained"] as const) {
      if (options[field] !== undefined) {
        fail(
          `options.${field} belongs to the coordinator's own training (model.train); with options.sink the sink trains: give the shipper its trainEvery (and config) instead, and read its stats() for jobs.`,
        );
      }
    }
  } else {
    const every = options.trainEvery;
    if (!Number.isInteger(every) || (every as number) < 1) {
      fail("options.trainEvery must be a positive integer (or pass options.sink).");
    }
    if (typeof options.model.train !== "function") {
      fail("options.model must be a TrainableModel.");
    }
  }
  const max = options.maxStaleness;
  if (max !== undefined && !(Number.isInteger(max) && max >= 0)) {
    fail("options.maxStaleness must be an integer, 0 or more.");
  }
  if (options.onStale !== undefined && options.onStale !== "drop" && options.onStale !== "rerun") {
    fail(`options.onStale must be "drop" or "rerun", not ${JSON.stringify(options.onStale)}.`);
  }
  if (
    options.noSignal !== undefined &&
    options.noSignal !== "skip" &&
    options.noSignal !== "send"
  ) {
    fail(`options.noSignal must be "skip" or "send", not ${JSON.stringify(options.noSignal)}.`);
  }
  const reruns = options.maxReruns;
  if (reruns !== undefined && !(Number.isInteger(reruns) && reruns >= 0)) {
    fail("options.maxReruns must be an integer, 0 or more.");
  }
}

/**
 * What a failed `model.train` of a batch without a saved job id means:
 * `retry` when the service certainly created no job (a read failed, the
 * service was unreachable or asked to come back later), `refused` when it
 * rejected the job (a 4xx answer) or the groups never left this process,
 * `uncertain` when the creation request may have reached the service
 * (a 5xx answer, a timeout, a connection lost mid-request).
 */
function creationOutcome(error: unknown): "retry" | "refused" | "uncertain" {
  const e = error as { status?: unknown; method?: unknown; cause?: unknown };
  for (let cause = e?.cause, depth = 0; cause && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN") return "retry";
    cause = (cause as { cause?: unknown }).cause;
  }
  if (typeof e?.method !== "string") return "refused";
  if (e.method === "GET") return "retry";
  const status = e.status;
  if (status === 429 || status === 503) return "retry";
  if (typeof status === "number" && status >= 400 && status < 500 && status !== 408) {
    return "refused";
  }
  return "uncertain";
}
