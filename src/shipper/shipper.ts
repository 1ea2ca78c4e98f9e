import PQueue from "p-queue";
import {
  abortableSleep,
  type BackoffOptions,
  isRetryableError,
  retryDelay,
} from "../client/index.js";
import { withTrainingSpan } from "../telemetry/index.js";
import {
  type GroupInput,
  type TrainableModel,
  type TrainConfig,
  toWireGroups,
} from "../training/index.js";
import { installExitHooks } from "./exit-hooks.js";
import { Spool, type SpoolEntry } from "./spool.js";

/** Where the shipper writes what it could not ship. Default: `console`. */
export interface ShipperLogger {
  warn(message: string): void;
  error(message: string): void;
}

/** Options of {@link TrajectoryShipper}. */
export interface TrajectoryShipperOptions {
  /** The model groups are logged to (and trained on, with `trainEvery`). */
  model: Pick<TrainableModel, "log" | "train" | "id">;
  /** The split groups are logged under. Default `"train"`. */
  split?: string;
  /** Start a training job every `groups` logged groups, with `config`. One job at a time. */
  trainEvery?: { groups: number; config?: TrainConfig; pollIntervalMs?: number };
  /** Requests in flight at once. Default 2. */
  concurrency?: number;
  /** Serialized bytes held in memory before `add` waits. Default 16 MiB. */
  maxQueuedBytes?: number;
  /** A directory where each group waits on disk until the service confirmed it; replayed on the next start. */
  spoolDir?: string;
  /** Attempts per group on transient failures (connection, 408, 429, 5xx). Default 8. */
  maxAttempts?: number;
  /** Backoff between attempts (the client's `retryDelay`). Default: 500 ms doubling to 8 s, jittered. */
  backoff?: BackoffOptions;
  /** Flush on `beforeExit` and `SIGTERM`. Default true. */
  flushOnExit?: boolean;
  /** Deadline of the flush on `SIGTERM`, in ms. Default 10000. */
  exitTimeoutMs?: number;
  logger?: ShipperLogger;
}

/** Counters of a shipper. */
export interface ShipperStats {
  /** Groups accepted but not yet confirmed (in memory or in flight). */
  queued: number;
  /** Groups the service confirmed. */
  shipped: number;
  /** Retried attempts. */
  retried: number;
  /** Groups given up on; kept in `failedGroups()` (and in the spool). */
  failed: number;
  /** Groups on disk in the spool. */
  spooled: number;
  /** Training jobs that ended successfully. */
  trainingJobs: number;
  /** Training jobs that failed; their groups are kept and counted in `failed`. */
  trainingFailed: number;
  /** Logged groups waiting for the next training job. */
  awaitingTraining: number;
}

interface Item {
  entry: SpoolEntry;
  bytes: number;
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
  readonly #queue: PQueue;
  readonly #spool: Spool | undefined;
  readonly #maxBytes: number;
  readonly #abort = new AbortController();
  readonly #ready: Promise<void>;
  readonly #failed: Item[] = [];
  readonly #toTrain: Item[] = [];
  #training: Promise<void> = Promise.resolve();
  #queuedBytes = 0;
  #queuedCount = 0;
  #waiters: (() => void)[] = [];
  #removeHooks: (() => void) | undefined;
  #closed = false;
  #stats = { shipped: 0, retried: 0, failed: 0, spooled: 0, trainingJobs: 0, trainingFailed: 0 };

  constructor(options: TrajectoryShipperOptions) {
    if (!options?.model || typeof options.model.log !== "function") {
      throw new TypeError("TrajectoryShipper: options.model must be a TrainableModel.");
    }
    const every = options.trainEvery?.groups;
    if (options.trainEvery && (!Number.isInteger(every) || (every as number) < 1)) {
      throw new TypeError(
        "TrajectoryShipper: options.trainEvery.groups must be a positive integer.",
      );
    }
    this.#options = options;
    this.#model = options.model;
    this.#split = options.split ?? "train";
    this.#logger = options.logger ?? console;
    this.#maxBytes = options.maxQueuedBytes ?? 16 * 1024 * 1024;
    this.#queue = new PQueue({ concurrency: options.concurrency ?? 2 });
    this.#spool = options.spoolDir ? new Spool(options.spoolDir) : undefined;
    this.#ready = this.#replay();
    if (options.flushOnExit !== false) {
      this.#removeHooks = installExitHooks(
        () => (this.#hasWork() ? this.flush() : Promise.resolve()),
        () => this.close({ timeoutMs: options.exitTimeoutMs ?? 10_000 }),
      );
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
    if (this.#closed) throw new Error("TrajectoryShipper.add: the shipper is closed.");
    const [wire] = toWireGroups([group], "TrajectoryShipper.add");
    await this.#ready;
    const entry: SpoolEntry = {
      id: this.#spool?.newId() ?? "",
      split: this.#split,
      group: wire,
      logged: false,
    };
    const bytes = Buffer.byteLength(JSON.stringify(wire));
    while (this.#queuedBytes > 0 && this.#queuedBytes + bytes > this.#maxBytes) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    this.#queuedBytes += bytes;
    this.#queuedCount += 1;
    if (this.#spool) {
      try {
        await this.#spool.write(entry);
      } catch (error) {
        this.#release(bytes);
        throw error;
      }
      this.#stats.spooled += 1;
    }
    this.#enqueue({ entry, bytes });
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
      await this.#training;
      if (this.#queue.size === 0 && this.#queue.pending === 0) return;
    }
  }

  /**
   * Stops accepting groups, flushes within `timeoutMs`, removes the exit
   * handlers. What is left is reported (and stays in the spool).
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
    const timedOut = await Promise.race([
      this.flush().then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      this.#abort.abort(new Error("The shipper was closed before this group was shipped."));
      this.#queue.clear();
      const s = this.stats();
      this.#logger.error(
        `TrajectoryShipper: closed after ${timeoutMs} ms with ${s.queued} group(s) not shipped${
          this.#spool
            ? `; they stay in ${this.#spool.dir} and are replayed on the next start`
            : "; they are lost"
        }.`,
      );
    }
    const s = this.stats();
    if (s.awaitingTraining > 0) {
      this.#logger.warn(
        `TrajectoryShipper: ${s.awaitingTraining} logged group(s) were not trained on (fewer than trainEvery.groups).`,
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
    return { queued: this.#queuedCount, ...this.#stats, awaitingTraining: this.#toTrain.length };
  }

  /**
   * The groups given up on, as wire JSON, to store or ship again yourself.
   *
   * @example
   * await writeFile("unshipped.json", JSON.stringify(shipper.failedGroups()));
   */
  failedGroups(): unknown[] {
    return this.#failed.map((item) => item.entry.group);
  }

  #hasWork(): boolean {
    return this.#queue.size > 0 || this.#queue.pending > 0;
  }

  async #replay(): Promise<void> {
    if (!this.#spool) return;
    const entries = await this.#spool.readAll((file, error) => {
      this.#logger.error(
        `TrajectoryShipper: could not read spooled group ${file} (${(error as Error).message}); it is left in place.`,
      );
    });
    for (const entry of entries) {
      const bytes = Buffer.byteLength(JSON.stringify(entry.group));
      this.#stats.spooled += 1;
      if (entry.logged) {
        this.#toTrain.push({ entry, bytes });
      } else {
        this.#queuedBytes += bytes;
        this.#queuedCount += 1;
        this.#enqueue({ entry, bytes });
      }
    }
    this.#maybeTrain();
  }

  #enqueue(item: Item): void {
    void this.#queue.add(() => this.#ship(item));
  }

  #release(bytes: number): void {
    this.#queuedBytes -= bytes;
    this.#queuedCount -= 1;
    const waiters = this.#waiters.splice(0);
    for (const wake of waiters) wake();
  }

  async #ship(item: Item): Promise<void> {
    const maxAttempts = this.#options.maxAttempts ?? 8;
    const signal = this.#abort.signal;
    try {
      await withTrainingSpan(
        "trajectory_recorder.ship",
        {
          "trajectory_recorder.split": item.entry.split,
          "trajectory_recorder.model_id": this.#model.id,
        },
        async (span) => {
          for (let attempt = 0; ; attempt++) {
            span.setAttribute("trajectory_recorder.attempts", attempt + 1);
            try {
              await this.#model.log([item.entry.group], { split: item.entry.split, signal });
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
    } catch (error) {
      this.#release(item.bytes);
      if (signal.aborted) return; // still in the spool, reported by close()
      this.#stats.failed += 1;
      this.#failed.push(item);
      this.#logger.error(
        `TrajectoryShipper: could not log a group to model ${this.#model.id} (${(error as Error).message}); it is kept${
          this.#spool ? " in the spool" : ""
        } and listed by failedGroups().`,
      );
      return;
    }
    this.#stats.shipped += 1;
    this.#release(item.bytes);
    if (this.#options.trainEvery) {
      item.entry.logged = true;
      await this.#spoolQuietly(() => this.#spool?.write(item.entry));
      this.#toTrain.push(item);
      this.#maybeTrain();
    } else {
      await this.#spoolQuietly(() => this.#unspool(item));
    }
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

  async #unspool(item: Item): Promise<void> {
    if (!this.#spool) return;
    await this.#spool.remove(item.entry.id);
    this.#stats.spooled -= 1;
  }

  // One job at a time: jobs chain on #training, each taking the next N groups
  // out of the buffer before it starts, so no group is trained on twice.
  #maybeTrain(): void {
    const every = this.#options.trainEvery;
    if (!every) return;
    while (this.#toTrain.length >= every.groups) {
      const batch = this.#toTrain.splice(0, every.groups);
      this.#training = this.#training.then(() => this.#train(batch, every.config));
    }
  }

  async #train(batch: Item[], config: TrainConfig | undefined): Promise<void> {
    try {
      await this.#model.train(
        batch.map((i) => i.entry.group),
        config,
        { signal: this.#abort.signal, pollIntervalMs: this.#options.trainEvery?.pollIntervalMs },
      );
      this.#stats.trainingJobs += 1;
    } catch (error) {
      if (this.#abort.signal.aborted) return;
      this.#stats.trainingFailed += 1;
      this.#stats.failed += batch.length;
      this.#failed.push(...batch);
      this.#logger.error(
        `TrajectoryShipper: a training job on ${batch.length} group(s) failed (${(error as Error).message}); the groups are kept and listed by failedGroups().`,
      );
      return;
    }
    for (const item of batch) await this.#spoolQuietly(() => this.#unspool(item));
  }
}
