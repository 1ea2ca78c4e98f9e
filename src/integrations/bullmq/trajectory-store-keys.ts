// Where the Redis trajectory store keeps what, under its prefix, and the
// summary a trajectory's hash gives `list`.
import type { TrajectorySummary } from "../../store/index.js";

/** The default key prefix of a `RedisTrajectoryStore`. */
export const DEFAULT_STORE_PREFIX = "trajectory-recorder:store";

/** The store's keys. A Redis Cluster needs a hash tag in the prefix (`{trs}`): the scripts touch several. */
export function trajectoryKeys(prefix: string) {
  return {
    /** id -> hash: the state's JSON, its lengths, session, status, calls, reward, bytes ... */
    trajectory: (id: string) => `${prefix}:t:${id}`,
    /** id -> list of appends' JSON, written after the state, applied in order on read. */
    appends: (id: string) => `${prefix}:a:${id}`,
    /** id -> list of feedback records' JSON, oldest first. */
    feedback: (id: string) => `${prefix}:f:${id}`,
    /** id -> hash of the call begun and not yet covered by a write: its request, owner, progress. */
    call: (id: string) => `${prefix}:c:${id}`,
    /** Sorted set: id by its last write or feedback (ms). */
    order: `${prefix}:order`,
    /** Hash: `bytes` held, `dropped` by the bounds, the feedback URLs' `secret`. */
    meta: `${prefix}:meta`,
    /** Hash: idempotency key -> `{ id, n }` of the feedback it stored. */
    idempotency: `${prefix}:idempotency`,
    /** Hash: id -> the number of its call begun and not yet covered by a write. */
    begun: `${prefix}:begun`,
    /** A store that is open and may have calls in flight: its lease. */
    owner: (owner: string) => `${prefix}:owner:${owner}`,
  };
}
export type TrajectoryKeys = ReturnType<typeof trajectoryKeys>;

/** The hash fields `list` reads, in this order. */
export const SUMMARY_FIELDS = [
  "session",
  "status",
  "created",
  "updated",
  "calls",
  "model",
  "reward",
  "eligible",
  "interrupted",
  "nfb",
  "bytes",
] as const;

const iso = (ms: number) => new Date(ms).toISOString();

/** A trajectory's summary from its hash's `SUMMARY_FIELDS` (undefined when it is gone). */
export function summaryOf(id: string, v: (string | null)[]): TrajectorySummary | undefined {
  const [
    session,
    status,
    created,
    updated,
    calls,
    model,
    reward,
    eligible,
    interrupted,
    nfb,
    bytes,
  ] = v;
  if (status === null || status === undefined) return undefined;
  return {
    id,
    session: session ? session : null,
    status: status === "finished" ? "finished" : "open",
    created_at: iso(Number(created)),
    updated_at: iso(Number(updated)),
    calls: Number(calls ?? 0),
    model: model ? model : null,
    reward: reward ? Number(reward) : null,
    eligible: eligible === "1" ? true : eligible === "0" ? false : null,
    interrupted: interrupted === "1",
    feedback: Number(nfb ?? 0),
    bytes: Number(bytes ?? 0),
  };
}
