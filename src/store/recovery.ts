// Opening a store: the index built from the replayed log, then every call a
// stopped process left begun kept as far as it got (a put marked interrupted).
import { aggregateFeedback } from "./feedback.js";
import { interruptedRecord } from "./interrupted.js";
import { entryBytes, type LogIndex, pendingBytes } from "./log-index.js";
import type { CallRecord, ProgressRecord } from "./records.js";
import type { Entry, Replay } from "./replay.js";
import type { StoreLogger } from "./types.js";

export function loadReplay(index: LogIndex, replay: Replay): void {
  index.dropped = replay.dropped;
  const feedbackOf = (e: Entry) =>
    [...(replay.feedback.get(e.id)?.values() ?? [])].sort((x, y) => x.record.n - y.record.n);
  for (const e of replay.entries.values())
    for (const f of feedbackOf(e)) e.updated = Math.max(e.updated, f.time);
  const sorted = [...replay.entries.values()].sort((a, b) => a.updated - b.updated);
  for (const e of sorted) {
    const feedback = feedbackOf(e);
    e.feedbackAt = feedback.map((f) => f.at);
    const outcome = aggregateFeedback(feedback.map((f) => f.record));
    e.reward = outcome.reward;
    e.eligible = outcome.eligible;
    feedback.forEach((f, i) => {
      if (f.record.idempotency_key)
        index.keys.set(f.record.idempotency_key, { id: e.id, index: i });
    });
    index.entries.set(e.id, e);
    index.live += entryBytes(e);
  }
  for (const [id, p] of replay.pending) {
    const progress = replay.progress.get(id);
    if (progress?.call === p.call) p.progressAt = progress.at;
    index.pending.set(id, p);
    index.live += pendingBytes(p);
  }
}

export function recoverInterrupted(
  index: LogIndex,
  replay: Replay,
  logger: StoreLogger,
  dir: string,
): void {
  let kept = 0;
  for (const [id, p] of [...index.pending]) {
    const entry = index.entries.get(id);
    if (entry && entry.calls >= p.call) {
      index.clearPending(id);
      continue;
    }
    const prior = entry ? index.readState(entry) : undefined;
    const call = index.readRecord<CallRecord>(p.callAt);
    const progress = p.progressAt ? index.readRecord<ProgressRecord>(p.progressAt) : undefined;
    const record = interruptedRecord(id, prior, call, progress);
    index.writePut(record);
    kept++;
  }
  if (kept) {
    // A recovered state keeps the time it was cut at: put the order back.
    const sorted = [...index.entries.values()].sort((x, y) => x.updated - y.updated);
    index.entries.clear();
    for (const e of sorted) index.entries.set(e.id, e);
  }
  if (replay.pending.size > 0) index.segments.sync();
  if (kept)
    logger.warn(
      `TrajectoryStore: ${kept} call${kept > 1 ? "s were" : " was"} interrupted by the previous process stopping; kept as far as ${kept > 1 ? "they" : "it"} got and marked in ${kept > 1 ? "their trajectories'" : "its trajectory's"} logs (${dir}).`,
    );
}
