import { Queue } from "bullmq";
import { type ClusterOptions, parseRolloutJobId, resolveCluster } from "./options.js";
import { policyKeys } from "./policy.js";
import { assertReachable, bullConnection, openClient } from "./redis.js";
import { storeKeys } from "./store.js";

/** The state of a run, read from Redis by any process. */
export interface ClusterProgress {
  groups: {
    /** Enqueued, no rollout of theirs running yet. */
    queued: number;
    /** With at least one rollout running. */
    running: number;
    /** Collected: scored and stored for training (counted once each). */
    finished: number;
    /** Failed: too many failed rollouts, or scoring failed 3 times. */
    failed: number;
    /** Dropped by `maxStaleness`. */
    stale: number;
    /** Too far behind the policy and enqueued again (`onStale: "rerun"`): one per re-run. */
    rerun: number;
    /** In a finished training job of the coordinator (without `sink`). */
    trained: number;
    /** Handed to the coordinator's `sink` (its `add` resolved). */
    handed: number;
    /** Being handed over when a coordinator stopped: the sink may or may not have them; not handed again. */
    uncertain: number;
    /** Refused by the sink's `add` 3 times; kept in Redis. */
    handOffFailed: number;
  };
  rollouts: { queued: number; running: number; finished: number; failed: number };
  /** Mean reward of the collected groups' trajectories (after `afterEach`); null before any. */
  rewardMean: number | null;
  /** Failed rollouts recorded in collected groups' `exceptions`. */
  exceptions: number;
  trainingJobs: number;
  failedTrainingJobs: number;
  /** The newest checkpoint step published to workers. */
  step: number;
}

/**
 * Reads a run's progress from Redis (any process, any machine).
 *
 * @example
 * const p = await readProgress({ connection: { host: "127.0.0.1", port: 6379 } });
 * console.log(`${p.groups.finished} groups, reward ${p.rewardMean}`);
 */
export async function readProgress(options: ClusterOptions): Promise<ClusterProgress> {
  const cluster = resolveCluster(options, "readProgress");
  await assertReachable(cluster, "readProgress");
  const connection = bullConnection(cluster);
  const rollouts = new Queue(cluster.rolloutQueue, { connection, prefix: cluster.prefix });
  const groups = new Queue(cluster.groupQueue, { connection, prefix: cluster.prefix });
  const client = openClient(cluster, "readProgress", console);
  try {
    const [r, g, active, stats, step] = await Promise.all([
      rollouts.getJobCounts(),
      groups.getJobCounts(),
      rollouts.getActive(),
      client.hgetall(storeKeys(cluster).stats),
      client.get(policyKeys(cluster).step),
    ]);
    const running = new Set(active.map((j) => parseRolloutJobId(j.id ?? "")?.groupId)).size;
    const num = (k: string) => Number(stats[k] ?? 0);
    const pending =
      (g["waiting-children"] ?? 0) + (g.waiting ?? 0) + (g.active ?? 0) + (g.delayed ?? 0);
    return {
      groups: {
        queued: Math.max(0, pending - running),
        running,
        finished: num("collected"),
        failed: g.failed ?? 0,
        stale: num("stale"),
        rerun: num("rerun"),
        trained: num("trained_groups"),
        handed: num("handed"),
        uncertain: num("uncertain"),
        handOffFailed: num("handoff_failed"),
      },
      rollouts: {
        queued: (r.waiting ?? 0) + (r.delayed ?? 0) + (r.prioritized ?? 0),
        running: r.active ?? 0,
        finished: r.completed ?? 0,
        failed: r.failed ?? 0,
      },
      rewardMean: num("reward_count") > 0 ? num("reward_sum") / num("reward_count") : null,
      exceptions: num("exceptions"),
      trainingJobs: num("training_jobs"),
      failedTrainingJobs: num("failed_jobs"),
      step: step === null ? 0 : Number(step),
    };
  } finally {
    await Promise.all([rollouts.close(), groups.close()]);
    client.disconnect();
  }
}
