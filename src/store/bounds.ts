// The store's bounds: the age and size limits, the drops they make (logged
// and counted, never silent) and the compaction that rewrites old segments'
// live records at the end of the log, a put and its appends merged into one put.
import { entryBytes, type LogIndex, stateBytes } from "./log-index.js";
import type { FeedbackLogRecord, Location } from "./records.js";
import type { Entry } from "./replay.js";
import { syncDir } from "./segments.js";
import type { StoreLogger } from "./types.js";

export const GiB = 1024 ** 3;
export const MiB = 1024 ** 2;
export const DAY = 86_400_000;
/** After a bound is passed, the store is brought down to this share of it, so it is not redone at every write. */
const LOW_WATER = 0.8;

export class Bounds {
  private compacting = false;

  constructor(
    private readonly index: LogIndex,
    private readonly dir: string,
    private readonly maxBytes: number,
    private readonly maxAgeMs: number,
    private readonly logger: StoreLogger,
  ) {}

  /** Whether the files pass `maxBytes` or the least recently written trajectory `maxAgeMs`. */
  passed(): boolean {
    const oldest = this.index.entries.values().next().value as Entry | undefined;
    const expired = oldest !== undefined && oldest.updated < Date.now() - this.maxAgeMs;
    return expired || this.index.segments.total > this.maxBytes;
  }

  /** After a write to `keep` (never dropped for it): applies the bounds when passed. */
  afterWrite(keep: string | undefined): void {
    if (this.passed()) this.enforce(keep);
  }

  /**
   * Drops what is past the age bound, then (when the live records alone pass
   * the size bound) the oldest unrewarded trajectories, then the oldest; then
   * compacts the oldest segments until the files fit. Logs every drop.
   */
  enforce(keep: string | undefined): void {
    if (this.compacting) return;
    this.compacting = true;
    try {
      const index = this.index;
      const before = index.dropped;
      const cutoff = Date.now() - this.maxAgeMs;
      const old: Entry[] = [];
      for (const e of index.entries.values()) {
        if (e.updated >= cutoff) break;
        if (e.id !== keep) old.push(e);
      }
      for (const e of old) this.drop(e, "age");
      if (old.length)
        this.logger.warn(
          `TrajectoryStore: dropped ${old.length} trajector${old.length > 1 ? "ies" : "y"} not written or given feedback for maxAgeMs (${formatMs(this.maxAgeMs)}) from ${this.dir}.`,
        );
      const target = this.maxBytes * LOW_WATER;
      if (index.live > target) this.dropForSize(target, keep);
      if (index.dropped > before) index.write({ k: "meta", dropped: index.dropped });
      if (index.segments.total > target) this.compact(target);
    } finally {
      this.compacting = false;
    }
  }

  private dropForSize(target: number, keep: string | undefined): void {
    const index = this.index;
    let unrewarded = 0;
    let rewarded = 0;
    for (const pass of ["unrewarded", "any"] as const) {
      for (const e of [...index.entries.values()]) {
        if (index.live <= target) break;
        if (e.id === keep || (pass === "unrewarded" && e.reward !== null)) continue;
        if (e.reward === null) unrewarded++;
        else rewarded++;
        this.drop(e, "size");
      }
    }
    const n = unrewarded + rewarded;
    if (n)
      this.logger.warn(
        `TrajectoryStore: dropped ${n} trajector${n > 1 ? "ies" : "y"} (${unrewarded} without a reward, ${rewarded} with one; oldest first) to keep ${this.dir} under maxBytes (${formatBytes(this.maxBytes)}); ${index.dropped} dropped since the store was created.`,
      );
  }

  private drop(e: Entry, reason: "age" | "size"): void {
    const index = this.index;
    index.write({ k: "drop", id: e.id, at: Date.now(), reason });
    index.live -= entryBytes(e);
    index.clearPending(e.id);
    index.entries.delete(e.id);
    for (const at of e.feedbackAt) {
      const key = index.readRecord<FeedbackLogRecord>(at).feedback.idempotency_key;
      if (key !== undefined && index.keys.get(key)?.id === e.id) index.keys.delete(key);
    }
    index.dropped++;
  }

  /**
   * Copies the live records of the oldest segments to the newest and deletes
   * them, until the files fit under `target`. A kill at any point loses
   * nothing: a source is deleted only after its copies are on disk, and a
   * copy read twice is the same record (replay keeps the latest).
   */
  private compact(target: number): void {
    const segments = this.index.segments;
    if (segments.activeSize > 0) segments.roll();
    const first = segments.activeSegment;
    const done: number[] = [];
    let freed = 0;
    for (const seg of segments.numbers()) {
      if (seg >= first || segments.total - freed <= target) break;
      this.copyLive(seg);
      freed += segments.sizeOf(seg);
      done.push(seg);
    }
    if (done.length === 0) return;
    if (this.index.dropped > 0) this.index.write({ k: "meta", dropped: this.index.dropped });
    // One flush for all the copies, then the sources go.
    segments.sync();
    for (const seg of done) segments.remove(seg);
    syncDir(this.dir);
  }

  private copyLive(seg: number): void {
    const index = this.index;
    type Move = { at: Location; move: () => void };
    const moves: Move[] = [];
    const copy = (at: Location) => index.segments.append(index.segments.read(at));
    for (const e of index.entries.values()) {
      const stateHere = [e.putAt, ...e.appendAt].find((at) => at.seg === seg);
      if (stateHere) moves.push({ at: stateHere, move: () => this.rewriteState(e) });
      e.feedbackAt.forEach((f, i) => {
        if (f.seg === seg) moves.push({ at: f, move: () => (e.feedbackAt[i] = copy(f)) });
      });
    }
    for (const p of index.pending.values()) {
      const { callAt, progressAt } = p;
      if (callAt.seg === seg) moves.push({ at: callAt, move: () => (p.callAt = copy(callAt)) });
      if (progressAt?.seg === seg)
        moves.push({ at: progressAt, move: () => (p.progressAt = copy(progressAt)) });
    }
    // In their order in the file: a call before its progress, feedback in turn.
    moves.sort((a, b) => a.at.off - b.at.off);
    for (const m of moves) m.move();
  }

  /** Writes `e`'s state at the end of the log: its put as it is, or merged with its appends. */
  private rewriteState(e: Entry): void {
    const index = this.index;
    const before = stateBytes(e);
    e.putAt =
      e.appendAt.length === 0
        ? index.segments.append(index.segments.read(e.putAt))
        : index.write(index.readState(e));
    e.appendAt = [];
    index.live += e.putAt.len - before;
  }
}

export function formatBytes(n: number): string {
  return n >= GiB
    ? `${+(n / GiB).toFixed(2)} GiB`
    : n >= MiB
      ? `${+(n / MiB).toFixed(2)} MiB`
      : `${n} bytes`;
}

function formatMs(ms: number): string {
  return ms >= DAY ? `${+(ms / DAY).toFixed(2)} days` : `${Math.round(ms / 1000)} s`;
}
