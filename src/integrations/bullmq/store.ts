import type { Redis } from "ioredis";
import type { NoSignalPolicy } from "../../training/index.js";
import { LUA, runScript } from "./lua/index.js";
import type { Cluster } from "./options.js";

/** This run's own keys, next to BullMQ's. */
export function storeKeys(cluster: Cluster) {
  return {
    /**
     * group id → a record of where the scored group's trajectories are in the
     * payload store (group-record.ts; older versions wrote the group's JSON);
     * once trained, `trained:<batch>` (kept for `retentionMs`, as the "collected" mark).
     */
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
    /** `<group id>\n<its record>` of groups just finished: their payloads are to be deleted. */
    release: cluster.key("release"),
    /** group id → when its mark expires (ms since the epoch). */
    expiringGroups: cluster.key("expiring-groups"),
    /** batch number → when its finished record expires. */
    expiringBatches: cluster.key("expiring-batches"),
  };
}

export interface CollectedGroup {
  id: string;
  /** Its record (group-record.ts). */
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
  // Storing the group and queueing it for training is one step (see the script).
  const added = await runScript(
    client,
    LUA.groupStore,
    [k.groups, k.ready, k.stats, k.versions, k.flat, k.stale, k.expiringGroups],
    [
      g.id,
      g.json,
      g.version === undefined ? "" : String(g.version),
      String(g.rewardSum),
      String(g.rewards),
      String(g.exceptions),
      g.signal ? "1" : "0",
    ],
  );
  return Number(added) === 1;
}

/**
 * What the coordinator does with a group whose rollouts ran on a policy too
 * old to train on (`onStale`): drop it, or enqueue its rollouts again.
 */
export type StaleMode = "drop" | "rerun";

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
  /** Groups taken out before training: their trajectories were gone from the payload store. */
  lost?: string[];
}

export interface Claim {
  batch?: number;
  groups: string[];
  stale: string[];
  /** Released for having no reward signal. */
  noSignal: string[];
  /** Their entries (records, or an older version's JSON), read as they were released (for the step's log). */
  noSignalJson: string[];
}

export async function claimBatch(
  client: Redis,
  cluster: Cluster,
  n: number,
  options: {
    maxStaleness: number | undefined;
    onStale: StaleMode;
    noSignal: NoSignalPolicy;
    partial: boolean;
  },
  stepKey: string,
): Promise<Claim> {
  const k = storeKeys(cluster);
  const [batch, stale, groups, noSignal, noSignalJson] = (await runScript(
    client,
    LUA.batchClaim,
    [
      ...staleKeys(cluster, stepKey),
      k.batches,
      k.batchCounter,
      k.open,
      k.flat,
      k.groups,
      k.release,
      k.expiringBatches,
    ],
    [options.maxStaleness ?? -1, options.onStale, n, options.noSignal, options.partial ? "1" : "0"],
  )) as [number, string[], string[], string[], string[]];
  return { batch: batch === 0 ? undefined : batch, groups, stale, noSignal, noSignalJson };
}

export async function finishBatch(
  client: Redis,
  cluster: Cluster,
  batch: number,
  record: BatchRecord,
  policy: { step: string; channel: string },
  retentionMs: number,
): Promise<void> {
  const k = storeKeys(cluster);
  const outcome =
    record.failed !== undefined ? "failed" : record.groups.length === 0 ? "empty" : "trained";
  // Closing a batch (record, counters, marks, the new step) is one step.
  await runScript(
    client,
    LUA.batchFinish,
    [
      k.batches,
      k.open,
      k.stats,
      k.groups,
      policy.step,
      policy.channel,
      k.trainingFailed,
      k.release,
      k.expiringBatches,
    ],
    [
      batch,
      JSON.stringify(record),
      record.step ?? -1,
      outcome,
      Date.now() + retentionMs,
      ...record.groups,
    ],
  );
}

export async function uncertainBatch(
  client: Redis,
  cluster: Cluster,
  batch: number,
  record: BatchRecord,
): Promise<void> {
  const k = storeKeys(cluster);
  await runScript(
    client,
    LUA.batchUncertain,
    [k.batches, k.open, k.uncertain, k.stats],
    [batch, JSON.stringify(record), ...record.groups],
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
