import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { LUA, runScript } from "./lua/index.js";
import { type Cluster, type ClusterOptions, parseRolloutJobId, resolveCluster } from "./options.js";
import { policyKeys } from "./policy.js";
import { assertReachable, bounded, queueOptions } from "./redis.js";
import type { BatchRecord } from "./store.js";
import { storeKeys } from "./store.js";

/**
 * The states a group goes through. Each enqueued group is in exactly one;
 * a group re-run for staleness ends as `rerun`, and its re-run is a group of
 * its own.
 */
export const GROUP_STATES = [
  "queued",
  "running",
  "collected",
  "training",
  "trained",
  "trainingFailed",
  "failed",
  "stale",
  "rerun",
  "noSignal",
  "uncertain",
  "handing",
  "handed",
  "handOffFailed",
] as const;
/**
 * One of the states a group is counted in by `readProgress` (each group in exactly one).
 *
 * @example
 * const { ids } = await readProgress({ connection, ids: true });
 * const state: GroupState = "uncertain";
 * console.log(ids?.[state]);
 */
export type GroupState = (typeof GROUP_STATES)[number];

/** The state of a run, read from Redis by any process. */
export interface ClusterProgress {
  /** How many groups are in each state (each group counted in exactly one). */
  groups: {
    /** Enqueued, no rollout of theirs running yet. */
    queued: number;
    /** A rollout of theirs running, or being collected (scored) once all ended. */
    running: number;
    /** Collected (scored, stored) and waiting for a batch or the sink. */
    collected: number;
    /** In the coordinator's training job being created or followed. */
    training: number;
    /** In a finished training job of the coordinator (without `sink`). */
    trained: number;
    /** In a training job that failed (or whose creation the service refused); kept, `retrain(ids)` sends them again. */
    trainingFailed: number;
    /**
     * Failed before training: too many failed rollouts, scoring failed 3
     * times, or its trajectories were gone from the payload store (expired)
     * when its turn came.
     */
    failed: number;
    /** Dropped as too far off-policy (`maxStepsOffPolicy`). */
    stale: number;
    /** Too far behind the policy and enqueued again as `<id>.rerun<n>` (`onStale: "rerun"`). */
    rerun: number;
    /** All rewards equal: released, not trained (`noSignal: "skip"`). */
    noSignal: number;
    /**
     * A coordinator stopped while the sink took them or while the service
     * created their job: they may have been delivered; not sent again on our
     * own (`unhanded()` lists them, `handAgain` / `retrain` sends them).
     */
    uncertain: number;
    /** Being handed to the sink now. */
    handing: number;
    /** Handed to the coordinator's `sink` (its `add` resolved). */
    handed: number;
    /** Refused by the sink's `add` 3 times; kept in Redis. */
    handOffFailed: number;
    /** Not a state: every group collected so far, whatever came after. */
    finished: number;
    /** Not a state: the groups enqueued, the sum of the states above. */
    total: number;
  };
  /** With `{ ids: true }`: the ids of the groups in each state. */
  ids?: Record<GroupState, string[]>;
  /**
   * Nothing is moving: no group queued, running, training or being handed
   * over, no re-run being enqueued, and no full batch waiting (fewer than
   * `trainEvery` collected, or none with a sink). `coordinator.drain()` trains
   * the last partial batch.
   */
  idle: boolean;
  /** Every group is in a final state: idle, and none collected and waiting. */
  drained: boolean;
  rollouts: { queued: number; running: number; finished: number; failed: number };
  /** Mean reward of the collected groups' trajectories (after `afterEach`); null before any. */
  rewardMean: number | null;
  /** Failed rollouts recorded in collected groups' `exceptions`. */
  exceptions: number;
  /** Training jobs finished: the coordinator's, or with a sink, the sink's (a shipper's `stats().trainingJobs`). */
  trainingJobs: number;
  failedTrainingJobs: number;
  /** The newest checkpoint step published to workers. */
  step: number;
}

/**
 * Where to read a run's progress from, and whether to list the group ids per state.
 *
 * @example
 * const progress = await readProgress({ connection: { host: "127.0.0.1", port: 6379 }, ids: true });
 */
export interface ReadProgressOptions extends ClusterOptions {
  /** Also list the group ids in each state (reads every group's mark: for diagnostics, not for a tight loop). */
  ids?: boolean;
}

/**
 * Reads a run's progress from Redis (any process, any machine). Bounded:
 * a Redis that does not answer within `connectTimeoutMs` gives
 * `RedisUnavailableError`.
 *
 * @example
 * const p = await readProgress({ connection: { host: "127.0.0.1", port: 6379 } });
 * console.log(`${p.groups.trained} trained, ${p.groups.failed} failed; idle: ${p.idle}`);
 * const { ids } = await readProgress({ connection, ids: true });
 * console.log(ids?.trainingFailed);
 */
export async function readProgress(options: ReadProgressOptions): Promise<ClusterProgress> {
  const cluster = resolveCluster(options, "readProgress");
  await assertReachable(cluster, "readProgress");
  const client = new Redis({ ...cluster.connection, maxRetriesPerRequest: 1 });
  client.on("error", () => {});
  try {
    return await bounded(
      cluster,
      "readProgress",
      "no progress was read",
      progressOf(client, cluster, options.ids === true),
    );
  } finally {
    client.disconnect();
  }
}

async function progressOf(
  client: Redis,
  cluster: Cluster,
  withIds: boolean,
): Promise<ClusterProgress> {
  const k = storeKeys(cluster);
  // A reader writes nothing: not even the queues' meta (their events cap).
  const reader = { ...queueOptions(cluster, client), skipMetasUpdate: true };
  const rollouts = new Queue(cluster.rolloutQueue, reader);
  const groupsQueue = new Queue(cluster.groupQueue, reader);
  rollouts.on("error", () => {});
  groupsQueue.on("error", () => {});
  try {
    const [r, done, g, active, stats, step, open, pipe] = await Promise.all([
      rollouts.getJobCounts(),
      // Completed rollouts are removed once their group has their results:
      // BullMQ's metrics keep the total (workers of older versions record none).
      rollouts.getMetrics("completed", 0, 0),
      groupsQueue.getJobCounts(),
      rollouts.getRanges(["active"], 0, -1),
      client.hgetall(k.stats),
      client.get(policyKeys(cluster).step),
      client.smembers(k.open),
      client.multi().llen(k.ready).hlen(k.handing).llen(k.rerun).get(k.mode).exec(),
    ]);
    const [ready, handing, rerunPending, mode] = (pipe ?? []).map(([, v]) => v) as [
      number,
      number,
      number,
      string | null,
    ];
    const batches: BatchRecord[] =
      open.length === 0
        ? []
        : (await client.hmget(k.batches, ...open))
            .filter((json): json is string => json !== null)
            .map((json) => JSON.parse(json) as BatchRecord);
    const activeGroups = new Set(active.map((id) => parseRolloutJobId(id)?.groupId));
    const num = (key: string) => Number(stats[key] ?? 0);
    const collecting = (g.waiting ?? 0) + (g.active ?? 0) + (g.delayed ?? 0) + (g.prioritized ?? 0);
    const running = activeGroups.size + collecting;
    const groups = {
      queued: Math.max(0, (g["waiting-children"] ?? 0) - activeGroups.size),
      running,
      collected: ready,
      training: batches.reduce((n, b) => n + b.groups.length, 0),
      trained: num("trained_groups"),
      trainingFailed: num("failed_groups"),
      // Parent jobs failed, and groups whose payloads were gone before training.
      failed: (g.failed ?? 0) + num("payload_lost"),
      stale: num("stale"),
      rerun: num("rerun") + rerunPending,
      noSignal: num("nosignal"),
      uncertain: num("uncertain"),
      handing,
      handed: num("handed"),
      handOffFailed: num("handoff_failed"),
      finished: num("collected"),
      total: 0,
    };
    groups.total = GROUP_STATES.reduce((n, s) => n + groups[s], 0);
    const coordinator = mode ? (JSON.parse(mode) as { trainEvery?: number; sink?: boolean }) : {};
    const waitingIsFull =
      coordinator.sink === true
        ? ready > 0
        : coordinator.trainEvery !== undefined && ready >= coordinator.trainEvery;
    const idle =
      groups.queued + groups.running + groups.training + handing + rerunPending === 0 &&
      !waitingIsFull;
    const progress: ClusterProgress = {
      groups,
      idle,
      drained: idle && ready === 0,
      rollouts: {
        queued: (r.waiting ?? 0) + (r.delayed ?? 0) + (r.prioritized ?? 0),
        running: r.active ?? 0,
        finished: Math.max(r.completed ?? 0, done.meta.count),
        failed: r.failed ?? 0,
      },
      rewardMean: num("reward_count") > 0 ? num("reward_sum") / num("reward_count") : null,
      exceptions: num("exceptions"),
      trainingJobs: num("training_jobs"),
      failedTrainingJobs: num("failed_jobs"),
      step: step === null ? 0 : Number(step),
    };
    if (withIds) {
      progress.ids = await idsOf(client, cluster, groupsQueue, activeGroups, batches);
    }
    return progress;
  } finally {
    await Promise.all([rollouts.close(), groupsQueue.close()]);
  }
}

async function idsOf(
  client: Redis,
  cluster: Cluster,
  groupsQueue: Queue,
  activeGroups: Set<string | undefined>,
  batches: BatchRecord[],
): Promise<Record<GroupState, string[]>> {
  const k = storeKeys(cluster);
  const [marks, ready, handing, rerunPending, stale, uncertain, refused, trainingFailed] =
    await Promise.all([
      runScript(client, LUA.progressMarks, [k.groups]) as Promise<string[]>,
      client.lrange(k.ready, 0, -1),
      client.hkeys(k.handing),
      client.lrange(k.rerun, 0, -1),
      client.lrange(k.stale, 0, -1),
      client.smembers(k.uncertain),
      client.lrange(k.handOffFailed, 0, -1),
      client.smembers(k.trainingFailed),
    ]);
  const [waitingChildren, collecting, failed] = await Promise.all([
    groupsQueue.getRanges(["waiting-children"], 0, -1),
    groupsQueue.getRanges(["waiting", "active", "delayed", "prioritized"], 0, -1),
    groupsQueue.getRanges(["failed"], 0, -1),
  ]);
  const ids = Object.fromEntries(GROUP_STATES.map((s) => [s, [] as string[]])) as Record<
    GroupState,
    string[]
  >;
  for (const id of waitingChildren) (activeGroups.has(id) ? ids.running : ids.queued).push(id);
  ids.running.push(...collecting);
  ids.failed.push(...failed);
  // A kept JSON is in the first of these that holds its id.
  const holders: [GroupState, Set<string>][] = [
    ["handing", new Set(handing)],
    ["uncertain", new Set(uncertain)],
    ["trainingFailed", new Set(trainingFailed)],
    ["handOffFailed", new Set(refused)],
    ["rerun", new Set(rerunPending)],
    ["stale", new Set(stale)],
    ["training", new Set(batches.flatMap((b) => b.groups))],
    ["collected", new Set(ready)],
  ];
  for (let i = 0; i + 1 < marks.length; i += 2) {
    const id = marks[i] as string;
    const mark = marks[i + 1] as string;
    if (mark.startsWith("trained:")) ids.trained.push(id);
    else if (mark === "handed") ids.handed.push(id);
    else if (mark === "nosignal") ids.noSignal.push(id);
    else if (mark === "lost") ids.failed.push(id);
    else if (mark.startsWith("rerun:")) ids.rerun.push(id);
    else {
      const state = holders.find(([, set]) => set.has(id))?.[0] ?? "collected";
      ids[state].push(id);
    }
  }
  for (const list of Object.values(ids)) list.sort();
  return ids;
}
