import { randomUUID } from "node:crypto";
import { type Job, Queue, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import {
  exceptionToWire,
  hasRewardSignal,
  INFRA_FAILURE_KEY,
  readWrittenTrajectory,
  Trajectory,
  TrajectoryGroup,
} from "../../trajectory/index.js";
import { InvalidArgumentError, kindOf } from "../../util/argument-error.js";
import { errorMessage, keepClassName } from "../../util/index.js";
import type { ExceptionWire } from "../../wire/index.js";
import { isRolloutRef, payloadStoreOf } from "./claim-check.js";
import {
  deletePayloads,
  isRecord,
  keepPayloads,
  parseRecord,
  recordKeys,
  writeRecord,
} from "./group-record.js";
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
import { type CollectedGroup, storeGroup, storeKeys } from "./store.js";

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
    const values = Object.entries(await job.getChildrenValues());
    const originals = values.flatMap(([, v]) => (isRolloutRef(v) ? [v.payload.key] : []));
    // Run again after storing it (killed before the job completed): nothing
    // left to do but delete the payloads its record does not reference.
    const existing = await this.#client.hget(storeKeys(this.#cluster).groups, id);
    if (existing !== null) {
      await this.#settle(id, existing, originals);
      this.#logger.info(`GroupCollector: group ${id} was already collected; not added again.`);
      return { stored: false };
    }
    const exceptions: [number, ExceptionWire][] = [];
    const parts: [number, Part][] = [];
    for (const [key, child] of values) {
      const index = parseRolloutJobId(key)?.index ?? -1;
      const part = partOf(key, child);
      if ("exception" in part) exceptions.push([index, part.exception]);
      else parts.push([index, part]);
    }
    for (const [key, reason] of Object.entries(await job.getIgnoredChildrenFailures())) {
      exceptions.push([parseRolloutJobId(key)?.index ?? -1, await this.#exception(key, reason)]);
    }
    const byIndex = <T>(a: [number, T], b: [number, T]) => a[0] - b[0];
    parts.sort(byIndex);
    const built = this.#options.afterEach
      ? await this.#scored(job, parts, exceptions)
      : await this.#referenced(job, parts, exceptions);
    const stored = await storeGroup(this.#client, this.#cluster, { id, ...built.group });
    if (!stored) {
      this.#logger.info(`GroupCollector: group ${id} was already collected; not added again.`);
      const winner = await this.#client.hget(storeKeys(this.#cluster).groups, id);
      await this.#settle(id, winner ?? "", [...originals, ...built.written]);
      return { stored: false };
    }
    await this.#settle(id, built.group.json, originals);
    return { stored };
  }

  /**
   * Without `afterEach`: the group's record references the rollouts' own
   * payloads, kept past the store's expiry until the group is trained or
   * dropped; nothing is read (the references carry the rewards and steps).
   */
  async #referenced(
    job: Job<GroupJobData>,
    parts: [number, Part][],
    exceptions: [number, ExceptionWire][],
  ): Promise<Built> {
    const id = job.id as string;
    const written: string[] = [];
    const keys: string[] = [];
    // A worker of another version returned the trajectory itself: into the store.
    for (const [, part] of parts) {
      if (part.value === undefined) continue;
      const key = `${part.jobId}.inline.${randomUUID().slice(0, 13)}`;
      await this.#payloads.put(key, JSON.stringify(part.value));
      written.push(key);
      part.key = key;
    }
    for (const [, part] of parts) keys.push(part.key as string);
    const missing = await keepPayloads(this.#payloads, keys);
    const kept = parts.filter(([, p]) => !missing.has(p.key as string));
    for (const [index, part] of parts) {
      if (!missing.has(part.key as string)) continue;
      const gone = missingPayload(part.jobId, part.key as string, part.bytes);
      this.#logger.warn(`GroupCollector: group ${id}: ${gone.message}`);
      exceptions.push([index, gone]);
    }
    await this.#checkExceptions(job, exceptions, keys, kept.length);
    exceptions.sort((a, b) => a[0] - b[0]);
    const rest = {
      exceptions: exceptions.map(([, e]) => e),
      metadata: { ...job.data.metadata, group_id: id },
      metrics: {},
      logs: [],
    };
    const summaries = kept.map(([, p]) => p.summary);
    const bytes = kept.reduce((n, [, p]) => n + p.bytes, 0);
    const t = kept.map(([, p]) => p.key as string);
    const record = await writeRecord(this.#payloads, id, t, bytes, rest);
    await keepPayloads(this.#payloads, record.written);
    written.push(...record.written);
    return { group: groupFacts(record.json, summaries, exceptions.length), written };
  }

  /**
   * With `afterEach`: the trajectories are read and scored; each is written
   * back once when scoring changed it (else its rollout's payload is kept),
   * one payload per trajectory, never the whole group as one string.
   */
  async #scored(
    job: Job<GroupJobData>,
    parts: [number, Part][],
    exceptions: [number, ExceptionWire][],
  ): Promise<Built> {
    const id = job.id as string;
    const bodies = await Promise.all(
      parts.map(([, p]) =>
        p.value !== undefined ? JSON.stringify(p.value) : this.#payloads.get(p.key as string),
      ),
    );
    const written: WrittenTrajectory[] = [];
    const originalOf = new Map<string, string>();
    parts.forEach(([index, part], i) => {
      const body = bodies[i];
      if (body === undefined) {
        const gone = missingPayload(part.jobId, part.key as string, part.bytes);
        this.#logger.warn(`GroupCollector: group ${id}: ${gone.message}`);
        exceptions.push([index, gone]);
        return;
      }
      if (part.key !== undefined) originalOf.set(body, part.key);
      written.push(part.value ?? (JSON.parse(body) as WrittenTrajectory));
    });
    await this.#checkExceptions(job, exceptions, [], written.length);
    exceptions.sort((a, b) => a[0] - b[0]);
    let scored = new TrajectoryGroup(written.map(readWrittenTrajectory), {
      exceptions: exceptions.map(([, e]) => e),
      metadata: { ...job.data.metadata, group_id: id },
    });
    const out = await this.#options.afterEach?.(scored);
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
    const { trajectories, ...rest } = scored.toJSON() as unknown as {
      trajectories: Record<string, unknown>[];
    } & Record<string, unknown>;
    const own: string[] = [];
    const t: string[] = [];
    let bytes = 0;
    for (const [i, trajectory] of trajectories.entries()) {
      const body = JSON.stringify(trajectory);
      bytes += Buffer.byteLength(body, "utf8");
      const same = originalOf.get(body);
      if (same !== undefined) {
        t.push(same);
        continue;
      }
      const key = `${id}.scored.${randomUUID().slice(0, 13)}#${i}`;
      await this.#payloads.put(key, body);
      own.push(key);
      t.push(key);
    }
    const record = await writeRecord(this.#payloads, id, t, bytes, rest);
    own.push(...record.written);
    const missing = await keepPayloads(this.#payloads, [...t, ...record.written]);
    if (missing.size > 0) {
      await deletePayloads(this.#payloads, own, this.#logger, `GroupCollector: group ${id}`);
      throw new Error(
        `group ${id}: ${missing.size} payload(s) expired while it was being scored; it is collected again.`,
      );
    }
    const summaries = scored.trajectories.map((tr) => ({
      reward: tr.reward,
      initial_policy_version: tr.initial_policy_version ?? null,
      metadata: tr.metadata,
    }));
    return { group: groupFacts(record.json, summaries, scored.exceptions.length), written: own };
  }

  /** Past `maxExceptions` the group fails for good; payloads kept for it are deleted first. */
  async #checkExceptions(
    job: Job<GroupJobData>,
    exceptions: [number, ExceptionWire][],
    kept: string[],
    trajectories: number,
  ): Promise<void> {
    const rollouts = job.data.rollouts;
    const ended = exceptions.length + trajectories;
    if (ended !== rollouts) {
      this.#logger.warn(
        `GroupCollector: group ${job.id} has ${ended} ended rollouts of ${rollouts}.`,
      );
    }
    const max = this.#options.maxExceptions ?? 0;
    const limit = max > 0 && max < 1 ? max * rollouts : max;
    if (exceptions.length <= limit) return;
    await deletePayloads(this.#payloads, kept, this.#logger, `GroupCollector: group ${job.id}`);
    const first = exceptions[0]?.[1];
    throw new UnrecoverableError(
      `${exceptions.length} of ${rollouts} rollouts failed, more than maxExceptions allows (${limit}); first: ${first?.type} ${first?.message}`,
    );
  }

  /**
   * The group is stored (as `entry`): deletes the candidate payloads its
   * entry does not reference (the rollouts' own ones after scoring copied
   * them, a losing collector's copies); what fails here expires with the
   * store's TTL, since only referenced payloads are kept.
   */
  async #settle(id: string, entry: string, candidates: string[]): Promise<void> {
    const referenced = new Set(isRecord(entry) ? recordKeys(parseRecord(entry)) : []);
    const unused = candidates.filter((key) => !referenced.has(key));
    await deletePayloads(this.#payloads, unused, this.#logger, `GroupCollector: group ${id}`);
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

function missingPayload(jobId: string, key: string, bytes: number): ExceptionWire {
  return {
    type: "<class 'PayloadMissingError'>",
    message: `Rollout ${jobId} finished, but its trajectory (${bytes} bytes, payload key ${key}) is not in the payload store: expired, deleted, or the collector is not given the workers' \`payloads\` store.`,
    traceback: "",
  };
}

/** A rollout's result as the collector uses it: a reference, or (older workers) the trajectory. */
interface Part {
  jobId: string;
  /** Its payload key (set once an inline trajectory is written). */
  key?: string;
  /** The trajectory, when the result held it. */
  value?: WrittenTrajectory;
  bytes: number;
  summary: Summary;
}

/** What the group's counters and no-signal check need of a trajectory. */
interface Summary {
  reward: number;
  initial_policy_version: number | null;
  metadata?: Record<string, unknown>;
}

/** A group ready to store, and the payloads this collector wrote for it. */
interface Built {
  group: Omit<CollectedGroup, "id">;
  written: string[];
}

/** A child's result as a part, or why it failed (a result of another shape that is no trajectory). */
function partOf(key: string, child: unknown): Part | { exception: ExceptionWire } {
  const jobId = key.slice(key.lastIndexOf(":") + 1);
  if (isRolloutRef(child)) {
    const infra = child.infra_failure;
    return {
      jobId,
      key: child.payload.key,
      bytes: child.payload.bytes,
      summary: {
        reward: child.reward,
        initial_policy_version: child.initial_policy_version ?? null,
        ...(infra === undefined ? {} : { metadata: { [INFRA_FAILURE_KEY]: infra } }),
      },
    };
  }
  let value: WrittenTrajectory;
  if (isWritten(child)) value = child;
  else {
    try {
      // A worker of another version, or a result written by hand: checked here.
      value = Trajectory.fromJSON(child).toJSON() as WrittenTrajectory;
    } catch (error) {
      return { exception: exceptionToWire(error) };
    }
  }
  return {
    jobId,
    value,
    bytes: 0,
    summary: {
      reward: value.reward,
      initial_policy_version: value.initial_policy_version,
      metadata: value.metadata as Record<string, unknown>,
    },
  };
}

/** The counters and checks storeGroup takes, from the trajectories' summaries. */
function groupFacts(
  json: string,
  summaries: Summary[],
  exceptions: number,
): Omit<CollectedGroup, "id"> {
  const versions = summaries
    .map((t) => t.initial_policy_version)
    .filter((v): v is number => typeof v === "number");
  return {
    json,
    version: versions.length ? Math.min(...versions) : undefined,
    rewardSum: summaries.reduce((s, t) => s + t.reward, 0),
    rewards: summaries.length,
    exceptions,
    signal: hasRewardSignal({ trajectories: summaries as never }),
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
