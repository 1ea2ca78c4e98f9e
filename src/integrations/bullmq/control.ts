// What any process can do to a run's set-aside groups and its last batch:
// list them, send them again, drain the run. Each call opens one connection,
// bounded by `connectTimeoutMs`, and closes it.
import { Redis } from "ioredis";
import { InvalidArgumentError } from "../../util/argument-error.js";
import { handAgain as again, unhanded as listUnhanded, type UnhandedGroups } from "./handoff.js";
import { type Cluster, type ClusterOptions, resolveCluster } from "./options.js";
import { type ClusterProgress, readProgress } from "./progress.js";
import { assertReachable, bounded } from "./redis.js";
import { storeKeys } from "./store.js";

async function withClient<T>(
  options: ClusterOptions,
  who: string,
  consequence: string,
  work: (client: Redis, cluster: Cluster) => Promise<T>,
): Promise<T> {
  const cluster = resolveCluster(options, who);
  await assertReachable(cluster, who);
  const client = new Redis({ ...cluster.connection, maxRetriesPerRequest: 1 });
  client.on("error", () => {});
  try {
    return await bounded(cluster, who, consequence, work(client, cluster));
  } finally {
    client.disconnect();
  }
}

/**
 * The groups a run set aside, from any process: `uncertain` (a coordinator
 * stopped while the sink or the service took them: they may have been
 * delivered), `failed` (refused by the sink 3 times) and `trainingFailed`
 * (in a training job that failed). They are kept: their records in Redis,
 * their trajectories in the payload store.
 *
 * @example
 * const { uncertain, trainingFailed } = await unhanded({ connection });
 */
export function unhanded(options: ClusterOptions): Promise<UnhandedGroups> {
  return withClient(options, "unhanded", "nothing was read", (client, cluster) =>
    listUnhanded(client, cluster),
  );
}

/**
 * Sends set-aside groups (any of {@link unhanded}'s) again, first in line
 * for the next batch or hand-off: for groups you checked the service (or the
 * sink) does not have. Returns the ids moved; others are ignored.
 *
 * @example
 * await handAgain({ connection }, (await unhanded({ connection })).uncertain);
 */
export function handAgain(options: ClusterOptions, ids: readonly string[]): Promise<string[]> {
  checkIds(ids, "handAgain");
  return withClient(options, "handAgain", "nothing was moved", (client, cluster) =>
    again(client, cluster, [...ids]),
  );
}

/** {@link handAgain}, by the name that says what it does without a sink. */
export function retrain(options: ClusterOptions, ids: readonly string[]): Promise<string[]> {
  checkIds(ids, "retrain");
  return withClient(options, "retrain", "nothing was moved", (client, cluster) =>
    again(client, cluster, [...ids]),
  );
}

/** A request nobody answers (no coordinator) goes after a day, as the run's other keys. */
const setDrain = (client: Redis, cluster: Cluster) =>
  client.set(storeKeys(cluster).drain, "1", "PX", 86_400_000);

function checkIds(ids: readonly string[], who: string): void {
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string")) {
    throw new InvalidArgumentError(who, "ids", "an array of group ids (strings)", ids);
  }
}

/**
 * Asks the run's coordinator to finish: once no group is queued or running,
 * it trains the last batch even if smaller than `trainEvery` (with a sink,
 * hands over the rest and flushes the sink), then the call resolves with the
 * progress, every group in a final state. Needs a running coordinator.
 *
 * @example
 * const p = await drain({ connection });
 * console.log(p.groups.trained, p.groups.failed);
 */
export async function drain(
  options: ClusterOptions & { pollIntervalMs?: number; signal?: AbortSignal },
): Promise<ClusterProgress> {
  const poll = options.pollIntervalMs ?? 500;
  for (let asked = false; ; asked = true) {
    options.signal?.throwIfAborted();
    // The coordinator deletes the key once it finished; set again, it covers groups enqueued since.
    const pending = await withClient(options, "drain", "the run was not asked to drain", (c, k) =>
      asked ? c.exists(storeKeys(k).drain) : setDrain(c, k).then(() => 1),
    );
    if (pending === 0) {
      const p = await readProgress(options);
      if (p.drained) return p;
      await withClient(options, "drain", "the run was not asked to drain", setDrain);
    }
    await new Promise((resolve) => setTimeout(resolve, poll));
  }
}
