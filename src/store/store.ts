// The trajectory store: an append-only log of JSON lines in segment files,
// with a small index in memory. See docs/production.md, "The store".
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { InvalidArgumentError, keepClassName } from "../util/index.js";
import type { TrajectoryWire } from "../wire/index.js";
import { Bounds, DAY, GiB, MiB } from "./bounds.js";
import { checkWrite, progressRecord } from "./check-write.js";
import {
  FeedbackConflictError,
  FeedbackNotFoundError,
  InvalidFeedbackError,
  StoreClosedError,
} from "./errors.js";
import {
  aggregateFeedback,
  type FeedbackInput,
  type FeedbackRecord,
  firstDifference,
  parseFeedback,
} from "./feedback.js";
import { listEntries, listSessions, summarize } from "./listing.js";
import { acquireLock } from "./lock.js";
import { LogIndex } from "./log-index.js";
import { continues } from "./reconstruct.js";
import type { AppendRecord, CallRecord, FeedbackLogRecord, LogRecord } from "./records.js";
import { loadReplay, recoverInterrupted } from "./recovery.js";
import { type Entry, Replay } from "./replay.js";
import { listSegments, type ScanResult, Segments, scanSegment } from "./segments.js";
import type {
  CallProgress,
  CallRequest,
  ListFilter,
  ProductionStore,
  StoreAppend,
  StoredTrajectory,
  StoreEntry,
  StoreLogger,
  StoreStats,
  TrajectoryStoreOptions,
  TrajectorySummary,
} from "./types.js";

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * An embedded, crash-safe store of production trajectories on disk: an
 * append-only log of JSON lines in segment files, one writer process per
 * directory. A `put` that returned survives a SIGKILL of the process; a call
 * cut by one is kept as far as it got when the store is opened again.
 *
 * @example
 * const store = await TrajectoryStore.open({ dir: "./trajectories" });
 * store.put({ id, session: "s1", status: "open", trajectory, calls: 1 });
 * store.addFeedback({ trajectory_id: id, reward: 1 });
 * store.get(id)?.trajectory.reward; // 1
 * await store.close();
 */
export class TrajectoryStore implements ProductionStore {
  /** The store's directory. */
  readonly dir: string;
  private readonly logger: StoreLogger;
  private readonly index: LogIndex;
  private readonly bounds: Bounds;
  private readonly release: () => void;
  private closed = false;

  private constructor(
    options: TrajectoryStoreOptions,
    segments: Segments,
    release: () => void,
    logger: StoreLogger,
  ) {
    this.dir = options.dir;
    this.logger = logger;
    this.index = new LogIndex(segments);
    const maxBytes = options.maxBytes ?? GiB;
    const maxAgeMs = options.maxAgeMs ?? 30 * DAY;
    this.bounds = new Bounds(this.index, options.dir, maxBytes, maxAgeMs, logger);
    this.release = release;
  }

  private get entries(): Map<string, Entry> {
    return this.index.entries;
  }

  /**
   * Opens (or creates) the store in `options.dir`: takes its lock, reads its
   * records back (a record whose write was cut short is cut from the file),
   * keeps every call a crash interrupted as far as it got, and applies the bounds.
   *
   * @example
   * const store = await TrajectoryStore.open({ dir, maxBytes: 256 * 1024 ** 2, maxAgeMs: 7 * 86_400_000 });
   */
  static async open(options: TrajectoryStoreOptions): Promise<TrajectoryStore> {
    const call = "TrajectoryStore.open";
    if (typeof options?.dir !== "string" || options.dir === "")
      throw new InvalidArgumentError(call, "options.dir", "a directory path", options?.dir);
    for (const name of ["maxBytes", "maxAgeMs", "segmentBytes"] as const) {
      const v = options[name];
      if (v !== undefined && !(typeof v === "number" && v > 0))
        throw new InvalidArgumentError(call, `options.${name}`, "a positive number", v);
    }
    if (options.fsync !== undefined && options.fsync !== "always" && options.fsync !== "never")
      throw new InvalidArgumentError(call, "options.fsync", '"always" or "never"', options.fsync);
    mkdirSync(options.dir, { recursive: true });
    const release = acquireLock(options.dir);
    const logger = options.logger ?? { warn: (m: string) => console.warn(m) };
    try {
      const replay = new Replay();
      const sizes = new Map<number, number>();
      const damage: ScanResult[] = [];
      for (const n of listSegments(options.dir)) {
        const scan = scanSegment(options.dir, n, (record, at) =>
          replay.apply(record as LogRecord, at),
        );
        sizes.set(n, scan.size);
        if (scan.truncated || scan.skipped) damage.push(scan);
      }
      const segments = new Segments(
        options.dir,
        sizes,
        options.segmentBytes ?? 64 * MiB,
        options.fsync === "always",
      );
      const store = new TrajectoryStore(options, segments, release, logger);
      loadReplay(store.index, replay);
      const cut = damage.reduce((n, d) => n + d.truncated, 0);
      const skipped = damage.reduce((n, d) => n + d.skipped, 0);
      if (cut)
        logger.info?.(
          `TrajectoryStore: cut a record whose write was cut short (${cut} bytes) from ${options.dir}.`,
        );
      if (skipped)
        logger.warn(
          `TrajectoryStore: skipped ${skipped} unreadable lines in ${options.dir} (damaged from outside the store).`,
        );
      recoverInterrupted(store.index, replay, logger, options.dir);
      store.bounds.afterWrite(undefined);
      return store;
    } catch (error) {
      release();
      throw error;
    }
  }

  private check(method: string): void {
    if (this.closed) throw new StoreClosedError(method, this.dir);
  }

  /**
   * Records a trajectory's full current state; synchronous: when it returns,
   * the record survives a SIGKILL of the process. Call it after every
   * recorded call and when the session ends.
   *
   * @example
   * store.put({ id: t.id, session: "s1", status: "open", trajectory: t.toJSON(), calls: 2 });
   */
  put(entry: StoreEntry): void {
    this.check("put");
    const call = "TrajectoryStore.put";
    checkWrite(call, entry);
    if (typeof entry.trajectory !== "object" || entry.trajectory === null)
      throw new InvalidArgumentError(
        call,
        "entry.trajectory",
        "a trajectory's JSON",
        entry.trajectory,
      );
    const prev = this.entries.get(entry.id);
    const now = Date.now();
    this.index.writePut({
      k: "put",
      id: entry.id,
      session: entry.session ?? null,
      status: entry.status,
      calls: entry.calls,
      model: entry.model ?? prev?.model ?? null,
      ...(entry.metadata ? { metadata: entry.metadata } : {}),
      // Once interrupted, always: the flag tells a reader to look at the logs.
      ...(prev?.interrupted ? { interrupted: true as const } : {}),
      created_at: prev?.created ?? now,
      updated_at: now,
      trajectory: entry.trajectory,
    });
    this.bounds.afterWrite(entry.id);
  }

  /**
   * Records what an open trajectory gained since its latest `put` or
   * `append` (see {@link StoreAppend}): a call costs its own bytes, not the
   * whole state's; `get` gives back the state they add up to. Returns false,
   * writing nothing, when the store does not hold the state it continues (the
   * bounds dropped the trajectory, its latest state is finished, or the
   * lengths in `from` are not the stored ones): `put` the full state then.
   * Synchronous and durable on return, as `put`.
   *
   * @example
   * store.append({ id, session: "s1", status: "open", calls: 3, from: { main: 4, histories: [] },
   *   main: [userMessage, choice], histories: [], fields: { ...everyOtherKey } });
   */
  append(entry: StoreAppend): boolean {
    this.check("append");
    const call = "TrajectoryStore.append";
    checkWrite(call, entry);
    if (entry.status !== "open")
      throw new InvalidArgumentError(call, "entry.status", '"open"', entry.status);
    if (!Array.isArray(entry.main) || !Array.isArray(entry.histories))
      throw new InvalidArgumentError(call, "entry.main", "arrays of items", entry.main);
    if (typeof entry.fields !== "object" || entry.fields === null)
      throw new InvalidArgumentError(call, "entry.fields", "an object", entry.fields);
    const from = entry.from;
    if (!Number.isInteger(from?.main) || !Array.isArray(from.histories))
      throw new InvalidArgumentError(call, "entry.from", "{ main, histories } lengths", from);
    const prev = this.entries.get(entry.id);
    if (prev?.status !== "open" || !continues(prev.lengths, entry.from)) return false;
    const count = entry.from.histories.length;
    const known = (h: { index: number }) => Number.isInteger(h.index) && h.index >= 0;
    const news = entry.histories.filter((h) => known(h) && h.index >= count);
    if (!entry.histories.every(known) || news.some((h, i) => h.index !== count + i))
      throw new InvalidArgumentError(
        call,
        "entry.histories",
        `indexes below ${count}, or new histories numbered from ${count} in order`,
        entry.histories.map((h) => h.index),
      );
    const record: AppendRecord = {
      k: "append",
      id: entry.id,
      session: entry.session ?? null,
      status: "open",
      calls: entry.calls,
      model: entry.model ?? prev.model,
      ...(entry.metadata ? { metadata: entry.metadata } : {}),
      updated_at: Date.now(),
      from: entry.from,
      main: entry.main,
      histories: entry.histories,
      fields: entry.fields,
    };
    this.index.writeAppend(prev, record);
    this.bounds.afterWrite(entry.id);
    return true;
  }

  /**
   * Records that call `call` of trajectory `id` has begun, with its request:
   * if the process stops before a `put` with `calls >= call`, the next
   * `open` keeps the call in the trajectory as far as it got.
   *
   * @example
   * store.beginCall(id, 3, { model, messages, tools });
   */
  beginCall(
    id: string,
    call: number,
    request: CallRequest,
    options?: { session?: string | null },
  ): void {
    this.check("beginCall");
    const name = "TrajectoryStore.beginCall";
    if (typeof id !== "string" || id === "" || id.length > 200)
      throw new InvalidArgumentError(name, "id", "a string of 1 to 200 characters", id);
    if (!Number.isInteger(call) || call < 1)
      throw new InvalidArgumentError(name, "call", "an integer of 1 or more", call);
    if (!Array.isArray(request?.messages))
      throw new InvalidArgumentError(name, "request.messages", "an array", request?.messages);
    const entry = this.entries.get(id);
    // The messages the trajectory already holds are not written again.
    const skipped = Math.min(entry?.lengths.main ?? 0, request.messages.length);
    const record: CallRecord = {
      k: "call",
      id,
      call,
      session: options?.session ?? entry?.session ?? null,
      at: Date.now(),
      skipped,
      request: {
        model: request.model,
        messages: request.messages.slice(skipped),
        tools: request.tools ?? null,
      },
    };
    const at = this.index.write(record);
    this.index.clearPending(id);
    this.index.pending.set(id, { call, callAt: at });
    this.index.live += at.len;
    this.bounds.afterWrite(id);
  }

  /**
   * Records how far call `call`'s answer has arrived (the whole answer so
   * far, not a delta: the latest one is kept). Call it throttled while a
   * stream arrives; a call already covered by a `put`, or never begun, is ignored.
   *
   * @example
   * store.progressCall(id, 3, { content: textSoFar });
   */
  progressCall(id: string, call: number, partial: CallProgress): void {
    this.check("progressCall");
    const p = this.index.pending.get(id);
    if (p?.call !== call) return;
    const record = progressRecord("TrajectoryStore.progressCall", id, call, partial);
    const at = this.index.write(record);
    this.index.live += at.len - (p.progressAt?.len ?? 0);
    p.progressAt = at;
    this.bounds.afterWrite(id);
  }

  /**
   * Adds feedback to a stored trajectory (the body is checked again here).
   * Returns the stored record and whether it is new: a resend with the same
   * `idempotency_key` and content returns the first with `created: false`.
   * Throws `InvalidFeedbackError` (400), `FeedbackNotFoundError` (404: unknown
   * or dropped id) or `FeedbackConflictError` (409: same key, other content).
   *
   * @example
   * const { feedback, created } = store.addFeedback({ trajectory_id: id, reward: 1, idempotency_key: "k1" });
   */
  addFeedback(input: FeedbackInput): { feedback: FeedbackRecord; created: boolean } {
    this.check("addFeedback");
    const body = parseFeedback(input);
    const key = body.idempotency_key;
    const prior = key === undefined ? undefined : this.index.keys.get(key);
    const priorAt = prior && this.entries.get(prior.id)?.feedbackAt[prior.index];
    if (key !== undefined && priorAt) {
      const stored = this.index.readRecord<FeedbackLogRecord>(priorAt).feedback;
      const field = firstDifference(stored, body);
      if (field) throw new FeedbackConflictError(key, field);
      return { feedback: stored, created: false };
    }
    const entry = this.entries.get(body.trajectory_id);
    if (!entry) throw new FeedbackNotFoundError(body.trajectory_id);
    const beyond = (body.turns ?? []).findIndex((t) => t.call > entry.calls);
    if (beyond !== -1)
      throw new InvalidFeedbackError([
        `turns[${beyond}].call: the trajectory has ${entry.calls} call${entry.calls === 1 ? "" : "s"}, not ${body.turns?.[beyond]?.call}`,
      ]);
    const now = Date.now();
    const feedback: FeedbackRecord = {
      ...body,
      feedback_id: `fb_${randomUUID()}`,
      n: entry.feedbackAt.length + 1,
      created_at: iso(now),
    };
    const at = this.index.write({ k: "feedback", id: entry.id, at: now, feedback });
    const all = [...this.index.readFeedback(entry), feedback];
    const outcome = aggregateFeedback(all);
    entry.feedbackAt.push(at);
    entry.reward = outcome.reward;
    entry.eligible = outcome.eligible;
    entry.updated = Math.max(entry.updated, now);
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
    this.index.live += at.len;
    if (key !== undefined)
      this.index.keys.set(key, { id: entry.id, index: entry.feedbackAt.length - 1 });
    this.bounds.afterWrite(entry.id);
    return { feedback, created: true };
  }

  private readFeedback(entry: Entry): FeedbackRecord[] {
    return entry.feedbackAt.map((at) => this.index.readRecord<FeedbackLogRecord>(at).feedback);
  }

  /**
   * The trajectory stored under `id`, read back from disk, with its feedback
   * applied (`trajectory.reward` and `trajectory.metrics`), or undefined.
   *
   * @example
   * const stored = store.get(id);
   * if (stored?.eligible) train(stored.trajectory);
   */
  get(id: string): StoredTrajectory | undefined {
    this.check("get");
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const record = this.index.readState(entry);
    const feedback = this.index.readFeedback(entry);
    const outcome = aggregateFeedback(feedback);
    const trajectory: TrajectoryWire = {
      ...record.trajectory,
      reward: outcome.reward ?? record.trajectory.reward,
      metrics: { ...record.trajectory.metrics, ...outcome.metrics },
    };
    const { feedback: _count, bytes: _bytes, ...summary } = summarize(entry);
    return { ...summary, trajectory, feedback, metadata: record.metadata ?? null };
  }

  /** Whether a trajectory is stored under `id` (a call begun and never put is not). */
  has(id: string): boolean {
    this.check("has");
    return this.entries.has(id);
  }

  /**
   * Summaries of the stored trajectories that match `filter`, the most
   * recently written first.
   *
   * @example
   * store.list({ rewarded: false, limit: 20 }); // the 20 latest still waiting for feedback
   */
  list(filter: ListFilter = {}): TrajectorySummary[] {
    this.check("list");
    return listEntries(this.entries, filter);
  }

  /**
   * The sessions of the stored trajectories, the most recently written first,
   * each with its trajectories' ids (newest first).
   *
   * @example
   * for (const s of store.sessions()) console.log(s.session, s.trajectories.length);
   */
  sessions(): { session: string; trajectories: string[]; updated_at: string }[] {
    this.check("sessions");
    return listSessions(this.entries);
  }

  /** How many trajectories, bytes and segments the store holds, and how many its bounds dropped. */
  stats(): StoreStats {
    return {
      trajectories: this.entries.size,
      bytes: this.index.segments.total,
      segments: this.index.segments.numbers().length,
      dropped: this.index.dropped,
    };
  }

  /** Makes every write so far durable on disk (fsync): it then survives a power cut too. */
  flush(): void {
    this.check("flush");
    this.index.segments.sync();
  }

  /** Flushes, closes the files and releases the lock. Calling it again does nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      this.index.segments.close();
    } finally {
      this.release();
    }
  }
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(TrajectoryStore, "TrajectoryStore");
