// The store's index in memory: where each trajectory's records lie in the
// segment files, and the writes and reads that keep it in step with them.
import type { FeedbackRecord } from "./feedback.js";
import { applyAppend, lengthsAfter, lengthsOf } from "./reconstruct.js";
import type { AppendRecord, FeedbackLogRecord, Location, LogRecord, PutRecord } from "./records.js";
import type { Entry, Pending } from "./replay.js";
import type { Segments } from "./segments.js";

/** The bytes of a trajectory's live records: its state (put and appends) and feedback. */
export const entryBytes = (e: Entry) => stateBytes(e) + e.feedbackAt.reduce((n, f) => n + f.len, 0);
/** The bytes of a trajectory's state: its put and the appends after it. */
export const stateBytes = (e: Entry) => e.putAt.len + e.appendAt.reduce((n, a) => n + a.len, 0);
export const pendingBytes = (p: Pending) => p.callAt.len + (p.progressAt?.len ?? 0);

export class LogIndex {
  readonly segments: Segments;
  /** By last write, oldest first (an entry written again moves to the end). */
  readonly entries = new Map<string, Entry>();
  readonly pending = new Map<string, Pending>();
  /** Each idempotency key's feedback: its trajectory and index in `feedbackAt`. */
  readonly keys = new Map<string, { id: string; index: number }>();
  /** The bytes of the live records (what compaction would keep). */
  live = 0;
  dropped = 0;

  constructor(segments: Segments) {
    this.segments = segments;
  }

  write(record: LogRecord): Location {
    return this.segments.append(Buffer.from(`${JSON.stringify(record)}\n`));
  }

  readRecord<T extends LogRecord>(at: Location): T {
    return JSON.parse(this.segments.read(at).toString("utf8")) as T;
  }

  /** The entry's full state: its put with its appends applied, as one put record. */
  readState(entry: Entry): PutRecord {
    let state = this.readRecord<PutRecord>(entry.putAt);
    for (const at of entry.appendAt) state = applyAppend(state, this.readRecord<AppendRecord>(at));
    return state;
  }

  readFeedback(entry: Entry): FeedbackRecord[] {
    return entry.feedbackAt.map((at) => this.readRecord<FeedbackLogRecord>(at).feedback);
  }

  /** Makes `entry` the most recently written. */
  touch(entry: Entry): void {
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
  }

  clearPending(id: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.live -= pendingBytes(p);
    this.pending.delete(id);
  }

  /** Appends a put record and indexes it: the state it holds replaces the entry's. */
  writePut(record: PutRecord): Entry {
    const at = this.write(record);
    const prev = this.entries.get(record.id);
    const entry: Entry = {
      id: record.id,
      session: record.session,
      status: record.status,
      calls: record.calls,
      lengths: lengthsOf(record),
      model: record.model,
      created: record.created_at,
      updated: Math.max(record.updated_at, prev?.updated ?? 0),
      putAt: at,
      appendAt: [],
      feedbackAt: prev?.feedbackAt ?? [],
      reward: prev?.reward ?? null,
      eligible: prev?.eligible ?? null,
      interrupted: record.interrupted === true,
    };
    if (prev) this.live -= stateBytes(prev);
    this.live += at.len;
    this.entries.set(record.id, entry);
    this.touch(entry);
    const p = this.pending.get(record.id);
    if (p && p.call <= record.calls) this.clearPending(record.id);
    return entry;
  }

  /** Appends an append record on top of `entry`'s state and indexes it. */
  writeAppend(entry: Entry, record: AppendRecord): void {
    const at = this.write(record);
    entry.appendAt.push(at);
    entry.lengths = lengthsAfter(entry.lengths, record);
    entry.session = record.session;
    entry.calls = record.calls;
    entry.model = record.model;
    entry.updated = Math.max(entry.updated, record.updated_at);
    this.live += at.len;
    this.touch(entry);
    const p = this.pending.get(record.id);
    if (p && p.call <= record.calls) this.clearPending(record.id);
  }
}
