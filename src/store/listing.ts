// What `list` and `sessions` read: the index alone, newest first, no file read.
import { stateBytes } from "./log-index.js";
import type { Entry } from "./replay.js";
import type { ListFilter, TrajectorySummary } from "./types.js";

const when = (t: Date | number) => (typeof t === "number" ? t : t.getTime());
const iso = (ms: number) => new Date(ms).toISOString();

/** An entry as `list` shows it. */
export function summarize(e: Entry): TrajectorySummary {
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
    bytes: stateBytes(e),
  };
}

/** The summaries of the entries that match `filter`, the most recently written first. */
export function listEntries(entries: Map<string, Entry>, filter: ListFilter): TrajectorySummary[] {
  const since = filter.since === undefined ? -Infinity : when(filter.since);
  const until = filter.until === undefined ? Infinity : when(filter.until);
  const limit = filter.limit ?? Infinity;
  const out: TrajectorySummary[] = [];
  const all = [...entries.values()];
  for (let i = all.length - 1; i >= 0 && out.length < limit; i--) {
    const e = all[i] as Entry;
    if (e.updated >= until) continue;
    if (e.updated < since) break;
    if (filter.session !== undefined && e.session !== filter.session) continue;
    if (filter.eligible !== undefined && (e.eligible === true) !== filter.eligible) continue;
    if (filter.rewarded !== undefined && (e.reward !== null) !== filter.rewarded) continue;
    out.push(summarize(e));
  }
  return out;
}

/** The entries' sessions, the most recently written first, each with its ids (newest first). */
export function listSessions(
  entries: Map<string, Entry>,
): { session: string; trajectories: string[]; updated_at: string }[] {
  const out = new Map<string, { session: string; trajectories: string[]; updated_at: string }>();
  const all = [...entries.values()];
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
