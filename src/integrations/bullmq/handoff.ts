// The hand-off of collected groups to a user's GroupSink, recorded in Redis
// around the sink's `add`: a group is taken (`handing`) before `add` is
// called and marked `handed` after it resolved. A coordinator that dies in
// between leaves the group in `handing`; the next one cannot know whether the
// sink kept it, so it moves it to `uncertain` (reported, never handed again by
// itself): at most once, and every group either handed or reported.
import type { Redis } from "ioredis";
import type { NoSignalPolicy } from "../../training/index.js";
import { LUA, runScript } from "./lua/index.js";
import type { Cluster } from "./options.js";
import { type StaleMode, staleKeys, storeKeys } from "./store.js";

/** Takes the oldest ready group for the sink (dropping or re-running stale ones first). */
export async function takeForHandOff(
  client: Redis,
  cluster: Cluster,
  maxStaleness: number | undefined,
  onStale: StaleMode,
  noSignal: NoSignalPolicy,
  stepKey: string,
  token: string,
): Promise<{ id?: string; entry: string; stale: string[]; noSignal: string[] }> {
  const k = storeKeys(cluster);
  const [id, stale, entry, released] = (await runScript(
    client,
    LUA.handoffTake,
    [...staleKeys(cluster, stepKey), k.groups, k.handing, k.flat, k.release],
    [maxStaleness ?? -1, onStale, token, noSignal],
  )) as [string, string[], string, string[]];
  return { id: id === "" ? undefined : id, entry, stale, noSignal: released };
}

/** Marks a group as handed once the sink's `add` resolved: its record goes to `release`. */
export async function confirmHandOff(client: Redis, cluster: Cluster, id: string): Promise<void> {
  const k = storeKeys(cluster);
  await runScript(
    client,
    LUA.handoffConfirm,
    [k.handing, k.uncertain, k.stats, k.groups, k.release],
    [id],
  );
}

// The sink refused the group (its add rejected): back to the head of `ready`
// for another try, or into `handoff-failed`.
export async function refusedHandOff(
  client: Redis,
  cluster: Cluster,
  id: string,
  final: boolean,
): Promise<void> {
  const k = storeKeys(cluster);
  await runScript(
    client,
    LUA.handoffRefused,
    [k.handing, k.ready, k.handOffFailed, k.stats],
    [id, final ? "fail" : "retry"],
  );
}

/** Called by a coordinator that starts: the hand-offs a stopped one left unconfirmed become uncertain. */
export async function recoverHandOffs(client: Redis, cluster: Cluster): Promise<string[]> {
  const k = storeKeys(cluster);
  return (await runScript(client, LUA.handoffRecover, [
    k.handing,
    k.uncertain,
    k.stats,
  ])) as string[];
}

/**
 * Puts uncertain, refused or training-failed groups back at the head of
 * `ready` (the next batch or hand-off takes them); returns those moved.
 */
export async function handAgain(client: Redis, cluster: Cluster, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const k = storeKeys(cluster);
  return (await runScript(
    client,
    LUA.handoffAgain,
    [k.uncertain, k.handOffFailed, k.ready, k.stats, k.trainingFailed],
    ids,
  )) as string[];
}

/** Groups set aside: not trained or handed, kept (records in Redis, trajectories in the payload store), each listed once. */
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
