// Calls a stopped process left begun: kept in their trajectories as far as
// they got (a put marked interrupted, a line in its logs), once, by the first
// store opened after the process's lease ran out.
import type { Redis } from "ioredis";
import {
  type CallRecord,
  interruptedRecord,
  type ProgressRecord,
  type PutRecord,
  type StoreLogger,
} from "../../store/index.js";
import type { TrajectoryKeys } from "./trajectory-store-keys.js";

export interface RecoveryInit {
  redis: Redis;
  keys: TrajectoryKeys;
  logger: StoreLogger;
  where: string;
  put(record: PutRecord): Promise<void>;
  state(id: string): Promise<{ record: PutRecord } | undefined>;
}

/** Recovers every begun call whose store's lease is gone; returns how many were kept. */
export async function recoverCalls(init: RecoveryInit): Promise<number> {
  const { redis, keys } = init;
  const begun = await redis.hgetall(keys.begun);
  let kept = 0;
  for (const [id, number] of Object.entries(begun)) {
    const call = await redis.hgetall(keys.call(id));
    if (call.record === undefined) {
      await redis.hdel(keys.begun, id);
      continue;
    }
    if (call.owner && (await redis.exists(keys.owner(call.owner))) === 1) continue;
    // One store recovers it: the one whose claim removed it.
    const claim = await redis
      .multi()
      .hdel(keys.begun, id)
      .hgetall(keys.call(id))
      .del(keys.call(id))
      .exec();
    if (Number(claim?.[0]?.[1]) !== 1) continue;
    const taken = (claim?.[1]?.[1] ?? {}) as Record<string, string>;
    if (taken.record === undefined || taken.call !== number) continue;
    if (await keep(init, id, taken)) kept++;
  }
  if (kept)
    init.logger.warn(
      `RedisTrajectoryStore: ${kept} call${kept > 1 ? "s were" : " was"} interrupted by a process stopping; kept as far as ${kept > 1 ? "they" : "it"} got and marked in ${kept > 1 ? "their trajectories'" : "its trajectory's"} logs (${init.where}).`,
    );
  return kept;
}

async function keep(
  init: RecoveryInit,
  id: string,
  taken: Record<string, string>,
): Promise<boolean> {
  const call = JSON.parse(taken.record as string) as CallRecord;
  const progress = taken.progress ? (JSON.parse(taken.progress) as ProgressRecord) : undefined;
  const prior = (await init.state(id))?.record;
  if (prior && prior.calls >= call.call) return false;
  await init.put(interruptedRecord(id, prior, call, progress));
  return true;
}
