// The hand-off of collected groups to a user's GroupSink, recorded in Redis
// around the sink's `add`: a group is taken (`handing`) before `add` is
// called and marked `handed` after it resolved. A coordinator that dies in
// between leaves the group in `handing`; the next one cannot know whether the
// sink kept it, so it moves it to `uncertain` (reported, never handed again by
// itself): at most once, and every group either handed or reported.
import type { Redis } from "ioredis";
import type { Cluster } from "./options.js";
import {
  type NoSignalMode,
  noSignalLua,
  STALE,
  type StaleMode,
  staleKeys,
  storeKeys,
} from "./store.js";

// KEYS 1-6: the stale keys; 7: groups, 8: handing, 9: no-signal-new. ARGV 3:
// this coordinator's token, 4: the noSignal mode.
const TAKE = `${noSignalLua(9, 7)}${STALE}
local gid = redis.call('LPOP', KEYS[1])
if not gid then return {'', stale, '', released} end
redis.call('HSET', KEYS[8], gid, ARGV[3])
return {gid, stale, redis.call('HGET', KEYS[7], gid) or '', released}`;

/** Takes the oldest ready group for the sink (dropping or re-running stale ones first). */
export async function takeForHandOff(
  client: Redis,
  cluster: Cluster,
  maxStaleness: number | undefined,
  onStale: StaleMode,
  noSignal: NoSignalMode,
  stepKey: string,
  token: string,
): Promise<{ id?: string; json: string; stale: string[]; noSignal: string[] }> {
  const k = storeKeys(cluster);
  const [id, stale, json, released] = (await client.eval(
    TAKE,
    9,
    ...staleKeys(cluster, stepKey),
    k.groups,
    k.handing,
    k.flat,
    String(maxStaleness ?? -1),
    onStale,
    token,
    noSignal,
  )) as [string, string[], string, string[]];
  return { id: id === "" ? undefined : id, json, stale, noSignal: released };
}

// A group reported uncertain by a coordinator that took over, and then
// confirmed by the one that handed it (it had lost its lock, not died), is
// counted handed after all.
const CONFIRM = `
local done = 0
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  done = 1
elseif redis.call('SREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[3], 'uncertain', -1)
  done = 1
end
if done == 1 then
  redis.call('HSET', KEYS[4], ARGV[1], 'handed')
  redis.call('HINCRBY', KEYS[3], 'handed', 1)
end
return done`;

/** Marks a group as handed once the sink's `add` resolved: its JSON is dropped from Redis. */
export async function confirmHandOff(client: Redis, cluster: Cluster, id: string): Promise<void> {
  const k = storeKeys(cluster);
  await client.eval(CONFIRM, 4, k.handing, k.uncertain, k.stats, k.groups, id);
}

// The sink refused the group (its add rejected): back to the head of `ready`
// for another try, or, with ARGV[2] = 'fail', into `handoff-failed`.
const REFUSED = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] == 'fail' then
  redis.call('RPUSH', KEYS[3], ARGV[1])
  redis.call('HINCRBY', KEYS[4], 'handoff_failed', 1)
else
  redis.call('LPUSH', KEYS[2], ARGV[1])
end
return 1`;

export async function refusedHandOff(
  client: Redis,
  cluster: Cluster,
  id: string,
  final: boolean,
): Promise<void> {
  const k = storeKeys(cluster);
  await client.eval(
    REFUSED,
    4,
    k.handing,
    k.ready,
    k.handOffFailed,
    k.stats,
    id,
    final ? "fail" : "retry",
  );
}

const RECOVER = `
local ids = redis.call('HKEYS', KEYS[1])
for _, gid in ipairs(ids) do redis.call('SADD', KEYS[2], gid) end
if #ids > 0 then
  redis.call('HINCRBY', KEYS[3], 'uncertain', #ids)
  redis.call('DEL', KEYS[1])
end
return ids`;

/** Called by a coordinator that starts: the hand-offs a stopped one left unconfirmed become uncertain. */
export async function recoverHandOffs(client: Redis, cluster: Cluster): Promise<string[]> {
  const k = storeKeys(cluster);
  return (await client.eval(RECOVER, 3, k.handing, k.uncertain, k.stats)) as string[];
}

const AGAIN = `
local moved = {}
for _, gid in ipairs(ARGV) do
  if redis.call('SREM', KEYS[1], gid) == 1 then
    redis.call('HINCRBY', KEYS[4], 'uncertain', -1)
    table.insert(moved, gid)
  elseif redis.call('LREM', KEYS[2], 1, gid) == 1 then
    redis.call('HINCRBY', KEYS[4], 'handoff_failed', -1)
    table.insert(moved, gid)
  elseif redis.call('SREM', KEYS[5], gid) == 1 then
    redis.call('HINCRBY', KEYS[4], 'failed_groups', -1)
    table.insert(moved, gid)
  end
end
for i = #moved, 1, -1 do redis.call('LPUSH', KEYS[3], moved[i]) end
return moved`;

/**
 * Puts uncertain, refused or training-failed groups back at the head of
 * `ready` (the next batch or hand-off takes them); returns those moved.
 */
export async function handAgain(client: Redis, cluster: Cluster, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const k = storeKeys(cluster);
  return (await client.eval(
    AGAIN,
    5,
    k.uncertain,
    k.handOffFailed,
    k.ready,
    k.stats,
    k.trainingFailed,
    ...ids,
  )) as string[];
}

/** Groups set aside: not trained or handed, kept in Redis, each listed once. */
export interface UnhandedGroups {
  /**
   * A coordinator stopped while handing them to the sink, or while the
   * service created their training job: the sink (or the service) may have
   * them. Never sent again on our own.
   */
  uncertain: string[];
  /** Refused by the sink's `add` 3 times. */
  failed: string[];
  /** In a training job the service failed (or refused to create). */
  trainingFailed: string[];
}

/** The groups set aside, for `unhanded()`. */
export async function unhanded(client: Redis, cluster: Cluster): Promise<UnhandedGroups> {
  const k = storeKeys(cluster);
  const [uncertain, failed, trainingFailed] = await Promise.all([
    client.smembers(k.uncertain),
    client.lrange(k.handOffFailed, 0, -1),
    client.smembers(k.trainingFailed),
  ]);
  return { uncertain: uncertain.sort(), failed, trainingFailed: trainingFailed.sort() };
}
