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
import { type GroupSink, TrajectoryGroup } from "../../trajectory/index.js";
import { errorMessage } from "../../util/index.js";
import { GroupCollector, type GroupCollectorOptions } from "./collector.js";
import {
  confirmHandOff,
  handAgain,
  recoverHandOffs,
  refusedHandOff,
  takeForHandOff,
  unhanded,
} from "./handoff.js";
import { type Cluster, resolveCluster } from "./options.js";
import { policyKeys, publishStep } from "./policy.js";
import { assertReachable, type DistributedLogger, openClient } from "./redis.js";
import { Rerunner } from "./rerun.js";
import {
  type BatchRecord,
  claimBatch,
  finishBatch,
  openBatches,
  type StaleMode,
  saveBatch,
  storeKeys,
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
  #collector: GroupCollector | undefined;
  #loop: Promise<void> | undefined;
  #renew: NodeJS.Timeout | undefined;

  private constructor(cluster: Cluster, options: TrainingCoordinatorOptions) {
    this.#cluster = cluster;
    this.#options = options;
    this.#logger = options.logger ?? console;
    this.#client = openClient(cluster, "TrainingCoordinator", this.#logger);
    this.#rerunner = new Rerunner(this.#client, cluster, options.maxReruns ?? 1, this.#logger);
  }

  /**
   * Checks Redis, starts collecting, waits for the coordinator lock, then
   * resumes unfinished jobs and trains as groups arrive.
   *
   * @throws RedisUnavailableError when Redis cannot be reached.
   */
  static async start(options: TrainingCoordinatorOptions): Promise<TrainingCoordinator> {
    const cluster = resolveCluster(options, "TrainingCoordinator");
    checkOptions(options);
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

  /**
   * Groups not handed to the sink: `uncertain` (a stopped coordinator left
   * their hand-off unconfirmed: the sink may or may not have them) and
   * `failed` (the sink's `add` rejected them 3 times). Their JSON stays in
   * Redis under `<prefix>:<name>:tr:groups`.
   *
   * @example
   * const { uncertain } = await coordinator.unhanded();
   */
  unhanded(): Promise<{ uncertain: string[]; failed: string[] }> {
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
    await this.#client.eval(RELEASE, 1, storeKeys(this.#cluster).lock, this.#token).catch(() => {});
    this.#client.disconnect();
  }

  get #pollMs(): number {
    return this.#options.pollIntervalMs ?? 1000;
  }

  async #run(): Promise<void> {
    await this.#acquire();
    await this.#publishLatestStep();
    await this.#rerunner.run();
    if (this.#options.sink) return this.#handOffLoop(this.#options.sink);
    for (const { batch, record } of await openBatches(this.#client, this.#cluster)) {
      this.#logger.info(
        `TrainingCoordinator: resuming batch ${batch} (${record.groups.length} groups${record.jobId ? `, job ${record.jobId}` : ""}).`,
      );
      await this.#train(batch, record);
    }
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      const claim = await claimBatch(
        this.#client,
        this.#cluster,
        this.#options.trainEvery as number,
        this.#options.maxStaleness,
        this.#onStale,
        policyKeys(this.#cluster).step,
      );
      await this.#stale(claim.stale);
      if (claim.batch === undefined) {
        await this.#idle();
        continue;
      }
      await this.#train(claim.batch, { groups: claim.groups });
    }
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
          policyKeys(this.#cluster).step,
          this.#token,
        );
        await this.#stale(taken.stale);
        if (taken.id === undefined) {
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
    const jobs = () => (sink as { stats?: () => { trainingJobs?: number } }).stats?.().trainingJobs;
    let seen = jobs();
    while (!signal.aborted) {
      await abortableSleep(this.#pollMs, signal).catch(() => {});
      const now = jobs();
      if (signal.aborted || (now !== undefined && now === seen)) continue;
      try {
        await publishStep(
          this.#client,
          this.#cluster,
          await this.#options.model.getStep({ signal }),
        );
        seen = now;
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
  const reruns = options.maxReruns;
  if (reruns !== undefined && !(Number.isInteger(reruns) && reruns >= 0)) {
    fail("options.maxReruns must be an integer, 0 or more.");
  }
}
