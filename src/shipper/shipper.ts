import PQueue from "p-queue";
import { abortableSleep, isRetryableError, retryDelay } from "../client/index.js";
import { withTrainingSpan } from "../telemetry/index.js";
import type { GroupInput } from "../training/index.js";
import { markLeftOut, maxStepsOffPolicyProblem } from "../training/index.js";
import {
  checkGroups,
  PreparedGroup,
  prepareGroup,
  rewardSignalOf,
  type ValidateOptions,
  type ValidationMode,
} from "../trajectory/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { TrajectoryRecorderError } from "../util/error-family.js";
import { installExitHooks } from "./exit-hooks.js";
import { checkShipperOptions, type TrajectoryShipperOptions } from "./options.js";
import { Spool, type SpoolEntry } from "./spool.js";
import { SpoolLock } from "./spool-lock.js";
import { newCounters, type ShipperLogger, type ShipperStats } from "./stats.js";
import { Trainer } from "./trainer.js";

export type { TrajectoryShipperOptions } from "./options.js";
export type { ShipperLogger, ShipperStats } from "./stats.js";

interface Item {
  entry: SpoolEntry;
  bytes: number;
  /** Bytes of this group counted in memory now (0 while it waits on disk only). */
  held: number;
  /** Given up on by close(); a late confirmation turns it back into shipped. */
  givenUp?: boolean;
}

/**
 * Ships trajectory groups to the Training Service in the background: bounded
 * concurrency and memory, retries with jittered backoff, an optional on-disk
 * spool replayed after a crash, and a training job every N groups. Use it as
 * a recorder's `shipper` to auto-log rollouts.
 *
 * @example
 * const shipper = new TrajectoryShipper({ model, trainEvery: { groups: 8, config: { learningRate: 1e-5 } }, spoolDir: ".spool" });
 * await shipper.add(group);
 * await shipper.close({ timeoutMs: 30_000 });
 */
export class TrajectoryShipper {
  readonly #model: TrajectoryShipperOptions["model"];
  readonly #split: string;
  readonly #options: TrajectoryShipperOptions;
  readonly #logger: ShipperLogger;
  readonly #validate: ValidateOptions | ValidationMode | false | undefined;
  readonly #queue: PQueue;
  readonly #spool: Spool | undefined;
  readonly #lock: SpoolLock | undefined;
  readonly #maxBytes: number;
  readonly #abort = new AbortController();
  readonly #ready: Promise<void>;
  readonly #failed: SpoolEntry[] = [];
  readonly #trainer: Trainer;
  readonly #stats = newCounters();
  /** Accepted and not yet confirmed or given up on. */
  readonly #pending = new Set<Item>();
  #queuedBytes = 0;
  #waiters: (() => void)[] = [];
  #removeHooks: (() => void) | undefined;
  #closed = false;

  constructor(options: TrajectoryShipperOptions) {
    const call = "new TrajectoryShipper(options)";
    if (options === null || typeof options !== "object")
      throw new InvalidArgumentError(call, "options", "an object", options);
    if (!options.model || typeof options.model.log !== "function")
      throw new InvalidArgumentError(call, "options.model", "a TrainableModel", options.model);
    checkShipperOptions(call, options);
    const every = options.trainEvery?.groups;
    if (options.trainEvery && (!Number.isInteger(every) || (every as number) < 1)) {
      throw new InvalidArgumentError(
        call,
        "options.trainEvery.groups",
        "a positive integer",
        every,
      );
    }
    const noSignal = options.trainEvery?.noSignal;
    if (noSignal !== undefined && noSignal !== "skip" && noSignal !== "send")
      throw new InvalidArgumentError(
        call,
        "options.trainEvery.noSignal",
        '"skip" or "send"',
        noSignal,
      );
    const offPolicy = maxStepsOffPolicyProblem(options.trainEvery?.maxStepsOffPolicy);
    if (offPolicy)
      throw new InvalidArgumentError(
        call,
        "options.trainEvery.maxStepsOffPolicy",
        "an integer, 0 or more, or Infinity",
        options.trainEvery?.maxStepsOffPolicy,
        offPolicy,
      );
    this.#options = options;
    this.#model = options.model;
    this.#split = options.split ?? "train";
    // The console, but its notes on stderr (console.info writes to stdout, the program's own).
    this.#logger = options.logger ?? {
      warn: (m) => console.warn(m),
      error: (m) => console.error(m),
      info: (m) => console.error(m),
    };
    const check = options.validate;
    // Asked for, the check reports through the shipper's logger.
    this.#validate =
      typeof check === "object"
        ? { logger: this.#logger, ...check }
        : check
          ? { mode: check, logger: this.#logger }
          : check;
    this.#maxBytes = options.maxQueuedBytes ?? 64 * 1024 * 1024;
    this.#queue = new PQueue({ concurrency: options.concurrency ?? 2 });
    this.#spool = options.spoolDir ? new Spool(options.spoolDir) : undefined;
    // First, so that a shipper that cannot have the directory is never made.
    this.#lock = this.#spool && SpoolLock.acquire(this.#spool.dir);
    const previous = this.#lock?.tookOverFrom;
    if (previous) {
      this.#logger.warn(
        `TrajectoryShipper: took over the lock on ${this.#spool?.dir} from process ${previous.pid}, which is gone.`,
      );
    }
    this.#trainer = new Trainer({
      model: this.#model,
      spool: this.#spool,
      trainEvery: options.trainEvery,
      // A check asked for ran in add (and a "warn" means: train them anyway);
      // unasked, train's own default refuses jobs with nothing to learn from.
      validate: options.validate === undefined ? undefined : false,
      signal: this.#abort.signal,
      logger: this.#logger,
      counters: this.#stats,
      failed: this.#failed,
      maxAttempts: options.maxAttempts ?? 8,
      backoff: options.backoff,
    });
    this.#ready = this.#replay();
    if (options.flushOnExit !== false) {
      this.#removeHooks = installExitHooks({
        hasWork: () => this.#hasWork(),
        flush: () => this.flush(),
        close: (timeoutMs) => this.close({ timeoutMs }),
        exiting: () => this.#reportExit(),
        timeoutMs: options.exitTimeoutMs ?? 10_000,
      });
    }
  }

  /**
   * Accepts a group. Resolves once the group is queued (and, with `spoolDir`,
   * on disk); waits first while the queue holds `maxQueuedBytes`.
   *
   * @example
   * await shipper.add(group);
   */
  async add(group: GroupInput): Promise<void> {
    if (this.#closed)
      throw new TrajectoryRecorderError("TrajectoryShipper.add: the shipper is closed.");
    let kept: GroupInput = group;
    // A group without a trajectories array is left to prepareGroup, which names the field.
    if (hasTrajectories(group)) {
      const checked = checkGroups([group], this.#validate, "TrajectoryShipper.add", {
        allowNone: true,
      });
      if (!checked.groups[0]) return;
      kept = checked.groups[0] as GroupInput;
    }
    // Written and checked once, in slices that leave the event loop free;
    // these bytes are what the spool keeps and the service receives.
    let prepared = await prepareGroup(kept, "TrajectoryShipper.add");
    // A group trainEvery will leave out (its rewards all tie) is logged
    // marked as such, so the step's history tells it from the trained ones.
    if (this.#trainer.leavesOutNoSignal && rewardSignalOf(prepared) === false)
      prepared = await markLeftOut(prepared, "TrajectoryShipper.add");
    await this.#ready;
    const entry: SpoolEntry = {
      id: this.#spool?.newId() ?? "",
      split: this.#split,
      group: prepared,
      logged: false,
    };
    const item: Item = { entry, bytes: prepared.byteLength, held: 0 };
    await this.#take(item);
    this.#pending.add(item);
    if (this.#spool) {
      try {
        await this.#spool.write(entry);
      } catch (error) {
        this.#release(item);
        throw error;
      }
      this.#stats.spooled += 1;
      // On disk now: it is read back when its turn comes, so memory holds
      // only what is being written or sent, however long the backlog.
      entry.group = undefined;
      this.#drop(item);
    }
    this.#enqueue(item);
  }

  /**
   * Resolves when every accepted group is shipped or given up on, and any
   * training job started is over.
   *
   * @example
   * await shipper.flush();
   */
  async flush(): Promise<void> {
    await this.#ready;
    for (;;) {
      await this.#queue.onIdle();
      await this.#trainer.idle();
      if (!this.#hasWork()) return;
    }
  }

  /**
   * Stops accepting groups, flushes within `timeoutMs`, removes the exit
   * handlers and unlocks the spool directory. What is left is reported (and
   * stays in the spool).
   *
   * @example
   * const stats = await shipper.close({ timeoutMs: 30_000 });
   */
  async close(options: { timeoutMs?: number } = {}): Promise<ShipperStats> {
    this.#closed = true;
    this.#removeHooks?.();
    this.#removeHooks = undefined;
    const timeoutMs = options.timeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    let timedOut: boolean;
    try {
      timedOut = await Promise.race([
        this.flush().then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      this.#lock?.release();
    }
    if (timedOut) this.#giveUp(timeoutMs);
    const s = this.stats();
    if (s.awaitingTraining > 0) {
      this.#logger.warn(
        `TrajectoryShipper: ${s.awaitingTraining} logged group(s) were not trained on${
          timedOut ? "" : " (fewer than trainEvery.groups)"
        }${this.#spool ? `; they stay in ${this.#spool.dir} for the next start` : ""}.`,
      );
    }
    return s;
  }

  /**
   * The shipper's counters.
   *
   * @example
   * const { shipped, failed } = shipper.stats();
   */
  stats(): ShipperStats {
    return { queued: this.#pending.size, ...this.#stats, awaitingTraining: this.#trainer.awaiting };
  }

  /**
   * The groups given up on, as wire JSON, to store or ship again yourself.
   *
   * @example
   * await writeFile("unshipped.json", JSON.stringify(shipper.failedGroups()));
   */
  failedGroups(): unknown[] {
    return this.#failed.map((entry) => {
      const group = entry.group ?? this.#spool?.loadSync(entry);
      return group instanceof PreparedGroup ? group.toJSON() : group;
    });
  }

  // `process.exit()` (or an uncaught error) ends the process without waiting.
  #reportExit(): void {
    const left = this.#pending.size;
    const untrained = this.#trainer.awaiting;
    if (left === 0 && untrained === 0) return;
    const where = this.#spool
      ? `they stay in ${this.#spool.dir} and are shipped by the next start`
      : "they are lost (pass spoolDir to keep them, or await shipper.close() before process.exit())";
    const parts = [];
    if (left > 0) parts.push(`${left} group(s) not shipped`);
    if (untrained > 0) parts.push(`${untrained} logged group(s) not trained on`);
    this.#logger.error(
      `TrajectoryShipper: the process exited with ${parts.join(" and ")}, without waiting for them; ${where}.`,
    );
  }

  #hasWork(): boolean {
    return this.#queue.size > 0 || this.#queue.pending > 0 || this.#trainer.running;
  }

  // close() ran out of time: stop every request and job, and count what is left.
  #giveUp(timeoutMs: number): void {
    this.#abort.abort(
      new TrajectoryRecorderError("The shipper was closed before this group was shipped."),
    );
    this.#queue.clear();
    const left = [...this.#pending];
    for (const item of left) {
      item.givenUp = true;
      this.#release(item);
      this.#stats.failed += 1;
      this.#failed.push(item.entry);
    }
    if (left.length > 0) {
      this.#logger.error(
        `TrajectoryShipper: closed after ${timeoutMs} ms with ${left.length} group(s) not shipped; ${
          this.#spool
            ? `they stay in ${this.#spool.dir} and are replayed on the next start`
            : "they are lost unless you take them from failedGroups()"
        }.`,
      );
    }
    this.#trainer.reportAbandoned();
  }

  async #replay(): Promise<void> {
    if (!this.#spool) return;
    // The lock is held: no live writer has a temporary file here.
    const removed = await this.#spool.removeLeftoverTemps();
    if (removed > 0) {
      this.#logger.warn(
        `TrajectoryShipper: removed ${removed} temporary file(s) from ${this.#spool.dir}, left by writes that a stopped process cut short (a write counts only once renamed into place: nothing kept is lost).`,
      );
    }
    const { groups, jobs, uncertain } = await this.#spool.readAll((file, error) => {
      this.#stats.unreadable += 1;
      this.#logger.error(
        `TrajectoryShipper: could not read spool file ${file} (${(error as Error).message}); it is left in place.`,
      );
    });
    for (const job of jobs) {
      this.#stats.spooled += job.entries.length;
      this.#trainer.adopt(job);
    }
    if (uncertain.length > 0) {
      // At most one job per group: these may be in a job already.
      this.#stats.spooled += uncertain.length;
      this.#stats.failed += uncertain.length;
      this.#failed.push(...uncertain);
      this.#logger.error(
        `TrajectoryShipper: ${uncertain.length} logged group(s) in ${this.#spool.dir} were in a training job whose creation got no answer (the service may have started it); they are not trained again, listed by failedGroups(), and kept until you delete their .creating.json file (then the next start trains them).`,
      );
    }
    for (const entry of groups) {
      this.#stats.spooled += 1;
      if (entry.logged) {
        this.#trainer.addLogged(entry);
      } else {
        // Read back when it ships, and checked again then.
        const item: Item = { entry, bytes: this.#spool.sizeOf(entry.id), held: 0 };
        this.#pending.add(item);
        this.#enqueue(item);
      }
    }
    this.#trainer.kick();
  }

  #enqueue(item: Item): void {
    void this.#queue.add(() => this.#ship(item));
  }

  // Waits until the group's bytes fit in maxQueuedBytes, then counts them. A
  // group larger than the limit waits for an empty budget, then goes alone.
  async #take(item: Item): Promise<void> {
    while (this.#queuedBytes > 0 && this.#queuedBytes + item.bytes > this.#maxBytes) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    this.#queuedBytes += item.bytes;
    item.held = item.bytes;
  }

  #drop(item: Item): void {
    if (item.held === 0) return;
    this.#queuedBytes -= item.held;
    item.held = 0;
    const waiters = this.#waiters.splice(0);
    for (const wake of waiters) wake();
  }

  #release(item: Item): void {
    this.#pending.delete(item);
    this.#drop(item);
  }

  async #ship(item: Item): Promise<void> {
    const signal = this.#abort.signal;
    try {
      if (item.entry.group === undefined && this.#spool) {
        await this.#take(item);
        item.entry.group = await this.#spool.load(item.entry);
      }
      await this.#send(item.entry, signal);
    } catch (error) {
      if (this.#spool) item.entry.group = undefined;
      if (item.givenUp) return this.#drop(item); // counted and reported by close()
      this.#release(item);
      this.#stats.failed += 1;
      this.#failed.push(item.entry);
      this.#logger.error(
        `TrajectoryShipper: could not log a group to model ${this.#model.id} (${(error as Error).message}); it is kept${
          this.#spool ? " in the spool" : ""
        } and listed by failedGroups().`,
      );
      return;
    }
    if (item.givenUp) this.#takeBack(item);
    this.#pending.delete(item);
    this.#stats.shipped += 1;
    if (this.#options.trainEvery) {
      // Known now, from the group in memory; a group read back from the spool is judged when its job is made.
      const signal = rewardSignalOf(item.entry.group);
      if (signal === false && this.#trainer.skipsNoSignal) {
        this.#drop(item);
        this.#trainer.noSignal(1);
        await this.#spoolQuietly(() => this.#unspool(item.entry));
        return;
      }
      item.entry.logged = true;
      await this.#spoolQuietly(() => this.#spool?.write(item.entry));
      if (this.#spool) item.entry.group = undefined;
      this.#drop(item);
      this.#trainer.addLogged(item.entry);
    } else {
      this.#drop(item);
      await this.#spoolQuietly(() => this.#unspool(item.entry));
    }
  }

  async #send(entry: SpoolEntry, signal: AbortSignal): Promise<void> {
    const maxAttempts = this.#options.maxAttempts ?? 8;
    if (!(entry.group instanceof PreparedGroup))
      entry.group = await prepareGroup(entry.group, "TrajectoryShipper (spool replay)");
    const group = entry.group;
    await withTrainingSpan(
      "trajectory_recorder.ship",
      {
        "trajectory_recorder.split": entry.split,
        "trajectory_recorder.model_id": this.#model.id,
      },
      async (span) => {
        for (let attempt = 0; ; attempt++) {
          span.setAttribute("trajectory_recorder.attempts", attempt + 1);
          try {
            await this.#model.log([group], { split: entry.split, signal });
            return;
          } catch (error) {
            if (signal.aborted || !isRetryableError(error) || attempt + 1 >= maxAttempts)
              throw error;
            this.#stats.retried += 1;
            const headers = (error as { headers?: Headers }).headers;
            await abortableSleep(
              retryDelay(attempt, { ...this.#options.backoff, headers }),
              signal,
            );
          }
        }
      },
    );
  }

  // The service confirmed a group after close() had counted it as failed.
  #takeBack(item: Item): void {
    item.givenUp = false;
    const at = this.#failed.indexOf(item.entry);
    if (at >= 0) this.#failed.splice(at, 1);
    this.#stats.failed -= 1;
  }

  // The group is shipped at this point; a stale spool file only means a restart may log it again.
  async #spoolQuietly(update: () => Promise<void> | undefined): Promise<void> {
    try {
      await update();
    } catch (error) {
      this.#logger.warn(
        `TrajectoryShipper: the spool file of a shipped group could not be updated (${(error as Error).message}); a restart may log it again.`,
      );
    }
  }

  async #unspool(entry: SpoolEntry): Promise<void> {
    if (!this.#spool) return;
    await this.#spool.remove(entry.id);
    this.#stats.spooled -= 1;
  }
}

function hasTrajectories(group: unknown): group is { trajectories: unknown[] } {
  return (
    typeof group === "object" &&
    group !== null &&
    !(group instanceof PreparedGroup) &&
    Array.isArray((group as { trajectories?: unknown }).trajectories)
  );
}
