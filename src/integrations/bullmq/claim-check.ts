// Claim checks: a rollout's job result is a reference to its trajectory in a
// PayloadStore plus a few numbers, never the trajectory itself, so BullMQ's
// job hashes, the parent's `:processed` hash and the events stream stay small
// whatever the trajectory's size.
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { INFRA_FAILURE_KEY } from "../../trajectory/index.js";
import type { Cluster } from "./options.js";
import { type PayloadStore, RedisPayloadStore } from "./payload-store.js";

/** What a RolloutWorker returns as a rollout's job result. */
export interface RolloutRef {
  /** Where the trajectory's wire JSON is, and its size in bytes (UTF-8). */
  payload: { key: string; bytes: number };
  reward: number;
  initial_policy_version: number | null;
  final_policy_version: number | null;
  /**
   * The trajectory's `metadata.infra_failure`, when it is marked as an
   * infrastructure failure: the collector tells a group without reward
   * signal from the references alone, without reading the trajectories.
   */
  infra_failure?: string | boolean;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export function isRolloutRef(value: unknown): value is RolloutRef {
  return (
    isMap(value) &&
    isMap(value.payload) &&
    typeof value.payload.key === "string" &&
    typeof value.payload.bytes === "number" &&
    !("messages_and_choices" in value)
  );
}

/** The store a component uses: the caller's, else Redis keys next to the run's own. */
export function payloadStoreOf(
  given: PayloadStore | undefined,
  client: Redis,
  cluster: Cluster,
  ttlMs?: number,
): PayloadStore {
  return given ?? new RedisPayloadStore(client, { prefix: cluster.key("payload:"), ttlMs });
}

/**
 * Writes the trajectory's JSON once and returns the reference. Each attempt
 * gets its own key: a worker that lost its lock and finishes late never
 * overwrites the payload of the attempt that completed.
 */
export async function checkIn(
  store: PayloadStore,
  jobId: string,
  trajectory: {
    reward: number;
    initial_policy_version?: number | null;
    final_policy_version?: number | null;
    metadata?: Record<string, unknown>;
  },
): Promise<RolloutRef> {
  const body = JSON.stringify(trajectory);
  const key = `${jobId}.${randomUUID().slice(0, 13)}`;
  await store.put(key, body);
  const infra = trajectory.metadata?.[INFRA_FAILURE_KEY];
  return {
    payload: { key, bytes: Buffer.byteLength(body, "utf8") },
    reward: trajectory.reward,
    initial_policy_version: trajectory.initial_policy_version ?? null,
    final_policy_version: trajectory.final_policy_version ?? null,
    ...(typeof infra === "string" || typeof infra === "boolean" ? { infra_failure: infra } : {}),
  };
}
