import type { Redis } from "ioredis";
import type { Cluster } from "./options.js";

/** This run's own keys, next to BullMQ's. */
export function storeKeys(cluster: Cluster) {
  return {
    /** group id → the scored group's JSON; once trained, `trained:<batch>` (kept, as the "collected" mark). */
    groups: cluster.key("groups"),
    /** Collected groups waiting for a training batch, oldest first. */
    ready: cluster.key("ready"),
    /** group id → the oldest policy step among its trajectories. */
    versions: cluster.key("versions"),
    /** Groups dropped for being too far behind the policy. */
    stale: cluster.key("stale"),
    /** Groups too far behind whose re-run is being enqueued (`onStale: "rerun"`). */
    rerun: cluster.key("rerun-pending"),
    /** group id → this coordinator's token: taken for the sink, not yet confirmed handed. */
    handing: cluster.key("handing"),
    /** Groups whose hand-off a stopped coordinator left unconfirmed: never handed again by us. */
    uncertain: cluster.key("uncertain"),
    /** Groups the sink refused `maxHandOffAttempts` times. */
    handOffFailed: cluster.key("handoff-failed"),
    /**
     * Counters: collected, exceptions, reward_sum, reward_count, stale, rerun,
     * trained_groups, training_jobs, failed_jobs, handed, uncertain, handoff_failed.
     */
    stats: cluster.key("stats"),
    /** batch number → `{ groups, jobId?, stepBefore?, step?, failed? }`. */
    batches: cluster.key("batches"),
    batchCounter: cluster.key("batch-counter"),
    /** Batches claimed and not yet trained (or failed). */
    open: cluster.key("open-batches"),
    /** Held by the one coordinator that trains. */
    lock: cluster.key("coordinator-lock"),
    /** Collected groups whose rewards are all equal, not yet released or passed on by the coordinator. */
    flat: cluster.key("no-signal-new"),
    /** Groups released for having no reward signal (`noSignal: "skip"`). */
    noSignal: cluster.key("no-signal"),
    /** Groups of a training job that failed (or whose creation the service refused). */
    trainingFailed: cluster.key("training-failed"),
    /** The running coordinator's mode, for `readProgress().idle`: `{ trainEvery }` or `{ sink }`. */
    mode: cluster.key("coordinator-mode"),
    /** Set by `drain()`: train a partial batch once no more groups are coming. */
    drain: cluster.key("drain"),
  };
}

// Storing the group and queueing it for training is one step: a collector
// that dies before it leaves nothing; one that dies after it finds the group
// there when it runs the parent job again, and adds nothing.
const COLLECT = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[4], ARGV[1], ARGV[3]) end
redis.call('HINCRBY', KEYS[3], 'collected', 1)
redis.call('HINCRBYFLOAT', KEYS[3], 'reward_sum', ARGV[4])
redis.call('HINCRBY', KEYS[3], 'reward_count', ARGV[5])
redis.call('HINCRBY', KEYS[3], 'exceptions', ARGV[6])
if ARGV[7] == '0' then redis.call('SADD', KEYS[5], ARGV[1]) end
return 1`;

export interface CollectedGroup {
  id: string;
  json: string;
  /** The oldest policy step among its trajectories, if any recorded one. */
  version: number | undefined;
  rewardSum: number;
  rewards: number;
  exceptions: number;
  /** Whether its rewards differ (`hasRewardSignal`): the coordinator releases those that do not. */
  signal: boolean;
}

/** Stores a scored group once; false when it was already stored. */
export async function storeGroup(
  client: Redis,
  cluster: Cluster,
  g: CollectedGroup,
): Promise<boolean> {
  const k = storeKeys(cluster);
  const added = await client.eval(
    COLLECT,
    5,
    k.groups,
    k.ready,
    k.stats,
    k.versions,
    k.flat,
    g.id,
    g.json,
    g.version === undefined ? "" : String(g.version),
    String(g.rewardSum),
    String(g.rewards),
    String(g.exceptions),
    g.signal ? "1" : "0",
  );
  return Number(added) === 1;
}

// Takes groups too far behind the policy off `ready` (when a limit is set):
// dropped into `stale`, or queued in `rerun-pending` for their re-run. KEYS:
// ready, versions, stale, stats, step, rerun-pending; ARGV: maxStaleness, mode.
export const STALE = `
local maxs = tonumber(ARGV[1])
local step = tonumber(redis.call('GET', KEYS[5]) or '0')
local stale = {}
if maxs >= 0 then
  for _, gid in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    local v = redis.call('HGET', KEYS[2], gid)
    if v and step - tonumber(v) > maxs then
      redis.call('LREM', KEYS[1], 1, gid)
      if ARGV[2] == 'rerun' then
        redis.call('RPUSH', KEYS[6], gid)
      else
        redis.call('RPUSH', KEYS[3], gid)
      end
      table.insert(stale, gid)
    end
  end
  if #stale > 0 and ARGV[2] ~= 'rerun' then redis.call('HINCRBY', KEYS[4], 'stale', #stale) end
end
`;

// Groups whose rewards are all equal teach nothing: with `noSignal: "skip"`
// (ARGV[4]) the coordinator takes them off `ready`, replaces their JSON with
// the mark `nosignal` and counts them; with "send" they stay in line.
export const noSignalLua = (flatKey: number, groupsKey: number) => `
local released = {}
local flat = redis.call('SMEMBERS', KEYS[${flatKey}])
if #flat > 0 then
  redis.call('DEL', KEYS[${flatKey}])
  if ARGV[4] == 'skip' then
    for _, gid in ipairs(flat) do
      if redis.call('LREM', KEYS[1], 1, gid) == 1 then
        redis.call('HSET', KEYS[${groupsKey}], gid, 'nosignal')
        table.insert(released, gid)
      end
    end
    if #released > 0 then redis.call('HINCRBY', KEYS[4], 'nosignal', #released) end
  end
end
`;

// Then takes the oldest n groups into a new batch, all in one step, so that a
// group is in at most one batch whatever dies when. KEYS 7-11: batches,
// batch-counter, open-batches, no-signal-new, groups; ARGV[3]: n, ARGV[5]:
// '1' to take fewer than n (draining).
const CLAIM = `${noSignalLua(10, 11)}${STALE}
local n = tonumber(ARGV[3])
local len = redis.call('LLEN', KEYS[1])
if len == 0 or (len < n and ARGV[5] ~= '1') then return {0, stale, {}, released} end
if len < n then n = len end
local ids = redis.call('LRANGE', KEYS[1], 0, n - 1)
redis.call('LTRIM', KEYS[1], n, -1)
local b = redis.call('INCR', KEYS[8])
redis.call('HSET', KEYS[7], b, cjson.encode({groups = ids}))
redis.call('SADD', KEYS[9], b)
return {b, stale, ids, released}`;

export type StaleMode = "drop" | "rerun";
export type NoSignalMode = "skip" | "send";

export function staleKeys(cluster: Cluster, stepKey: string): string[] {
  const k = storeKeys(cluster);
  return [k.ready, k.versions, k.stale, k.stats, stepKey, k.rerun];
}

export interface BatchRecord {
  groups: string[];
  /** Set before the job is created: a record with it and no `jobId` may have a job on the service. */
  creating?: boolean;
  jobId?: string;
  stepBefore?: number;
  step?: number;
  failed?: string;
  /** The job's creation got no answer: the groups are reported, not trained again. */
  uncertain?: string;
}

export interface Claim {
  batch?: number;
  groups: string[];
  stale: string[];
  /** Released for having no reward signal. */
  noSignal: string[];
}

export async function claimBatch(
  client: Redis,
  cluster: Cluster,
  n: number,
  options: {
    maxStaleness: number | undefined;
    onStale: StaleMode;
    noSignal: NoSignalMode;
    partial: boolean;
  },
  stepKey: string,
): Promise<Claim> {
  const k = storeKeys(cluster);
  const [batch, stale, groups, noSignal] = (await client.eval(
    CLAIM,
    11,
    ...staleKeys(cluster, stepKey),
    k.batches,
    k.batchCounter,
    k.open,
    k.flat,
    k.groups,
    String(options.maxStaleness ?? -1),
    options.onStale,
    String(n),
    options.noSignal,
    options.partial ? "1" : "0",
  )) as [number, string[], string[], string[]];
  return { batch: batch === 0 ? undefined : batch, groups, stale, noSignal };
}

// Closing a batch: its record, its counters, the groups' JSON replaced by a
// mark (they stay "collected", so a late collector adds nothing), and the new
// step published, in one step.
const FINISH = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SREM', KEYS[2], ARGV[1])
if ARGV[4] == 'trained' then
  redis.call('HINCRBY', KEYS[3], 'trained_groups', #ARGV - 4)
  redis.call('HINCRBY', KEYS[3], 'training_jobs', 1)
  for i = 5, #ARGV do redis.call('HSET', KEYS[4], ARGV[i], 'trained:' .. ARGV[1]) end
  local cur = tonumber(redis.call('GET', KEYS[5]) or '-1')
  if tonumber(ARGV[3]) > cur then
    redis.call('SET', KEYS[5], ARGV[3])
    redis.call('PUBLISH', KEYS[6], ARGV[3])
  end
else
  redis.call('HINCRBY', KEYS[3], 'failed_jobs', 1)
  redis.call('HINCRBY', KEYS[3], 'failed_groups', #ARGV - 4)
  for i = 5, #ARGV do redis.call('SADD', KEYS[7], ARGV[i]) end
end
return 1`;

export async function finishBatch(
  client: Redis,
  cluster: Cluster,
  batch: number,
  record: BatchRecord,
  policy: { step: string; channel: string },
): Promise<void> {
  const k = storeKeys(cluster);
  await client.eval(
    FINISH,
    7,
    k.batches,
    k.open,
    k.stats,
    k.groups,
    policy.step,
    policy.channel,
    k.trainingFailed,
    String(batch),
    JSON.stringify(record),
    String(record.step ?? -1),
    record.failed === undefined ? "trained" : "failed",
    ...record.groups,
  );
}

// A batch whose job may exist on the service without its id saved: closed,
// its groups reported as uncertain (kept, never trained again on our own).
const UNCERTAIN = `
if redis.call('SREM', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
for i = 3, #ARGV do redis.call('SADD', KEYS[3], ARGV[i]) end
redis.call('HINCRBY', KEYS[4], 'uncertain', #ARGV - 2)
return 1`;

export async function uncertainBatch(
  client: Redis,
  cluster: Cluster,
  batch: number,
  record: BatchRecord,
): Promise<void> {
  const k = storeKeys(cluster);
  await client.eval(
    UNCERTAIN,
    4,
    k.batches,
    k.open,
    k.uncertain,
    k.stats,
    String(batch),
    JSON.stringify(record),
    ...record.groups,
  );
}

export async function saveBatch(
  client: Redis,
  cluster: Cluster,
  batch: number,
  record: BatchRecord,
): Promise<void> {
  await client.hset(storeKeys(cluster).batches, String(batch), JSON.stringify(record));
}

export async function openBatches(
  client: Redis,
  cluster: Cluster,
): Promise<{ batch: number; record: BatchRecord }[]> {
  const k = storeKeys(cluster);
  const ids = (await client.smembers(k.open)).map(Number).sort((a, b) => a - b);
  if (ids.length === 0) return [];
  const raw = await client.hmget(k.batches, ...ids.map(String));
  const out: { batch: number; record: BatchRecord }[] = [];
  ids.forEach((batch, i) => {
    const json = raw[i];
    if (json) out.push({ batch, record: JSON.parse(json) as BatchRecord });
  });
  return out;
}
