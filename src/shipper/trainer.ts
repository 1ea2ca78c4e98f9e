// The shipper's training side: a job every N logged groups, one job at a
// time, each group in at most one job. A job's id goes into the spool as soon
// as the service names it, so a restart follows that job to its end instead
// of training the same groups again.
import { abortableSleep, type BackoffOptions, createOutcome, retryDelay } from "../client/index.js";
import {
  type GroupInput,
  type TrainableModel,
  type TrainConfig,
  type TrainEvery,
  TrainingFailedError,
  type TrainResult,
} from "../training/index.js";
import { rewardSignalOf } from "../trajectory/index.js";
import type { Spool, SpoolEntry, SpoolJob } from "./spool.js";
import type { Counters, ShipperLogger } from "./stats.js";

export interface TrainerContext {
  model: Pick<TrainableModel, "train" | "followJob">;
  spool: Spool | undefined;
  trainEvery: TrainEvery | undefined;
  /** Passed to `train`: `false` once `add` ran a check the user asked for. */
  validate: false | undefined;
  signal: AbortSignal;
  logger: ShipperLogger;
  counters: Counters;
  /** The shipper's list of groups given up on; failed jobs add theirs. */
  failed: SpoolEntry[];
  /** Attempts at creating a job whose request certainly never reached the service. */
  maxAttempts: number;
  backoff: BackoffOptions | undefined;
}

// A job this shipper is creating or following.
interface ActiveJob {
  /** Spool id of the job file. */
  id: string;
  entries: SpoolEntry[];
  jobId?: string;
  stepBefore?: number;
  /** The job file is on disk: a restart follows the job. */
  saved: boolean;
  /** train/followJob has answered. */
  settled: boolean;
  /** close() reported it as abandoned; nothing more to say about it. */
  abandoned: boolean;
  /** Creation failed in a way that certainly started no job. */
  certain?: boolean;
}

export class Trainer {
  readonly #ctx: TrainerContext;
  readonly #waiting: SpoolEntry[] = [];
  readonly #resumable: SpoolJob[] = [];
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  #active: ActiveJob | undefined;
  #toldNoSignal = false;

  constructor(ctx: TrainerContext) {
    this.#ctx = ctx;
  }

  /** Groups whose rewards are all equal stay out of the jobs (`trainEvery.noSignal`, default `"skip"`). */
  get skipsNoSignal(): boolean {
    return (this.#ctx.trainEvery?.noSignal ?? "skip") === "skip";
  }

  /** trainEvery is on and leaves tied groups out of its jobs. */
  get leavesOutNoSignal(): boolean {
    return this.#ctx.trainEvery !== undefined && this.skipsNoSignal;
  }

  /** Counts logged groups left out of the jobs for having no reward signal; says so once. */
  noSignal(count: number): void {
    this.#ctx.counters.noSignal += count;
    if (this.#toldNoSignal) return;
    this.#toldNoSignal = true;
    this.#info(
      `TrajectoryShipper: logged group(s) whose rewards are all equal teach nothing (every advantage is zero), so they are left out of the training jobs; stats().noSignal counts them (trainEvery.noSignal: "send" trains on them).`,
    );
  }

  #info(line: string): void {
    const logger = this.#ctx.logger;
    if (logger.info) logger.info(line);
    else logger.warn(line);
  }

  /** Logged groups waiting for the next job. */
  get awaiting(): number {
    return this.#waiting.length;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Resolves when no job is being created or followed. */
  idle(): Promise<void> {
    return this.#loop;
  }

  /** A group the service confirmed, to be trained on. */
  addLogged(entry: SpoolEntry): void {
    this.#waiting.push(entry);
    this.kick();
  }

  /** A job an earlier run left in the spool. */
  adopt(job: SpoolJob): void {
    if (job.error === undefined) {
      this.#resumable.push(job);
      return;
    }
    // It failed before: keep and report its groups, never train them again.
    const { counters, failed, logger, spool } = this.#ctx;
    counters.failed += job.entries.length;
    failed.push(...job.entries);
    logger.error(
      `TrajectoryShipper: ${job.entries.length} group(s) of training job ${job.jobId}, which failed (${job.error}), are kept in ${spool?.jobFile(job.id)} and not trained again; failedGroups() lists them.`,
    );
  }

  /** Starts the job loop unless it runs already. */
  kick(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Called by close() after it aborted: reports the job it walked away from. */
  reportAbandoned(): void {
    const job = this.#active;
    if (!job || job.settled) return;
    job.abandoned = true;
    this.#ctx.counters.trainingAbandoned += 1;
    const n = job.entries.length;
    const spool = this.#ctx.spool;
    let fate: string;
    if (job.jobId === undefined) {
      fate = spool
        ? `was being created; its groups stay in ${spool.dir}, and since the service may have created the job, the next start reports them in failedGroups() instead of training them again`
        : "was being created; its groups are not trained by this shipper";
    } else if (job.saved) {
      fate = `${job.jobId} was still running; it stays in ${spool?.jobFile(job.id)} and the next start follows it to its end`;
    } else {
      fate = `${job.jobId} was still running; it may finish on the service, but this shipper no longer follows it`;
    }
    this.#ctx.logger.error(
      `TrajectoryShipper: closed while the training job on ${n} group(s) ${fate}.`,
    );
  }

  async #run(): Promise<void> {
    // The flag is cleared in the same turn as the last check, so a group
    // added right after still finds the loop stopped and starts it again.
    try {
      for (;;) {
        if (this.#ctx.signal.aborted) return;
        const saved = this.#resumable.shift();
        if (saved) {
          await this.#resume(saved);
          continue;
        }
        const every = this.#ctx.trainEvery;
        if (!every || this.#waiting.length < every.groups) return;
        await this.#train(this.#waiting.splice(0, every.groups), every.config);
      }
    } finally {
      this.#running = false;
    }
  }

  async #train(entries: SpoolEntry[], config: TrainConfig | undefined): Promise<void> {
    const job = this.#start(this.#ctx.spool?.newId() ?? "", entries);
    const spool = this.#ctx.spool;
    const groups: GroupInput[] = [];
    try {
      // A logged group waits on disk; the job's groups are read back for it.
      for (const e of entries) {
        e.group ??= await (spool as Spool).load(e);
        groups.push(e.group);
      }
    } catch (error) {
      job.certain = true;
      await this.#settle(job, Promise.reject(error));
      return;
    }
    // Groups read back from an earlier run's spool are judged here.
    if (this.skipsNoSignal) {
      const flat = entries.filter((e) => rewardSignalOf(e.group) === false);
      if (flat.length > 0) {
        this.noSignal(flat.length);
        for (const e of flat) {
          entries.splice(entries.indexOf(e), 1);
          groups.splice(groups.indexOf(e.group as GroupInput), 1);
        }
        if (spool)
          await this.#quietly(async () => {
            for (const e of flat) await spool.remove(e.id);
          });
        this.#ctx.counters.spooled -= spool ? flat.length : 0;
        // Too few left for a job: they wait for the next groups, first in line.
        if (entries.length < (this.#ctx.trainEvery?.groups ?? 0)) {
          this.#waiting.unshift(...entries);
          this.#active = undefined;
          return;
        }
      }
    }
    // Marked before the request: if its answer is lost (or the process dies
    // waiting), a restart cannot tell whether the job exists, and keeps the
    // groups out of any other job rather than risk training them twice.
    if (spool) await spool.writeCreating(job.id, entries);
    const attempt = () =>
      this.#ctx.model.train(groups, config, {
        signal: this.#ctx.signal,
        pollIntervalMs: this.#ctx.trainEvery?.pollIntervalMs,
        validate: this.#ctx.validate,
        // Groups without reward signal were left out above, unless asked to send them.
        noSignal: "send",
        maxStepsOffPolicy: this.#ctx.trainEvery?.maxStepsOffPolicy,
        logger: { info: (m) => this.#info(`TrajectoryShipper: ${m}`) },
        onJobCreated: async ({ jobId, stepBefore }) => {
          job.jobId = jobId;
          job.stepBefore = stepBefore;
          await this.#save(job);
          await spool?.removeCreating(job.id);
        },
      });
    const outcome = (async () => {
      for (let n = 1; ; n++) {
        try {
          return await attempt();
        } catch (error) {
          const retry =
            job.jobId === undefined &&
            !this.#ctx.signal.aborted &&
            createOutcome(error) === "retry" &&
            n < this.#ctx.maxAttempts;
          if (!retry) throw error;
          this.#ctx.counters.retried += 1;
          const headers = (error as { headers?: Headers }).headers;
          await abortableSleep(
            retryDelay(n - 1, { ...this.#ctx.backoff, headers }),
            this.#ctx.signal,
          );
        }
      }
    })();
    const error = await outcome.then(
      () => undefined,
      (e: unknown) => e,
    );
    // Certainly no job: the groups may go into the next one.
    if (error !== undefined && job.jobId === undefined && createOutcome(error) === "retry") {
      job.certain = true;
      if (spool) await this.#quietly(() => spool.removeCreating(job.id));
    }
    await this.#settle(job, outcome);
  }

  async #resume(saved: SpoolJob): Promise<void> {
    const job = this.#start(saved.id, saved.entries);
    job.jobId = saved.jobId;
    job.stepBefore = saved.stepBefore;
    job.saved = true;
    const outcome = this.#ctx.model.followJob(saved.jobId, {
      stepBefore: saved.stepBefore,
      signal: this.#ctx.signal,
      pollIntervalMs: this.#ctx.trainEvery?.pollIntervalMs,
    });
    await this.#settle(job, outcome);
  }

  #start(id: string, entries: SpoolEntry[]): ActiveJob {
    const job: ActiveJob = { id, entries, saved: false, settled: false, abandoned: false };
    this.#active = job;
    return job;
  }

  async #save(job: ActiveJob): Promise<void> {
    const spool = this.#ctx.spool;
    if (!spool || job.jobId === undefined) return;
    try {
      await spool.writeJob(this.#record(job));
      job.saved = true;
    } catch (error) {
      // Following goes on; only a crash before the job ends would repeat it.
      this.#ctx.logger.warn(
        `TrajectoryShipper: could not save training job ${job.jobId} in the spool (${(error as Error).message}); if the process dies before it ends, a restart trains its ${job.entries.length} group(s) again.`,
      );
    }
  }

  async #settle(job: ActiveJob, running: Promise<TrainResult>): Promise<void> {
    let result: TrainResult | undefined;
    const error = await running.then(
      (r) => {
        result = r;
      },
      (e: unknown) => e ?? new Error("unknown error"),
    );
    job.settled = true;
    this.#active = undefined;
    if (job.abandoned) return;
    if (error === undefined) return this.#succeeded(job, result);
    if (error instanceof TrainingFailedError || job.jobId === undefined) {
      return this.#failed(job, error as Error);
    }
    // The service does not know the job (or its model): following it again
    // would never end, and training its groups again could train them twice
    // if the job ran after all. They are kept and reported as failed.
    if ((error as { status?: unknown }).status === 404) {
      return this.#failed(
        job,
        new Error(`the service does not know this job (404: ${(error as Error).message})`),
      );
    }
    this.#stopped(job, error as Error);
  }

  async #succeeded(job: ActiveJob, result: TrainResult | undefined): Promise<void> {
    const { counters, spool } = this.#ctx;
    // Dropped by train as too far off-policy: done with, never trained.
    counters.stale += result?.staleGroups ?? 0;
    if (result?.jobId !== null) counters.trainingJobs += 1;
    if (!spool) return;
    await this.#quietly(async () => {
      if (job.saved) await spool.removeJob(job.id);
      else for (const entry of job.entries) await spool.remove(entry.id);
    });
    counters.spooled -= job.entries.length;
  }

  // The job failed, or was never created: its groups are kept and reported.
  async #failed(job: ActiveJob, error: Error): Promise<void> {
    const { counters, failed, logger, spool } = this.#ctx;
    counters.trainingFailed += 1;
    counters.failed += job.entries.length;
    failed.push(...job.entries);
    const n = job.entries.length;
    if (job.jobId === undefined) {
      const fate = job.certain
        ? spool
          ? " in the spool, trained by the next start,"
          : ""
        : `; the service may have started the job before its answer was lost, so they are not trained again${
            spool
              ? ` (kept in ${spool.dir} with ${spool.creatingFile(job.id)}; delete that file to train them again)`
              : ""
          },`;
      logger.error(
        `TrajectoryShipper: a training job on ${n} group(s) could not be started (${error.message}); the groups are kept${fate} and listed by failedGroups().`,
      );
      return;
    }
    logger.error(
      `TrajectoryShipper: training job ${job.jobId} on ${n} group(s) failed (${error.message}); the groups are kept${
        job.saved ? ` in ${spool?.jobFile(job.id)}` : ""
      }, listed by failedGroups(), and not trained again.`,
    );
    if (job.saved && spool) {
      const message = error instanceof TrainingFailedError ? error.serviceMessage : error.message;
      await this.#quietly(() => spool.writeJob({ ...this.#record(job), error: message }));
    }
  }

  // Following stopped before the job ended (polls kept failing, no checkpoint listed in time).
  #stopped(job: ActiveJob, error: Error): void {
    this.#ctx.counters.trainingAbandoned += 1;
    this.#ctx.logger.error(
      `TrajectoryShipper: stopped following training job ${job.jobId} on ${job.entries.length} group(s) (${error.message}); ${
        job.saved
          ? `it stays in ${this.#ctx.spool?.jobFile(job.id)} and the next start follows it again`
          : "it may finish on the service, but this shipper no longer follows it"
      }.`,
    );
  }

  #record(job: ActiveJob): SpoolJob {
    return {
      id: job.id,
      jobId: job.jobId as string,
      stepBefore: job.stepBefore ?? 0,
      entries: job.entries,
    };
  }

  async #quietly(update: () => Promise<void>): Promise<void> {
    try {
      await update();
    } catch (error) {
      this.#ctx.logger.warn(
        `TrajectoryShipper: the spool could not be updated after a training job (${(error as Error).message}).`,
      );
    }
  }
}
