import { FlowProducer, Queue } from "bullmq";
import { z } from "zod";
import { InvalidArgumentError } from "../../util/argument-error.js";
import { errorMessage } from "../../util/index.js";
import { InvalidGroupError } from "./errors.js";
import {
  type Cluster,
  type ClusterOptions,
  GroupIdSchema,
  resolveCluster,
  rolloutJobId,
} from "./options.js";
import {
  assertReachable,
  bounded,
  bullConnection,
  type DistributedLogger,
  OutageLog,
  queueOptions,
} from "./redis.js";

/** Groups per Redis transaction when enqueueing. */
const ENQUEUE_SLICE = 50;

/** One group to run: `rollouts` rollouts of the same scenario `payload`. */
export interface GroupSpec<P = unknown> {
  /**
   * The group's id, also its job id: enqueueing an id again does nothing, so
   * a producer that restarts may enqueue its whole list again.
   */
  id: string;
  /** The scenario, as JSON: every rollout of the group receives it. */
  payload: P;
  /** How many rollouts the group has. */
  rollouts: number;
  /** Copied onto the finished group's `metadata` (with `group_id`). */
  metadata?: Record<string, unknown>;
}

/** What a rollout job carries. */
export interface RolloutJobData<P = unknown> {
  groupId: string;
  index: number;
  payload: P;
}

/** What a group's parent job carries. */
export interface GroupJobData {
  rollouts: number;
  metadata: Record<string, unknown>;
}

/** Options of {@link RolloutProducer}. */
export interface RolloutProducerOptions extends ClusterOptions {
  /**
   * Attempts per rollout when it throws. Default 1: a failed rollout goes to
   * its group's `exceptions`. A rollout whose worker died is run again
   * regardless (BullMQ's stalled-job recovery).
   */
  attempts?: number;
  /** Where a lost Redis is reported (once per outage); `console` by default. */
  logger?: DistributedLogger;
  /**
   * How long finished jobs stay in Redis. A completed rollout's job is
   * removed at once (its group's parent job holds its result, a reference,
   * until the group is collected), except the group's first rollout, which a
   * re-run (`onStale: "rerun"`) reads its payload from: it and the group's
   * parent job are kept `ageMs` and at most the newest `count`; failed jobs
   * (rollouts and groups) for `failedAgeMs`, with their error. A group
   * whose jobs are gone cannot be re-run (it is counted stale).
   * Default `{ ageMs: 86400000, count: 10000, failedAgeMs: 604800000 }`.
   */
  keepJobs?: KeepJobs;
}

/** See {@link RolloutProducerOptions.keepJobs}. */
export interface KeepJobs {
  ageMs?: number;
  count?: number;
  failedAgeMs?: number;
}

/** BullMQ's removeOnComplete / removeOnFail of each job of a flow. */
export interface Retention {
  kept: { age: number; count: number };
  failed: { age: number };
}

export function retentionOf(keep: KeepJobs | undefined): Retention {
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  return {
    kept: { age: seconds(keep?.ageMs ?? 86_400_000), count: keep?.count ?? 10_000 },
    failed: { age: seconds(keep?.failedAgeMs ?? 604_800_000) },
  };
}

const GroupSpecSchema = z.object({
  id: GroupIdSchema,
  payload: z.unknown(),
  rollouts: z.number().int().min(1).max(100_000),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/**
 * The first value JSON would change or drop (a Date, undefined, a function,
 * NaN, a class instance), with its path. Cycles were ruled out before.
 */
function notJson(value: unknown, path: string[]): { path: string[]; what: string } | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") {
    return Number.isFinite(value) ? undefined : { path, what: `${value}, not a finite number` };
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const bad = notJson(v, [...path, String(i)]);
      if (bad) return bad;
    }
    return undefined;
  }
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      return { path, what: `a ${value.constructor?.name ?? "class instance"}` };
    }
    for (const [k, v] of Object.entries(value)) {
      const bad = notJson(v, [...path, k]);
      if (bad) return bad;
    }
    return undefined;
  }
  return { path, what: value === undefined ? "undefined" : `a ${typeof value}` };
}

/**
 * Enqueues groups of rollouts as BullMQ flows: one parent job per group (in
 * `<name>-groups`, id = the group id) whose children are its rollouts (in
 * `<name>-rollouts`, ids `<group>#<index>`). Workers run the children; the
 * collector takes the parent once every child has ended.
 *
 * @example
 * const producer = new RolloutProducer({ connection: { host: "127.0.0.1", port: 6379 } });
 * await producer.enqueue(scenarios.map((s) => ({ id: `q-${s.id}`, payload: s, rollouts: 8 })));
 * await producer.close();
 */
export class RolloutProducer<P = unknown> {
  readonly #cluster: Cluster;
  readonly #attempts: number;
  readonly #retention: Retention;
  readonly #outage: OutageLog;
  #flows: FlowProducer | undefined;
  #groups: Queue | undefined;

  constructor(options: RolloutProducerOptions) {
    this.#cluster = resolveCluster(options, "RolloutProducer");
    this.#attempts = options.attempts ?? 1;
    this.#retention = retentionOf(options.keepJobs);
    this.#outage = new OutageLog(this.#cluster, "RolloutProducer", options.logger ?? console);
    if (!Number.isInteger(this.#attempts) || this.#attempts < 1) {
      throw new InvalidArgumentError(
        "RolloutProducer",
        "options.attempts",
        "a positive integer",
        this.#attempts,
      );
    }
  }

  /**
   * Validates every group (nothing is enqueued if one is bad), then enqueues
   * those not enqueued before. Resolves once Redis holds them.
   *
   * @throws InvalidGroupError naming the field, e.g. `groups[1].payload.when`.
   * @throws RedisUnavailableError when Redis cannot be reached (within
   * `connectTimeoutMs`), or stops answering midway: groups before the
   * failing slice of 50 are enqueued; enqueueing the whole list again adds
   * only the others.
   */
  async enqueue(groups: readonly GroupSpec<P>[]): Promise<{ added: string[]; existing: string[] }> {
    const specs = validate(groups);
    // Every call: BullMQ would otherwise wait for a Redis that is gone, silently.
    await assertReachable(this.#cluster, "RolloutProducer");
    this.#outage.back();
    const { flows, queue } = this.#open();
    const added: string[] = [];
    const existing: string[] = [];
    // In slices: a round trip per slice rather than two per group, and no
    // single Redis transaction large enough to stall the other clients.
    for (let i = 0; i < specs.length; i += ENQUEUE_SLICE) {
      const slice = specs.slice(i, i + ENQUEUE_SLICE);
      const step = async () => {
        // Only to report it: the flow's ids make a second add a no-op anyway.
        const found = await this.#existing(queue, slice);
        const fresh = slice.filter((spec, j) => {
          if (found[j]) existing.push(spec.id);
          return !found[j];
        });
        if (fresh.length === 0) return;
        await flows.addBulk(
          fresh.map((spec) => groupFlow(this.#cluster, spec, this.#attempts, this.#retention)),
        );
        added.push(...fresh.map((spec) => spec.id));
      };
      // Each slice within connectTimeoutMs: a Redis that freezes midway is an error, not a hang.
      await bounded(
        this.#cluster,
        "RolloutProducer",
        `the first ${added.length + existing.length} groups are in Redis and the next ${slice.length} may be; enqueueing the same list again adds only the missing ones`,
        step(),
      );
    }
    return { added, existing };
  }

  async close(): Promise<void> {
    await Promise.all([this.#flows?.close(), this.#groups?.close()]);
  }

  /** Whether each group's parent job exists; the reads go out together. */
  async #existing(queue: Queue, specs: { id: string }[]): Promise<boolean[]> {
    const jobs = await Promise.all(specs.map((spec) => queue.getJob(spec.id)));
    return jobs.map((job) => job !== undefined && job !== null);
  }

  #open(): { flows: FlowProducer; queue: Queue } {
    if (!this.#flows || !this.#groups) {
      const connection = bullConnection(this.#cluster);
      const prefix = this.#cluster.prefix;
      this.#flows = new FlowProducer({ connection, prefix });
      this.#groups = new Queue(this.#cluster.groupQueue, queueOptions(this.#cluster, connection));
      // BullMQ prints connection errors through console.error without a listener.
      this.#flows.on("error", this.#outage.listener());
      this.#groups.on("error", this.#outage.listener());
    }
    return { flows: this.#flows, queue: this.#groups };
  }
}

/** The BullMQ flow of one group: its parent job and one child per rollout. */
export function groupFlow(
  cluster: Cluster,
  spec: { id: string; payload: unknown; rollouts: number; metadata?: Record<string, unknown> },
  attempts: number,
  retention: Retention = retentionOf(undefined),
) {
  const data: GroupJobData = { rollouts: spec.rollouts, metadata: spec.metadata ?? {} };
  return {
    name: "group",
    queueName: cluster.groupQueue,
    data,
    // A collector that fails (a judge down) tries again; too many failed
    // rollouts fail it for good (UnrecoverableError).
    opts: {
      jobId: spec.id,
      attempts: 3,
      backoff: { type: "exponential", delay: 1000 },
      removeOnComplete: retention.kept,
      removeOnFail: retention.failed,
    },
    children: Array.from({ length: spec.rollouts }, (_, index) => ({
      name: "rollout",
      queueName: cluster.rolloutQueue,
      data: { groupId: spec.id, index, payload: spec.payload } satisfies RolloutJobData,
      opts: {
        jobId: rolloutJobId(spec.id, index),
        attempts,
        // A failed rollout ends its part in the group: the parent still
        // runs, and reads it back as one of the group's exceptions.
        ignoreDependencyOnFailure: true,
        // Its result is copied to the parent's `:processed` hash as it completes.
        removeOnComplete: index === 0 ? retention.kept : true,
        removeOnFail: retention.failed,
      },
    })),
  };
}

function validate(groups: readonly GroupSpec<unknown>[]): z.infer<typeof GroupSpecSchema>[] {
  if (!Array.isArray(groups)) {
    throw new InvalidGroupError("RolloutProducer.enqueue: groups must be an array of groups.");
  }
  const seen = new Set<string>();
  return groups.map((group, i) => {
    // JSON.stringify first: a cycle would send the schema walking forever.
    try {
      JSON.stringify(group);
    } catch (error) {
      throw new InvalidGroupError(
        `RolloutProducer.enqueue: groups[${i}] cannot be serialized to JSON (${errorMessage(error)}); nothing was enqueued.`,
        { cause: error },
      );
    }
    const parsed = GroupSpecSchema.safeParse(group);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = [`groups[${i}]`, ...(issue?.path ?? []).map(String)].join(".");
      throw new InvalidGroupError(
        `RolloutProducer.enqueue: ${path}: ${issue?.message ?? "invalid"}; nothing was enqueued.`,
      );
    }
    for (const key of ["payload", "metadata"] as const) {
      const bad = notJson(parsed.data[key] ?? null, [`groups[${i}]`, key]);
      if (bad) {
        throw new InvalidGroupError(
          `RolloutProducer.enqueue: ${bad.path.join(".")} is ${bad.what}; it must be plain JSON (objects, arrays, strings, finite numbers, booleans, null), which every worker reads back the same; nothing was enqueued.`,
        );
      }
    }
    if (seen.has(parsed.data.id)) {
      throw new InvalidGroupError(
        `RolloutProducer.enqueue: groups[${i}].id ${JSON.stringify(parsed.data.id)} appears twice; nothing was enqueued.`,
      );
    }
    seen.add(parsed.data.id);
    return parsed.data;
  });
}
