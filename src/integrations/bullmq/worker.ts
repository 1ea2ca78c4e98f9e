import { type Job, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Recorder, RolloutTrajectory } from "../../recorder/index.js";
import {
  checkRolloutTrajectory,
  Trajectory,
  TrajectoryValidationError,
  type WireIssue,
} from "../../trajectory/index.js";
import { InvalidArgumentError } from "../../util/argument-error.js";
import { errorMessage, keepClassName } from "../../util/index.js";
import { checkIn, payloadStoreOf, type RolloutRef } from "./claim-check.js";
import { RolloutResultError } from "./errors.js";
import { type Cluster, type ClusterOptions, resolveCluster } from "./options.js";
import type { PayloadStore } from "./payload-store.js";
import { policyKeys, readStep } from "./policy.js";
import type { RolloutJobData } from "./producer.js";
import {
  assertReachable,
  bounded,
  bullConnection,
  type DistributedLogger,
  eventsMaxLen,
  OutageLog,
  openClient,
  rolloutMetrics,
} from "./redis.js";

/** What a rollout function receives. */
export interface RolloutContext<P = unknown> {
  /** The group's scenario. */
  payload: P;
  groupId: string;
  /** This rollout's place in its group, from 0. */
  index: number;
  /**
   * 1 on the first run; more each time the rollout runs again: after it
   * threw (the producer's `attempts`) or after its worker died (BullMQ's
   * stalled-job recovery ran it elsewhere).
   */
  attempt: number;
  /**
   * The trajectory being recorded (set `reward`, `metrics`, ... on it). With
   * the recorder's `upstream`, its `baseURL` and `apiKey` record a subprocess agent.
   */
  trajectory: RolloutTrajectory;
  /**
   * The newest checkpoint step the coordinator published. Call it for each
   * model call: the first and last values handed out become the trajectory's
   * `initial_policy_version` and `final_policy_version`.
   */
  step(): number;
  /**
   * `inferenceName(step())`: the model name that pins the newest step, for
   * the `model` of each request. Needs the worker's `inferenceName` option.
   */
  model(): string;
}

/** Options of {@link RolloutWorker}. */
export interface RolloutWorkerOptions<P = unknown> extends ClusterOptions {
  /** The recorder your wrapped client records into. */
  recorder: Recorder;
  /**
   * Runs one rollout inside `recorder.rollout`, with your own wrapped client.
   * Return nothing (the recorded trajectory is used) or a `Trajectory`.
   */
  rollout: (ctx: RolloutContext<P>) => unknown;
  /** The model name for a step, e.g. `(s) => model.inferenceName(s)`; used by `ctx.model()`. */
  inferenceName?: (step: number) => string;
  /** Rollouts this process runs at once. Default 8. */
  concurrency?: number;
  /**
   * How long a rollout's lock lives without renewal, in ms: a worker that
   * died is noticed this long after its last renewal, and its rollouts run
   * again elsewhere. Default 30000 (BullMQ's).
   */
  lockDurationMs?: number;
  /** How often this worker looks for rollouts whose worker died, in ms. Default 30000. */
  stalledIntervalMs?: number;
  /** How many times a rollout may lose its worker before it fails. Default 2. */
  maxStalledCount?: number;
  /**
   * Where each finished trajectory is written; the job's result is only a
   * reference to it and its reward. The collector (the coordinator's) must
   * be given the same store. Default: Redis lists next to the run's keys,
   * expiring after `payloadTtlMs` unless collected first.
   */
  payloads?: PayloadStore;
  /** Lifetime of an uncollected payload in the default Redis store, in ms. Default 86400000 (a day). */
  payloadTtlMs?: number;
  logger?: DistributedLogger;
}

/**
 * Runs rollouts from the queue, any number per machine and any number of
 * machines. Each rollout runs inside `recorder.rollout`; its trajectory's JSON
 * is written once to the payload store, and the job's result is a reference
 * to it (a few hundred bytes, whatever the trajectory's size). A worker killed mid-rollout loses nothing: once its
 * lock expires another worker runs that rollout again from the start, and
 * only a finished trajectory is ever stored.
 *
 * @example
 * const recorder = new Recorder();
 * const openai = recorder.wrap(new OpenAI({ baseURL, apiKey }));
 * const worker = await RolloutWorker.start({
 *   connection: { host: "127.0.0.1", port: 6379 },
 *   recorder,
 *   inferenceName: (step) => model.inferenceName(step),
 *   rollout: async ({ payload, trajectory, model }) => {
 *     const r = await openai.chat.completions.create({ model: model(), messages: payload.messages });
 *     trajectory.reward = score(r);
 *   },
 * });
 */
export class RolloutWorker<P = unknown> {
  /** The BullMQ worker, for its events (`completed`, `failed`, `error`). */
  readonly worker: Worker<RolloutJobData<P>, RolloutRef>;
  readonly #client: Redis;
  readonly #payloads: PayloadStore;
  readonly #subscriber: Redis;
  readonly #options: RolloutWorkerOptions<P>;
  #step = 0;

  private constructor(
    cluster: Cluster,
    options: RolloutWorkerOptions<P>,
    logger: DistributedLogger,
  ) {
    this.#options = options;
    const outage = new OutageLog(cluster, "RolloutWorker", logger);
    this.#client = openClient(cluster, outage);
    this.#subscriber = openClient(cluster, outage);
    this.#payloads = payloadStoreOf(options.payloads, this.#client, cluster, options.payloadTtlMs);
    const channel = policyKeys(cluster).channel;
    this.#subscriber.on("message", (_channel, message) => this.#raise(Number(message)));
    // A step published while Redis was away never reaches this subscriber:
    // read the key each time it connects (again) instead of at every rollout,
    // which would cost a round trip per rollout.
    this.#subscriber.on("ready", () => {
      readStep(this.#client, cluster).then(
        (step) => this.#raise(step),
        () => {},
      );
    });
    void this.#subscriber.subscribe(channel).catch(() => {});
    this.worker = new Worker(cluster.rolloutQueue, (job) => this.#run(job), {
      connection: bullConnection(cluster),
      prefix: cluster.prefix,
      concurrency: options.concurrency ?? 8,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: options.maxStalledCount ?? 2,
      // Counts finished rollouts for readProgress once their jobs are removed.
      metrics: rolloutMetrics,
    });
    this.worker.on("error", outage.listener());
    this.worker.on("failed", (job, error) => {
      if (job)
        logger.warn(
          `RolloutWorker: rollout ${job.id} failed (attempt ${job.attemptsMade}): ${error.message}`,
        );
    });
  }

  /**
   * Checks that Redis answers, then starts taking rollouts.
   *
   * @throws RedisUnavailableError when Redis cannot be reached.
   */
  static async start<P>(options: RolloutWorkerOptions<P>): Promise<RolloutWorker<P>> {
    const cluster = resolveCluster(options, "RolloutWorker");
    if (typeof options.rollout !== "function") {
      throw new InvalidArgumentError(
        "RolloutWorker.start",
        "options.rollout",
        "a function",
        options.rollout,
      );
    }
    if (!options.recorder || typeof options.recorder.rollout !== "function") {
      throw new InvalidArgumentError(
        "RolloutWorker.start",
        "options.recorder",
        "a Recorder",
        options.recorder,
      );
    }
    await assertReachable(cluster, "RolloutWorker");
    const worker = new RolloutWorker(cluster, options, options.logger ?? console);
    try {
      worker.#raise(
        await bounded(
          cluster,
          "RolloutWorker",
          "nothing was started",
          readStep(worker.#client, cluster),
        ),
      );
      await eventsMaxLen(worker.#client, cluster);
    } catch (error) {
      await worker.worker.close(true).catch(() => {});
      worker.#subscriber.disconnect();
      worker.#client.disconnect();
      throw error;
    }
    return worker;
  }

  /** The newest step this worker knows of. */
  get step(): number {
    return this.#step;
  }

  /** Stops taking rollouts and waits for the running ones to finish. */
  async close(): Promise<void> {
    await this.worker.close();
    this.#subscriber.disconnect();
    this.#client.disconnect();
  }

  #raise(step: number): void {
    if (Number.isFinite(step) && step > this.#step) this.#step = step;
  }

  async #run(job: Job<RolloutJobData<P>>): Promise<RolloutRef> {
    const { groupId, index, payload } = job.data;
    const served: number[] = [];
    const step = () => {
      served.push(this.#step);
      return this.#step;
    };
    const inferenceName = this.#options.inferenceName;
    let returned: unknown;
    const recorded = await this.#options.recorder.rollout(
      async (trajectory) => {
        returned = await this.#options.rollout({
          payload,
          groupId,
          index,
          // attemptsMade counts runs that threw; stalledCounter runs whose worker died.
          attempt: job.attemptsMade + (job.stalledCounter ?? 0) + 1,
          trajectory,
          step,
          model: () => {
            if (!inferenceName) {
              throw new InvalidArgumentError(
                "RolloutWorker: ctx.model()",
                "options.inferenceName",
                "",
                undefined,
                "needs the worker's inferenceName option, e.g. (step) => model.inferenceName(step)",
              );
            }
            return inferenceName(step());
          },
        });
      },
      { metadata: { group_id: groupId, rollout_index: index } },
    );
    const trajectory = resultOf(returned, recorded, job.id);
    // A rollout that never asked ran on the step the worker had at its start and end.
    trajectory.initial_policy_version ??= served[0] ?? this.#step;
    trajectory.final_policy_version ??= served.at(-1) ?? this.#step;
    return checkIn(this.#payloads, job.id as string, toResult(trajectory, job.id));
  }
}

function resultOf(returned: unknown, recorded: Trajectory, jobId: string | undefined): Trajectory {
  if (returned === undefined) return recorded;
  if (returned instanceof Trajectory) return returned;
  const what =
    returned === null
      ? "null"
      : typeof returned === "object"
        ? `an object of class ${returned.constructor?.name ?? "Object"}`
        : typeof returned;
  throw unrecoverable(
    new RolloutResultError(
      `Rollout ${jobId}: the rollout function returned ${what}; expected a Trajectory or nothing (the recorded trajectory is used then).`,
    ),
  );
}

/**
 * The rollout's result as BullMQ stores it: the trajectory itself, which
 * BullMQ's `JSON.stringify` writes once as its wire JSON. Checked first, as
 * the wire writer checks, except the items the recorder built: a worker
 * never stores what the collector could not read.
 */
function toResult(trajectory: Trajectory, jobId: string | undefined): Trajectory.TrajectoryWire {
  const issues: WireIssue[] = [];
  try {
    checkRolloutTrajectory(trajectory, issues);
  } catch (error) {
    // What JSON cannot write (a BigInt, a cycle): BullMQ could not store it either.
    throw unrecoverable(new RolloutResultError(`Rollout ${jobId}: ${errorMessage(error)}`));
  }
  if (issues.length > 0) {
    const reason = new TrajectoryValidationError("trajectory", issues as never).message;
    throw unrecoverable(new RolloutResultError(`Rollout ${jobId}: ${reason}`));
  }
  return trajectory as unknown as Trajectory.TrajectoryWire;
}

// BullMQ retries any error but this one; running it again would fail the same way.
function unrecoverable(error: Error): UnrecoverableError {
  const wrapped = new UnrecoverableError(error.message);
  wrapped.stack = error.stack;
  return wrapped;
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(RolloutWorker, "RolloutWorker");
