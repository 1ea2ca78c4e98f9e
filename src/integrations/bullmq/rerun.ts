// `onStale: "rerun"`: a group too far behind the policy is enqueued again
// under a fresh deterministic id (`<first id>.rerun<n>`), so each attempt runs
// once however often this runs, up to `maxReruns` attempts; past that, it is
// dropped like any stale group. The stale group waits in `rerun-pending` until
// its re-run is in Redis, so a coordinator that dies midway enqueues it on
// its next start (the id makes that second add a no-op).
import { FlowProducer, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { errorMessage } from "../../util/index.js";
import { LUA, runScript } from "./lua/index.js";
import { type Cluster, GroupIdSchema, rolloutJobId } from "./options.js";
import { type GroupJobData, groupFlow, type RolloutJobData } from "./producer.js";
import { bullConnection, type DistributedLogger, type OutageLog, queueOptions } from "./redis.js";
import { storeKeys } from "./store.js";

/** Re-enqueues the stale groups waiting in `rerun-pending`. */
export class Rerunner {
  readonly #client: Redis;
  readonly #cluster: Cluster;
  readonly #maxReruns: number;
  readonly #logger: DistributedLogger;
  readonly #outage: OutageLog;
  #bull: { flows: FlowProducer; groups: Queue; rollouts: Queue } | undefined;

  constructor(
    client: Redis,
    cluster: Cluster,
    maxReruns: number,
    logger: DistributedLogger,
    outage: OutageLog,
  ) {
    this.#outage = outage;
    this.#client = client;
    this.#cluster = cluster;
    this.#maxReruns = maxReruns;
    this.#logger = logger;
  }

  async close(): Promise<void> {
    const b = this.#bull;
    if (b) await Promise.all([b.flows.close(), b.groups.close(), b.rollouts.close()]);
  }

  async run(): Promise<void> {
    const k = storeKeys(this.#cluster);
    for (const id of await this.#client.lrange(k.rerun, 0, -1)) {
      let next: string | undefined;
      try {
        next = await this.#rerun(id);
      } catch (error) {
        // Left in rerun-pending: tried again on the next round.
        this.#logger.warn(
          `TrainingCoordinator: could not enqueue the re-run of ${id} (${errorMessage(error)}); trying again.`,
        );
        continue;
      }
      await runScript(
        this.#client,
        LUA.rerunDone,
        [k.rerun, k.groups, k.stale, k.stats, k.release],
        [id, next ?? ""],
      );
    }
  }

  /** The re-run's id once it is in Redis; undefined when the group is dropped instead. */
  async #rerun(id: string): Promise<string | undefined> {
    const { flows, groups, rollouts } = this.#open();
    const parent = await groups.getJob(id);
    const first = await rollouts.getJob(rolloutJobId(id, 0));
    if (!parent || !first) {
      this.#logger.error(
        `TrainingCoordinator: group ${id} is too far behind the policy and cannot be re-run (its jobs are gone from Redis); dropped, counted in stale.`,
      );
      return undefined;
    }
    const { rollouts: count, metadata } = parent.data as GroupJobData;
    const attempt = (Number(metadata.rerun) || 0) + 1;
    const origin = typeof metadata.rerun_of === "string" ? metadata.rerun_of : id;
    const next = `${origin}.rerun${attempt}`;
    if (attempt > this.#maxReruns || !GroupIdSchema.safeParse(next).success) {
      this.#logger.warn(
        `TrainingCoordinator: group ${id} is too far behind the policy again; dropped after ${attempt - 1} re-run(s) (maxReruns ${this.#maxReruns}), counted in stale.`,
      );
      return undefined;
    }
    if (!(await groups.getJob(next))) {
      const spec = {
        id: next,
        payload: (first.data as RolloutJobData).payload,
        rollouts: count,
        metadata: { ...metadata, rerun_of: origin, rerun: attempt },
      };
      await flows.add(groupFlow(this.#cluster, spec, first.opts.attempts ?? 1));
    }
    this.#logger.info(
      `TrainingCoordinator: group ${id} was too far behind the policy; re-running it as ${next} (re-run ${attempt} of ${this.#maxReruns}).`,
    );
    return next;
  }

  #open() {
    if (!this.#bull) {
      const connection = bullConnection(this.#cluster);
      const prefix = this.#cluster.prefix;
      this.#bull = {
        flows: new FlowProducer({ connection, prefix }),
        groups: new Queue(this.#cluster.groupQueue, queueOptions(this.#cluster, connection)),
        rollouts: new Queue(this.#cluster.rolloutQueue, queueOptions(this.#cluster, connection)),
      };
      const log = this.#outage.listener();
      this.#bull.flows.on("error", log);
      this.#bull.groups.on("error", log);
      this.#bull.rollouts.on("error", log);
    }
    return this.#bull;
  }
}
