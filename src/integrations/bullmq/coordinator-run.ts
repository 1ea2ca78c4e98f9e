// What both modes of a running TrainingCoordinator share: its Redis client and
// cluster, its stop signal, and the steps of a round that do not depend on the
// mode (stale groups, released groups, idling, noticing a drain).
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { abortableSleep } from "../../client/index.js";
import { errorMessage } from "../../util/index.js";
import type { ResolvedCoordinatorOptions } from "./coordinator-options.js";
import { type ReadGroup, readGroup } from "./group-record.js";
import { LUA, runScript } from "./lua/index.js";
import type { Cluster } from "./options.js";
import type { PayloadStore } from "./payload-store.js";
import { publishStep } from "./policy.js";
import { type DistributedLogger, type OutageLog, queueOptions } from "./redis.js";
import type { Rerunner } from "./rerun.js";
import type { Retention } from "./retention.js";
import { storeKeys } from "./store.js";

export class CoordinatorRun {
  readonly cluster: Cluster;
  readonly client: Redis;
  readonly logger: DistributedLogger;
  readonly signal: AbortSignal;
  readonly token: string;
  readonly resolved: ResolvedCoordinatorOptions;
  /** Where the collected groups' trajectories are. */
  readonly payloads: PayloadStore;
  readonly retention: Retention;
  readonly #rerunner: Rerunner;
  readonly #outage: OutageLog;
  #groupQueue: Queue | undefined;
  /** Set by the sink mode: brings readProgress's job counts up to date before a drain is answered. */
  countSinkJobs: (() => Promise<void>) | undefined;

  constructor(init: {
    cluster: Cluster;
    client: Redis;
    logger: DistributedLogger;
    signal: AbortSignal;
    token: string;
    resolved: ResolvedCoordinatorOptions;
    rerunner: Rerunner;
    outage: OutageLog;
    payloads: PayloadStore;
    retention: Retention;
  }) {
    this.payloads = init.payloads;
    this.retention = init.retention;
    this.cluster = init.cluster;
    this.client = init.client;
    this.logger = init.logger;
    this.signal = init.signal;
    this.token = init.token;
    this.resolved = init.resolved;
    this.#rerunner = init.rerunner;
    this.#outage = init.outage;
  }

  get pollMs(): number {
    return this.resolved.pollMs;
  }

  /** Stale groups taken off the line: re-run (`onStale: "rerun"`) or said dropped. */
  async stale(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    if (this.resolved.onStale === "rerun") return this.#rerunner.run();
    this.logger.warn(
      `TrainingCoordinator: dropped ${ids.length} group(s) sampled more than ${this.resolved.maxStepsOffPolicy} step(s) behind the policy (too far off-policy, maxStepsOffPolicy; counted in groups.stale): ${ids.join(", ")}.`,
    );
  }

  /** Groups released for having no reward signal, said in one line. */
  released(ids: string[], what: string): void {
    if (ids.length === 0) return;
    this.logger.info(
      `TrainingCoordinator: released ${ids.length} group(s) whose rewards are all equal (nothing to learn; noSignal "skip"), counted in groups.noSignal${what}: ${ids.join(", ")}.`,
    );
  }

  /**
   * Nothing to train or hand over: a re-run that could not be enqueued is
   * tried again, finished groups' payloads deleted, old marks expired, then
   * a pause.
   */
  async idle(): Promise<void> {
    if (this.resolved.onStale === "rerun") await this.#rerunner.run();
    await this.tidy();
    await abortableSleep(this.pollMs, this.signal).catch(() => {});
  }

  /** Deletes finished groups' payloads and expires old marks (see retention.ts). */
  async tidy(): Promise<void> {
    try {
      await this.retention.release();
    } catch (error) {
      this.logger.warn(
        `TrainingCoordinator: could not delete finished groups' payloads (${errorMessage(error)}); trying again.`,
      );
    }
    await this.retention.sweep();
  }

  /**
   * A stored group as its JSON object, read from the payload store; when
   * its trajectories are gone (expired, deleted), the group is marked lost:
   * counted in groups.failed, logged, never trained in part.
   */
  async load(id: string, entry: string | null): Promise<Record<string, unknown> | undefined> {
    if (entry === null || !entry.startsWith("{")) {
      if (entry === "lost") return undefined;
      throw new Error(`group ${id} is missing from Redis (${entry ?? "no entry"})`);
    }
    const read: ReadGroup = await readGroup(this.payloads, entry);
    if (read.group) return read.group;
    const k = storeKeys(this.cluster);
    await runScript(this.client, LUA.groupLost, [k.groups, k.stats, k.handing, k.release], [id]);
    this.logger.error(
      `TrainingCoordinator: group ${id} cannot be trained or handed over: ${read.missing.length} of its payloads are gone from the payload store (${read.missing.slice(0, 3).join(", ")}; expired or deleted). Counted in groups.failed (payload_lost); the rest of its payloads are deleted.`,
    );
    return undefined;
  }

  /**
   * Whether a drain was asked for (`drain()`, from any process) and no more
   * groups are coming: none queued, running or being collected, no re-run
   * being enqueued.
   */
  async draining(): Promise<boolean> {
    const k = storeKeys(this.cluster);
    if ((await this.client.exists(k.drain)) === 0) return false;
    if ((await this.client.llen(k.rerun)) > 0) return false;
    if (!this.#groupQueue) {
      this.#groupQueue = new Queue(
        this.cluster.groupQueue,
        queueOptions(this.cluster, this.client),
      );
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
  async drained(): Promise<void> {
    const sink = this.resolved.sink as { flush?: () => Promise<void> } | undefined;
    if (typeof sink?.flush === "function") {
      try {
        await sink.flush();
      } catch (error) {
        this.logger.warn(`TrainingCoordinator: the sink's flush failed (${errorMessage(error)}).`);
      }
    }
    await this.countSinkJobs?.();
    await this.client.del(storeKeys(this.cluster).drain);
    this.logger.info("TrainingCoordinator: drained: every group is in a final state.");
  }

  /** Workers start on the model's latest checkpoint; the service may be down for a while. */
  async publishLatestStep(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const step = await this.resolved.options.model.getStep({ signal: this.signal });
        await publishStep(this.client, this.cluster, step);
        return;
      } catch (error) {
        if (this.signal.aborted) throw error;
        const delay = this.backoff(attempt);
        this.logger.warn(
          `TrainingCoordinator: could not read the model's latest step (${errorMessage(error)}); trying again in ${delay} ms.`,
        );
        await abortableSleep(delay, this.signal);
      }
    }
  }

  backoff(attempt: number): number {
    return Math.min(30_000, this.pollMs * 2 ** Math.min(attempt, 5));
  }

  async close(): Promise<void> {
    await this.#groupQueue?.close();
  }
}
