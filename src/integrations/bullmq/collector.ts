import { type Job, Queue, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import {
  exceptionToWire,
  hasRewardSignal,
  readWrittenTrajectory,
  Trajectory,
  TrajectoryGroup,
} from "../../trajectory/index.js";
import { InvalidArgumentError, kindOf } from "../../util/argument-error.js";
import { errorMessage, keepClassName } from "../../util/index.js";
import type { ExceptionWire } from "../../wire/index.js";
import { isRolloutRef, payloadStoreOf, type RolloutRef } from "./claim-check.js";
import { type Cluster, type ClusterOptions, parseRolloutJobId, resolveCluster } from "./options.js";
import type { PayloadStore } from "./payload-store.js";
import type { GroupJobData } from "./producer.js";
import {
  assertReachable,
  bullConnection,
  type DistributedLogger,
  OutageLog,
  openClient,
  queueOptions,
} from "./redis.js";
import { storeGroup, storeKeys } from "./store.js";

/** A trajectory's wire JSON as a RolloutWorker wrote it. */
type WrittenTrajectory = Record<string, unknown> & {
  reward: number;
  initial_policy_version: number | null;
};

const isMap = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
const isVersion = (v: unknown) => v === null || Number.isInteger(v);

/**
 * Whether a rollout's result has the shape a RolloutWorker writes (its own
 * fields, not each message: the worker checked those, and the check before
 * training checks them again).
 */
function isWritten(value: unknown): value is WrittenTrajectory {
  if (!isMap(value)) return false;
  const t = value as Record<string, unknown>;
  return (
    Array.isArray(t.messages_and_choices) &&
    Array.isArray(t.additional_histories) &&
    (t.tools === null || Array.isArray(t.tools)) &&
    typeof t.reward === "number" &&
    Number.isFinite(t.reward) &&
    isVersion(t.initial_policy_version) &&
    isVersion(t.final_policy_version) &&
    isMap(t.metrics) &&
    isMap(t.metadata) &&
    Array.isArray(t.logs)
  );
}

let create: (
  cluster: Cluster,
  options: GroupCollectorOptions,
  outage: OutageLog | undefined,
) => GroupCollector;

/** Options of {@link GroupCollector}. */
export interface GroupCollectorOptions extends ClusterOptions {
  /**
   * Scores each finished group before it is stored (group-relative rewards,
   * the judge), as in `gatherTrajectoryGroups`. A hook that throws is tried
   * again (3 attempts), then the group fails. Returning nothing keeps the
   * group (unlike gather's ART-style hook, which drops it).
   */
  afterEach?: (
    group: TrajectoryGroup,
    // biome-ignore lint/suspicious/noConfusingVoidType: an `async (g) => { ... }` hook returns Promise<void>.
  ) => void | TrajectoryGroup | PromiseLike<void | TrajectoryGroup>;
  /**
   * Failed rollouts a group may have: a count, or below 1 a fraction of its
   * rollouts. Past it the group fails (counted and logged, never trained).
   * Default 0, as in `gatherTrajectoryGroups`.
   */
  maxExceptions?: number;
  /** Groups scored at once. Default 4. */
  concurrency?: number;
  /** Lock of a group being scored, in ms (a collector that died is noticed after it). Default 30000. */
  lockDurationMs?: number;
  /** How often to look for groups whose collector died, in ms. Default 30000. */
  stalledIntervalMs?: number;
  /**
   * Where the workers wrote the trajectories: the same store as theirs
   * (`RolloutWorker`'s `payloads`). Default: the run's Redis. A group's
   * payloads are deleted once the group is stored.
   */
  payloads?: PayloadStore;
  logger?: DistributedLogger;
}

/**
 * Takes each group once all its rollouts have ended: builds the
 * `TrajectoryGroup` (failed rollouts as its `exceptions`), runs `afterEach`,
 * and stores it in Redis for the training coordinator, exactly once: storing
 * is one atomic step keyed by the group id, so a collector killed midway and
 * run again (or a second collector) never adds a group twice. The
 * `TrainingCoordinator` runs one; start more to score groups on other machines.
 *
 * @example
 * const collector = await GroupCollector.start({ connection, afterEach: (g) => applyGroupReward(g, rank) });
 */
export class GroupCollector {
  readonly worker: Worker<GroupJobData, { stored: boolean }>;
  readonly #cluster: Cluster;
  readonly #client: Redis;
  readonly #rollouts: Queue;
  readonly #payloads: PayloadStore;
  readonly #options: GroupCollectorOptions;
  readonly #logger: DistributedLogger;

  private constructor(cluster: Cluster, options: GroupCollectorOptions, outage?: OutageLog) {
    this.#cluster = cluster;
    this.#options = options;
    this.#logger = options.logger ?? console;
    outage ??= new OutageLog(cluster, "GroupCollector", this.#logger);
    this.#client = openClient(cluster, outage);
    this.#payloads = payloadStoreOf(options.payloads, this.#client, cluster);
    const connection = bullConnection(cluster);
    this.#rollouts = new Queue(cluster.rolloutQueue, queueOptions(cluster, connection));
    this.#rollouts.on("error", outage.listener());
    this.worker = new Worker(cluster.groupQueue, (job) => this.#collect(job), {
      connection,
      prefix: cluster.prefix,
      concurrency: options.concurrency ?? 4,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
    });
    this.worker.on("error", outage.listener());
    this.worker.on("failed", (job, error) => {
      if (job) this.#logger.error(`GroupCollector: group ${job.id} failed: ${error.message}`);
    });
  }

  /** @throws RedisUnavailableError when Redis cannot be reached. */
  static start(options: GroupCollectorOptions): Promise<GroupCollector> {
    return startCollector(options);
  }

  static {
    create = (cluster, options, outage) => new GroupCollector(cluster, options, outage);
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.#rollouts.close();
    this.#client.disconnect();
  }

  async #collect(job: Job<GroupJobData>): Promise<{ stored: boolean }> {
    const id = job.id as string;
    const { rollouts, metadata } = job.data;
    const written: [number, WrittenTrajectory][] = [];
    const exceptions: [number, ExceptionWire][] = [];
    const values = Object.entries(await job.getChildrenValues());
    const refs = values.flatMap(([, v]) => (isRolloutRef(v) ? [v] : []));
    // Run again after storing it (killed before the job completed): its
    // payloads may be deleted already, and there is nothing left to do.
    if (await this.#client.hexists(storeKeys(this.#cluster).groups, id)) {
      await this.#release(id, refs);
      this.#logger.info(`GroupCollector: group ${id} was already collected; not added again.`);
      return { stored: false };
    }
    const bodies = await Promise.all(refs.map((ref) => this.#payloads.get(ref.payload.key)));
    const claimed = new Map(refs.map((ref, i) => [ref, bodies[i]]));
    for (const [key, child] of values) {
      const index = parseRolloutJobId(key)?.index ?? -1;
      let value: unknown = child;
      if (isRolloutRef(child)) {
        const body = claimed.get(child);
        if (body === undefined) {
          const missing = missingPayload(key, child);
          this.#logger.warn(`GroupCollector: group ${id}: ${missing.message}`);
          exceptions.push([index, missing]);
          continue;
        }
        value = JSON.parse(body);
      }
      if (isWritten(value)) {
        // A RolloutWorker's result: checked when the worker wrote it.
        written.push([index, value]);
        continue;
      }
      try {
        // A worker of another version, or a result written by hand: checked here.
        written.push([index, Trajectory.fromJSON(value).toJSON() as WrittenTrajectory]);
      } catch (error) {
        exceptions.push([index, exceptionToWire(error)]);
      }
    }
    for (const [key, reason] of Object.entries(await job.getIgnoredChildrenFailures())) {
      exceptions.push([parseRolloutJobId(key)?.index ?? -1, await this.#exception(key, reason)]);
    }
    const ended = written.length + exceptions.length;
    if (ended !== rollouts) {
      this.#logger.warn(`GroupCollector: group ${id} has ${ended} ended rollouts of ${rollouts}.`);
    }
    const max = this.#options.maxExceptions ?? 0;
    const limit = max > 0 && max < 1 ? max * rollouts : max;
    if (exceptions.length > limit) {
      const first = exceptions[0]?.[1];
      throw new UnrecoverableError(
        `${exceptions.length} of ${rollouts} rollouts failed, more than maxExceptions allows (${limit}); first: ${first?.type} ${first?.message}`,
      );
    }
    const byIndex = <T>(a: [number, T], b: [number, T]) => a[0] - b[0];
    // The group's wire JSON, in TrajectoryGroup.toJSON's order; the
    // trajectories as their workers wrote them, unless afterEach scores them.
    let group: Pick<TrajectoryGroup, "trajectories" | "exceptions"> = {
      trajectories: written.sort(byIndex).map(([, t]) => t) as never,
      exceptions: exceptions.sort(byIndex).map(([, e]) => e),
    };
    let json: string;
    if (this.#options.afterEach) {
      let scored = new TrajectoryGroup(
        (group.trajectories as unknown as WrittenTrajectory[]).map(readWrittenTrajectory),
        { exceptions: group.exceptions, metadata: { ...metadata, group_id: id } },
      );
      const out = await this.#options.afterEach(scored);
      if (out instanceof TrajectoryGroup) scored = out;
      else if (out !== undefined) {
        throw new InvalidArgumentError(
          "GroupCollector",
          "options.afterEach",
          "",
          out,
          `returned ${kindOf(out)}; expected a TrajectoryGroup or nothing`,
        );
      }
      group = scored;
      json = JSON.stringify(scored);
    } else {
      json = JSON.stringify({
        trajectories: group.trajectories,
        exceptions: group.exceptions,
        metadata: { ...metadata, group_id: id },
        metrics: {},
        logs: [],
      });
    }
    const versions = group.trajectories
      .map((t) => t.initial_policy_version)
      .filter((v): v is number => typeof v === "number");
    const stored = await storeGroup(this.#client, this.#cluster, {
      id,
      json,
      version: versions.length ? Math.min(...versions) : undefined,
      rewardSum: group.trajectories.reduce((s, t) => s + t.reward, 0),
      rewards: group.trajectories.length,
      exceptions: group.exceptions.length,
      signal: hasRewardSignal(group),
    });
    if (!stored)
      this.#logger.info(`GroupCollector: group ${id} was already collected; not added again.`);
    await this.#release(id, refs);
    return { stored };
  }

  /** Deletes a stored group's payloads; what fails here expires with its TTL. */
  async #release(id: string, refs: RolloutRef[]): Promise<void> {
    const out = await Promise.allSettled(refs.map((ref) => this.#payloads.delete(ref.payload.key)));
    const failed = out.filter((r) => r.status === "rejected");
    if (failed.length > 0) {
      this.#logger.warn(
        `GroupCollector: group ${id}: ${failed.length} of ${refs.length} payloads could not be deleted (${errorMessage(failed[0]?.reason)}); they expire with the store's TTL.`,
      );
    }
  }

  /** The failed rollout's record, with its class and stack when BullMQ kept them. */
  async #exception(key: string, reason: string): Promise<ExceptionWire> {
    const jobId = key.slice(key.lastIndexOf(":") + 1);
    let stack = "";
    try {
      const child = await this.#rollouts.getJob(jobId);
      stack = child?.stacktrace?.at(-1) ?? "";
    } catch (error) {
      this.#logger.warn(`GroupCollector: could not read rollout ${jobId}: ${errorMessage(error)}`);
    }
    const name = /^([A-Za-z_$][\w$]*)(?::|$)/.exec(stack)?.[1] ?? "Error";
    return { type: `<class '${name}'>`, message: reason, traceback: stack };
  }
}

function missingPayload(key: string, ref: RolloutRef): ExceptionWire {
  const jobId = key.slice(key.lastIndexOf(":") + 1);
  return {
    type: "<class 'PayloadMissingError'>",
    message: `Rollout ${jobId} finished, but its trajectory (${ref.payload.bytes} bytes, payload key ${ref.payload.key}) is not in the payload store: expired, deleted, or the collector is not given the workers' \`payloads\` store.`,
    traceback: "",
  };
}

/** Starts a collector; the coordinator passes its own outage log, so that an outage is logged once. */
export async function startCollector(
  options: GroupCollectorOptions,
  outage?: OutageLog,
): Promise<GroupCollector> {
  const cluster = resolveCluster(options, "GroupCollector");
  const max = options.maxExceptions ?? 0;
  if (!(max >= 0))
    throw new InvalidArgumentError(
      "GroupCollector",
      "options.maxExceptions",
      "a number, 0 or more",
      max,
    );
  await assertReachable(cluster, "GroupCollector");
  return create(cluster, options, outage);
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(GroupCollector, "GroupCollector");
