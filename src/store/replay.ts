// Replaying the log: the state its records add up to, before the store
// indexes it. Every kind of record may be read twice (a compaction killed
// before it deleted its source); the latest wins, feedback is kept once by id.
import type { FeedbackRecord } from "./feedback.js";
import { continues, type Lengths, lengthsAfter, lengthsOf } from "./reconstruct.js";
import type { Location, LogRecord } from "./records.js";

/** A stored trajectory in the index: small fields and where its records lie. */
export type Entry = {
  id: string;
  session: string | null;
  status: "open" | "finished";
  calls: number;
  /** How many items its histories hold (what an append must continue). */
  lengths: Lengths;
  model: string | null;
  created: number;
  updated: number;
  putAt: Location;
  /** The appends written since the put, in order. */
  appendAt: Location[];
  feedbackAt: Location[];
  reward: number | null;
  eligible: boolean | null;
  interrupted: boolean;
};

/** A call begun and not yet covered by a put. */
export type Pending = { call: number; callAt: Location; progressAt?: Location };

/** The state replay builds from the log, before the store indexes it. */
export class Replay {
  readonly entries = new Map<string, Entry>();
  readonly feedback = new Map<
    string,
    Map<string, { at: Location; time: number; record: FeedbackRecord }>
  >();
  readonly pending = new Map<string, Pending>();
  readonly progress = new Map<string, { call: number; at: Location }>();
  dropped = 0;

  apply(r: LogRecord, at: Location): void {
    switch (r.k) {
      case "put": {
        const prev = this.entries.get(r.id);
        this.entries.set(r.id, {
          id: r.id,
          session: r.session,
          status: r.status,
          calls: r.calls,
          lengths: lengthsOf(r),
          model: r.model,
          created: r.created_at,
          updated: Math.max(r.updated_at, prev?.updated ?? 0),
          putAt: at,
          appendAt: [],
          feedbackAt: [],
          reward: null,
          eligible: null,
          interrupted: r.interrupted === true || prev?.interrupted === true,
        });
        const p = this.pending.get(r.id);
        if (p && p.call <= r.calls) this.pending.delete(r.id);
        return;
      }
      case "append": {
        // One written on top of another state (a put that came after it,
        // copied by a compaction) is not part of the latest state.
        const entry = this.entries.get(r.id);
        if (entry?.status !== "open" || !continues(entry.lengths, r.from)) return;
        entry.appendAt.push(at);
        entry.lengths = lengthsAfter(entry.lengths, r);
        entry.session = r.session;
        entry.calls = r.calls;
        entry.model = r.model;
        entry.updated = Math.max(entry.updated, r.updated_at);
        const p = this.pending.get(r.id);
        if (p && p.call <= r.calls) this.pending.delete(r.id);
        return;
      }
      case "feedback": {
        // Kept even before its trajectory's put: a compaction may copy a
        // feedback ahead of the put it merged; a drop clears both.
        const map = this.feedback.get(r.id) ?? new Map();
        this.feedback.set(r.id, map);
        if (!map.has(r.feedback.feedback_id))
          map.set(r.feedback.feedback_id, { at, time: r.at, record: r.feedback });
        return;
      }
      case "call": {
        const p = this.pending.get(r.id);
        const covered = (this.entries.get(r.id)?.calls ?? 0) >= r.call;
        if (!covered && (!p || p.call <= r.call))
          this.pending.set(r.id, { call: r.call, callAt: at });
        return;
      }
      case "progress": {
        const prior = this.progress.get(r.id);
        if (!prior || prior.call <= r.call) this.progress.set(r.id, { call: r.call, at });
        return;
      }
      case "drop":
        this.entries.delete(r.id);
        this.feedback.delete(r.id);
        this.pending.delete(r.id);
        this.progress.delete(r.id);
        return;
      case "meta":
        this.dropped = Math.max(this.dropped, r.dropped);
        return;
    }
  }
}
