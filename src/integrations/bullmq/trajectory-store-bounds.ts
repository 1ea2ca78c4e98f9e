// The Redis trajectory store's bounds: past the age bound, trajectories are
// dropped; past the size bound, the oldest unrewarded first, then the oldest.
// Every drop is counted (the meta hash's `dropped`) and logged.
import type { Redis } from "ioredis";
import type { StoreLogger } from "../../store/index.js";
import type { TrajectoryKeys } from "./trajectory-store-keys.js";

/** After a bound is passed, the store is brought down to this share of it, so it is not redone at every write. */
const LOW_WATER = 0.8;
const BATCH = 200;

export interface BoundsInit {
  redis: Redis;
  keys: TrajectoryKeys;
  maxBytes: number;
  maxAgeMs: number;
  /** The trajectory just written: never dropped for it. */
  keep: string | undefined;
  logger: StoreLogger;
  where: string;
  /** Drops one trajectory; false when it was already gone. */
  drop(id: string): Promise<boolean>;
}

export async function enforceBounds(init: BoundsInit): Promise<void> {
  const { redis, keys, maxAgeMs } = init;
  const cutoff = Date.now() - maxAgeMs;
  const old = (await redis.zrangebyscore(keys.order, "-inf", `(${cutoff}`)).filter(
    (id) => id !== init.keep,
  );
  let aged = 0;
  for (const id of old) if (await init.drop(id)) aged++;
  if (aged)
    init.logger.warn(
      `RedisTrajectoryStore: dropped ${aged} trajector${aged > 1 ? "ies" : "y"} not written or given feedback for maxAgeMs (${maxAgeMs} ms) from ${init.where}.`,
    );
  if ((await bytes(init)) <= init.maxBytes) return;
  const target = init.maxBytes * LOW_WATER;
  const unrewarded = await dropOldest(init, target, true);
  const any = await dropOldest(init, target, false);
  const total = unrewarded + any;
  if (total)
    init.logger.warn(
      `RedisTrajectoryStore: dropped ${total} trajector${total > 1 ? "ies" : "y"} (${unrewarded} unrewarded, then ${any} of the oldest) to keep within maxBytes (${init.maxBytes} bytes) in ${init.where}.`,
    );
}

async function bytes(init: BoundsInit): Promise<number> {
  return Number((await init.redis.hget(init.keys.meta, "bytes")) ?? 0);
}

/** Drops the oldest trajectories (only unrewarded ones when asked) until the store holds `target` bytes. */
async function dropOldest(
  init: BoundsInit,
  target: number,
  unrewardedOnly: boolean,
): Promise<number> {
  let dropped = 0;
  let offset = 0;
  while ((await bytes(init)) > target) {
    const ids = await init.redis.zrange(
      init.keys.order,
      String(offset),
      String(offset + BATCH - 1),
    );
    if (ids.length === 0) break;
    const pipe = init.redis.pipeline();
    for (const id of ids) pipe.hget(init.keys.trajectory(id), "reward");
    const rewards = ((await pipe.exec()) ?? []).map((r) => r?.[1] as string | null);
    let kept = 0;
    for (const [i, id] of ids.entries()) {
      const rewarded = Boolean(rewards[i]);
      if (id === init.keep || (unrewardedOnly && rewarded)) {
        kept++;
        continue;
      }
      if (await init.drop(id)) dropped++;
      if ((await bytes(init)) <= target) return dropped;
    }
    offset += kept;
  }
  return dropped;
}
