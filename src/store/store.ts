// The trajectory store: an append-only log of JSON lines in segment files,
// with a small index in memory. See docs/production.md, "The store".
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { InvalidArgumentError } from "../util/index.js";
import type { TrajectoryWire } from "../wire/index.js";
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
import { keepInterruptedCall } from "./interrupted.js";
import { acquireLock } from "./lock.js";
import type {
  CallRecord,
  FeedbackLogRecord,
  Location,
  LogRecord,
  ProgressRecord,
  PutRecord,
} from "./records.js";
import { type Entry, type Pending, Replay } from "./replay.js";
import { listSegments, type ScanResult, Segments, scanSegment, syncDir } from "./segments.js";

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const DAY = 86_400_000;
/** After a bound is passed, the store is brought down to this share of it, so it is not redone at every write. */
const LOW_WATER = 0.8;

/** Where the store reports what it drops and what it recovered. */
export type StoreLogger = { warn(message: string): void; info?(message: string): void };

/** The options of {@link TrajectoryStore.open}. */
export type TrajectoryStoreOptions = {
  /** The store's directory, created when missing. One process writes it at a time (a `LOCK` file). */
  dir: string;
  /**
   * The most bytes its segment files may take together; past it, old records
   * are compacted and, when that is not enough, trajectories dropped (oldest
   * unrewarded first, then oldest). Default 1 GiB.
   */
  maxBytes?: number;
  /** How long a trajectory is kept after its last write or feedback, in ms. Default 30 days. */
  maxAgeMs?: number;
  /** The size at which a new segment file is started. Default 64 MiB. */
  segmentBytes?: number;
  /**
   * `"never"` (default): a write that returned survives the death of the
   * process (it is in the kernel's page cache), not a power cut until
   * `flush()` or `close()` (which fsync). `"always"`: every write is fsynced
   * before it returns (survives a power cut; costs a disk flush per write).
   */
  fsync?: "always" | "never";
  /** Receives a line for every drop and every recovery. Default: `console.warn`. */
  logger?: StoreLogger;
};

/** What `put` records: a trajectory's full current state. */
export type StoreEntry = {
  /** The trajectory's id (what receipts and feedback name). */
  id: string;
  /** The session it belongs to, or null. */
  session: string | null;
  status: "open" | "finished";
  /** The trajectory as ART dumps it. */
  trajectory: TrajectoryWire;
  /** How many calls it holds; a begun call with a number up to this is complete. */
  calls: number;
  model?: string | null;
  /** The caller's own data, kept with this state (not merged with earlier puts'). */
  metadata?: Record<string, unknown>;
};

/** A begun call's request, as `beginCall` takes it. */
export type CallRequest = { model?: string; messages: unknown[]; tools?: unknown[] | null };
/** How far a call's answer has arrived, as `progressCall` takes it. */
export type CallProgress = { content: string; reasoning?: string; tool_calls?: unknown[] };

/** A stored trajectory's summary, as `list` returns it. */
export type TrajectorySummary = {
  id: string;
  session: string | null;
  status: "open" | "finished";
  /** When it was first stored, ISO 8601. */
  created_at: string;
  /** When it was last stored or given feedback, ISO 8601. */
  updated_at: string;
  calls: number;
  model: string | null;
  /** The reward its feedback gives (see `aggregateFeedback`), or null before any. */
  reward: number | null;
  /** Whether it may be trained on; null until it has a reward or a feedback says. */
  eligible: boolean | null;
  /** True when a call was cut by the process stopping (kept as far as it got; see its `logs`). */
  interrupted: boolean;
  /** How many feedbacks it has. */
  feedback: number;
  /** The size of its latest stored state, in bytes. */
  bytes: number;
};

/** A stored trajectory with its feedback, as `get` returns it. */
export type StoredTrajectory = Omit<TrajectorySummary, "feedback" | "bytes"> & {
  /** The trajectory with its feedback applied: `reward` and `metrics`. */
  trajectory: TrajectoryWire;
  /** Its feedback, oldest first. */
  feedback: FeedbackRecord[];
  metadata: Record<string, unknown> | null;
};

/** Which trajectories `list` returns; every condition must hold. */
export type ListFilter = {
  session?: string;
  /** Last written (or given feedback) at or after this time. */
  since?: Date | number;
  /** Last written (or given feedback) before this time. */
  until?: Date | number;
  eligible?: boolean;
  /** True: only those with a reward from feedback; false: only those without. */
  rewarded?: boolean;
  /** At most this many, newest first. */
  limit?: number;
};

/** The store's size and what its bounds dropped. */
export type StoreStats = {
  trajectories: number;
  /** The bytes of its segment files. */
  bytes: number;
  segments: number;
  /** Trajectories dropped by the size and age bounds since the store was created. */
  dropped: number;
};

const when = (t: Date | number) => (typeof t === "number" ? t : t.getTime());
const iso = (ms: number) => new Date(ms).toISOString();
const entryBytes = (e: Entry) => e.putAt.len + e.feedbackAt.reduce((n, f) => n + f.len, 0);
const pendingBytes = (p: Pending) => p.callAt.len + (p.progressAt?.len ?? 0);

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
export class TrajectoryStore {
  /** The store's directory. */
  readonly dir: string;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly logger: StoreLogger;
  private readonly segments: Segments;
  private readonly release: () => void;
  /** By last write, oldest first (an entry written again moves to the end). */
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Pending>();
  /** Each idempotency key's feedback: its trajectory and index in `feedbackAt`. */
  private readonly keys = new Map<string, { id: string; index: number }>();
  private live = 0;
  private dropped = 0;
  private compacting = false;
  private closed = false;

  private constructor(
    options: TrajectoryStoreOptions,
    segments: Segments,
    release: () => void,
    logger: StoreLogger,
  ) {
    this.dir = options.dir;
    this.maxBytes = options.maxBytes ?? GiB;
    this.maxAgeMs = options.maxAgeMs ?? 30 * DAY;
    this.logger = logger;
    this.segments = segments;
    this.release = release;
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
      store.load(replay);
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
      store.recoverInterrupted(replay);
      if (store.pastBounds()) store.enforceBounds(undefined);
      return store;
    } catch (error) {
      release();
      throw error;
    }
  }

  private load(replay: Replay): void {
    this.dropped = replay.dropped;
    const sorted = [...replay.entries.values()].sort((a, b) => a.updated - b.updated);
    for (const e of sorted) {
      const feedback = [...(replay.feedback.get(e.id)?.values() ?? [])].sort(
        (a, b) => a.record.n - b.record.n,
      );
      e.feedbackAt = feedback.map((f) => f.at);
      const outcome = aggregateFeedback(feedback.map((f) => f.record));
      e.reward = outcome.reward;
      e.eligible = outcome.eligible;
      feedback.forEach((f, index) => {
        if (f.record.idempotency_key) this.keys.set(f.record.idempotency_key, { id: e.id, index });
      });
      this.entries.set(e.id, e);
      this.live += entryBytes(e);
    }
    for (const [id, p] of replay.pending) {
      const progress = replay.progress.get(id);
      if (progress?.call === p.call) p.progressAt = progress.at;
      this.pending.set(id, p);
      this.live += pendingBytes(p);
    }
  }

  private recoverInterrupted(replay: Replay): void {
    let kept = 0;
    for (const [id, p] of [...this.pending]) {
      const entry = this.entries.get(id);
      if (entry && entry.calls >= p.call) {
        this.clearPending(id);
        continue;
      }
      const prior = entry ? this.readRecord<PutRecord>(entry.putAt) : undefined;
      const call = this.readRecord<CallRecord>(p.callAt);
      const progress = p.progressAt ? this.readRecord<ProgressRecord>(p.progressAt) : undefined;
      const record: PutRecord = {
        k: "put",
        id,
        session: prior?.session ?? call.session,
        status: prior?.status ?? "open",
        calls: p.call,
        model: prior?.model ?? call.request.model ?? null,
        ...(prior?.metadata ? { metadata: prior.metadata } : {}),
        interrupted: true,
        created_at: prior?.created_at ?? call.at,
        updated_at: Math.max(prior?.updated_at ?? 0, progress?.at ?? call.at),
        trajectory: keepInterruptedCall(prior?.trajectory, call, progress),
      };
      this.writePut(record);
      kept++;
    }
    if (kept) {
      // A recovered state keeps the time it was cut at: put the order back.
      const sorted = [...this.entries.values()].sort((x, y) => x.updated - y.updated);
      this.entries.clear();
      for (const e of sorted) this.entries.set(e.id, e);
    }
    if (replay.pending.size > 0) this.segments.sync();
    if (kept)
      this.logger.warn(
        `TrajectoryStore: ${kept} call${kept > 1 ? "s were" : " was"} interrupted by the previous process stopping; kept as far as ${kept > 1 ? "they" : "it"} got and marked in ${kept > 1 ? "their trajectories'" : "its trajectory's"} logs (${this.dir}).`,
      );
  }

  private check(method: string): void {
    if (this.closed) throw new StoreClosedError(method, this.dir);
  }

  private write(record: LogRecord): Location {
    return this.segments.append(Buffer.from(`${JSON.stringify(record)}\n`));
  }

  private readRecord<T extends LogRecord>(at: Location): T {
    return JSON.parse(this.segments.read(at).toString("utf8")) as T;
  }

  private clearPending(id: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.live -= pendingBytes(p);
    this.pending.delete(id);
  }

  /** Appends a put record and indexes it. */
  private writePut(record: PutRecord): void {
    const at = this.write(record);
    const prev = this.entries.get(record.id);
    const entry: Entry = {
      id: record.id,
      session: record.session,
      status: record.status,
      calls: record.calls,
      items: record.trajectory.messages_and_choices?.length ?? 0,
      model: record.model,
      created: record.created_at,
      updated: Math.max(record.updated_at, prev?.updated ?? 0),
      putAt: at,
      feedbackAt: prev?.feedbackAt ?? [],
      reward: prev?.reward ?? null,
      eligible: prev?.eligible ?? null,
      interrupted: record.interrupted === true,
    };
    if (prev) this.live -= prev.putAt.len;
    this.live += at.len;
    this.entries.delete(record.id);
    this.entries.set(record.id, entry);
    const p = this.pending.get(record.id);
    if (p && p.call <= record.calls) this.clearPending(record.id);
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
    if (typeof entry?.id !== "string" || entry.id === "" || entry.id.length > 200)
      throw new InvalidArgumentError(
        call,
        "entry.id",
        "a string of 1 to 200 characters",
        entry?.id,
      );
    if (!Number.isInteger(entry.calls) || entry.calls < 0)
      throw new InvalidArgumentError(call, "entry.calls", "an integer of 0 or more", entry.calls);
    if (entry.status !== "open" && entry.status !== "finished")
      throw new InvalidArgumentError(call, "entry.status", '"open" or "finished"', entry.status);
    if (typeof entry.trajectory !== "object" || entry.trajectory === null)
      throw new InvalidArgumentError(
        call,
        "entry.trajectory",
        "a trajectory's JSON",
        entry.trajectory,
      );
    const prev = this.entries.get(entry.id);
    const now = Date.now();
    this.writePut({
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
    this.afterWrite(entry.id);
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
    const skipped = Math.min(entry?.items ?? 0, request.messages.length);
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
    const at = this.write(record);
    this.clearPending(id);
    this.pending.set(id, { call, callAt: at });
    this.live += at.len;
    this.afterWrite(id);
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
    const p = this.pending.get(id);
    if (p?.call !== call) return;
    if (typeof partial?.content !== "string")
      throw new InvalidArgumentError(
        "TrajectoryStore.progressCall",
        "partial.content",
        "a string",
        partial?.content,
      );
    const record: ProgressRecord = {
      k: "progress",
      id,
      call,
      at: Date.now(),
      partial: {
        content: partial.content,
        ...(partial.reasoning ? { reasoning: partial.reasoning } : {}),
        ...(partial.tool_calls?.length ? { tool_calls: partial.tool_calls } : {}),
      },
    };
    const at = this.write(record);
    this.live += at.len - (p.progressAt?.len ?? 0);
    p.progressAt = at;
    this.afterWrite(id);
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
    const prior = key === undefined ? undefined : this.keys.get(key);
    const priorAt = prior && this.entries.get(prior.id)?.feedbackAt[prior.index];
    if (key !== undefined && priorAt) {
      const stored = this.readRecord<FeedbackLogRecord>(priorAt).feedback;
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
    const at = this.write({ k: "feedback", id: entry.id, at: now, feedback });
    const all = [...this.readFeedback(entry), feedback];
    const outcome = aggregateFeedback(all);
    entry.feedbackAt.push(at);
    entry.reward = outcome.reward;
    entry.eligible = outcome.eligible;
    entry.updated = Math.max(entry.updated, now);
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
    this.live += at.len;
    if (key !== undefined) this.keys.set(key, { id: entry.id, index: entry.feedbackAt.length - 1 });
    this.afterWrite(entry.id);
    return { feedback, created: true };
  }

  private readFeedback(entry: Entry): FeedbackRecord[] {
    return entry.feedbackAt.map((at) => this.readRecord<FeedbackLogRecord>(at).feedback);
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
    const record = this.readRecord<PutRecord>(entry.putAt);
    const feedback = this.readFeedback(entry);
    const outcome = aggregateFeedback(feedback);
    const trajectory: TrajectoryWire = {
      ...record.trajectory,
      reward: outcome.reward ?? record.trajectory.reward,
      metrics: { ...record.trajectory.metrics, ...outcome.metrics },
    };
    const { feedback: _count, bytes: _bytes, ...summary } = this.summary(entry);
    return { ...summary, trajectory, feedback, metadata: record.metadata ?? null };
  }

  private summary(e: Entry): TrajectorySummary {
    return {
      id: e.id,
      session: e.session,
      status: e.status,
      created_at: iso(e.created),
      updated_at: iso(e.updated),
      calls: e.calls,
      model: e.model,
      reward: e.reward,
      eligible: e.eligible,
      interrupted: e.interrupted,
      feedback: e.feedbackAt.length,
      bytes: e.putAt.len,
    };
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
    const since = filter.since === undefined ? -Infinity : when(filter.since);
    const until = filter.until === undefined ? Infinity : when(filter.until);
    const limit = filter.limit ?? Infinity;
    const out: TrajectorySummary[] = [];
    const all = [...this.entries.values()];
    for (let i = all.length - 1; i >= 0 && out.length < limit; i--) {
      const e = all[i] as Entry;
      if (e.updated >= until) continue;
      if (e.updated < since) break;
      if (filter.session !== undefined && e.session !== filter.session) continue;
      if (filter.eligible !== undefined && (e.eligible === true) !== filter.eligible) continue;
      if (filter.rewarded !== undefined && (e.reward !== null) !== filter.rewarded) continue;
      out.push(this.summary(e));
    }
    return out;
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
    const out = new Map<string, { session: string; trajectories: string[]; updated_at: string }>();
    const all = [...this.entries.values()];
    for (let i = all.length - 1; i >= 0; i--) {
      const e = all[i] as Entry;
      if (e.session === null) continue;
      const s = out.get(e.session);
      if (s) s.trajectories.push(e.id);
      else
        out.set(e.session, {
          session: e.session,
          trajectories: [e.id],
          updated_at: iso(e.updated),
        });
    }
    return [...out.values()];
  }

  /** How many trajectories, bytes and segments the store holds, and how many its bounds dropped. */
  stats(): StoreStats {
    return {
      trajectories: this.entries.size,
      bytes: this.segments.total,
      segments: this.segments.numbers().length,
      dropped: this.dropped,
    };
  }

  /** Makes every write so far durable on disk (fsync): it then survives a power cut too. */
  flush(): void {
    this.check("flush");
    this.segments.sync();
  }

  /** Flushes, closes the files and releases the lock. Calling it again does nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      this.segments.close();
    } finally {
      this.release();
    }
  }

  private afterWrite(keep: string): void {
    if (this.pastBounds()) this.enforceBounds(keep);
  }

  /** Whether the files pass `maxBytes` or the least recently written trajectory `maxAgeMs`. */
  private pastBounds(): boolean {
    const oldest = this.entries.values().next().value as Entry | undefined;
    const expired = oldest !== undefined && oldest.updated < Date.now() - this.maxAgeMs;
    return expired || this.segments.total > this.maxBytes;
  }

  /**
   * Drops what is past the age bound, then (when the live records alone pass
   * the size bound) the oldest unrewarded trajectories, then the oldest; then
   * compacts the oldest segments until the files fit. Logs every drop.
   */
  private enforceBounds(keep: string | undefined): void {
    if (this.compacting) return;
    this.compacting = true;
    try {
      const before = this.dropped;
      const cutoff = Date.now() - this.maxAgeMs;
      const old: Entry[] = [];
      for (const e of this.entries.values()) {
        if (e.updated >= cutoff) break;
        if (e.id !== keep) old.push(e);
      }
      for (const e of old) this.drop(e, "age");
      if (old.length)
        this.logger.warn(
          `TrajectoryStore: dropped ${old.length} trajector${old.length > 1 ? "ies" : "y"} not written or given feedback for maxAgeMs (${formatMs(this.maxAgeMs)}) from ${this.dir}.`,
        );
      const target = this.maxBytes * LOW_WATER;
      if (this.live > target) this.dropForSize(target, keep);
      if (this.dropped > before) this.write({ k: "meta", dropped: this.dropped });
      if (this.segments.total > target) this.compact(target);
    } finally {
      this.compacting = false;
    }
  }

  private dropForSize(target: number, keep: string | undefined): void {
    let unrewarded = 0;
    let rewarded = 0;
    for (const pass of ["unrewarded", "any"] as const) {
      for (const e of [...this.entries.values()]) {
        if (this.live <= target) break;
        if (e.id === keep || (pass === "unrewarded" && e.reward !== null)) continue;
        if (e.reward === null) unrewarded++;
        else rewarded++;
        this.drop(e, "size");
      }
    }
    const n = unrewarded + rewarded;
    if (n)
      this.logger.warn(
        `TrajectoryStore: dropped ${n} trajector${n > 1 ? "ies" : "y"} (${unrewarded} without a reward, ${rewarded} with one; oldest first) to keep ${this.dir} under maxBytes (${formatBytes(this.maxBytes)}); ${this.dropped} dropped since the store was created.`,
      );
  }

  private drop(e: Entry, reason: "age" | "size"): void {
    this.write({ k: "drop", id: e.id, at: Date.now(), reason });
    this.live -= entryBytes(e);
    this.clearPending(e.id);
    this.entries.delete(e.id);
    for (const at of e.feedbackAt) {
      const key = this.readRecord<FeedbackLogRecord>(at).feedback.idempotency_key;
      if (key !== undefined && this.keys.get(key)?.id === e.id) this.keys.delete(key);
    }
    this.dropped++;
  }

  /**
   * Copies the live records of the oldest segments to the newest and deletes
   * them, until the files fit under `target`. A kill at any point loses
   * nothing: a source is deleted only after its copies are on disk, and a
   * copy read twice is the same record (replay keeps the latest).
   */
  private compact(target: number): void {
    if (this.segments.activeSize > 0) this.segments.roll();
    const first = this.segments.activeSegment;
    const done: number[] = [];
    let freed = 0;
    for (const seg of this.segments.numbers()) {
      if (seg >= first || this.segments.total - freed <= target) break;
      this.copyLive(seg);
      freed += this.segments.sizeOf(seg);
      done.push(seg);
    }
    if (done.length === 0) return;
    if (this.dropped > 0) this.write({ k: "meta", dropped: this.dropped });
    // One flush for all the copies, then the sources go.
    this.segments.sync();
    for (const seg of done) this.segments.remove(seg);
    syncDir(this.dir);
  }

  private copyLive(seg: number): void {
    type Move = { at: Location; set: (at: Location) => void };
    const moves: Move[] = [];
    for (const e of this.entries.values()) {
      if (e.putAt.seg === seg) moves.push({ at: e.putAt, set: (at) => (e.putAt = at) });
      e.feedbackAt.forEach((f, i) => {
        if (f.seg === seg) moves.push({ at: f, set: (at) => (e.feedbackAt[i] = at) });
      });
    }
    for (const p of this.pending.values()) {
      if (p.callAt.seg === seg) moves.push({ at: p.callAt, set: (at) => (p.callAt = at) });
      const progress = p.progressAt;
      if (progress?.seg === seg) moves.push({ at: progress, set: (at) => (p.progressAt = at) });
    }
    // In their order in the file: a call before its progress, feedback in turn.
    moves.sort((a, b) => a.at.off - b.at.off);
    for (const m of moves) m.set(this.segments.append(this.segments.read(m.at)));
  }
}

function formatBytes(n: number): string {
  return n >= GiB
    ? `${+(n / GiB).toFixed(2)} GiB`
    : n >= MiB
      ? `${+(n / MiB).toFixed(2)} MiB`
      : `${n} bytes`;
}

function formatMs(ms: number): string {
  return ms >= DAY ? `${+(ms / DAY).toFixed(2)} days` : `${Math.round(ms / 1000)} s`;
}
