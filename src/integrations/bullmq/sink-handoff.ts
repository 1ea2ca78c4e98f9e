// The coordinator handing each collected group to a sink (a
// TrajectoryShipper, which logs, trains and retries), at most once, recorded
// in Redis before and after `add` (see handoff.ts for what a crash leaves),
// and publishing the steps the sink's training jobs reach.
import { abortableSleep } from "../../client/index.js";
import type { GroupSink } from "../../trajectory/index.js";
import { readWrittenGroup } from "../../trajectory/index.js";
import { errorMessage } from "../../util/index.js";
import { luaStaleness } from "./coordinator-options.js";
import type { CoordinatorRun } from "./coordinator-run.js";
import { confirmHandOff, recoverHandOffs, refusedHandOff, takeForHandOff } from "./handoff.js";
import { policyKeys, publishStep } from "./policy.js";
import { storeKeys } from "./store.js";

/** Tries of a group whose `sink.add` rejects before it is set aside as refused. */
const HAND_OFF_ATTEMPTS = 3;

type SinkStats = { trainingJobs?: number; trainingFailed?: number };

export class SinkHandOff {
  readonly #run: CoordinatorRun;
  readonly #sink: GroupSink;
  readonly #refusals = new Map<string, number>();

  constructor(run: CoordinatorRun, sink: GroupSink) {
    this.#run = run;
    this.#sink = sink;
  }

  async run(): Promise<void> {
    const { client, cluster, signal, logger, resolved } = this.#run;
    const left = await recoverHandOffs(client, cluster);
    if (left.length > 0) {
      logger.error(
        `TrainingCoordinator: ${left.length} group(s) were being handed to the sink when the previous coordinator stopped: ${left.join(", ")}. Whether the sink kept them is unknown, so they are not handed again; they stay in Redis, counted in groups.uncertain (coordinator.unhanded() lists them, coordinator.handAgain(ids) hands them again).`,
      );
    }
    const watch = this.#watchStep();
    try {
      while (!signal.aborted) {
        const taken = await takeForHandOff(
          client,
          cluster,
          luaStaleness(resolved),
          resolved.onStale,
          resolved.noSignal,
          policyKeys(cluster).step,
          this.#run.token,
        );
        await this.#run.stale(taken.stale);
        this.#run.released(taken.noSignal, ", not handed to the sink");
        if (taken.id === undefined) {
          if (await this.#run.draining()) await this.#run.drained();
          await this.#run.idle();
          continue;
        }
        let group: Record<string, unknown> | undefined;
        try {
          group = await this.#run.load(taken.id, taken.entry);
        } catch (error) {
          // Nothing reached the sink: back to the head of the line.
          await refusedHandOff(client, cluster, taken.id, false);
          logger.warn(
            `TrainingCoordinator: could not read group ${taken.id} from the payload store (${errorMessage(error)}); trying again.`,
          );
          await abortableSleep(this.#run.backoff(1), signal).catch(() => {});
          continue;
        }
        if (group) await this.#handOver(taken.id, group);
        await this.#run.tidy();
      }
    } finally {
      await watch;
    }
  }

  async #handOver(id: string, group: Record<string, unknown>): Promise<void> {
    const { client, cluster, logger, signal } = this.#run;
    try {
      // As the collector wrote it: read without a second check (the sink
      // checks what it sends).
      await this.#sink.add(readWrittenGroup(group));
    } catch (error) {
      const tries = (this.#refusals.get(id) ?? 0) + 1;
      this.#refusals.set(id, tries);
      const final = tries >= HAND_OFF_ATTEMPTS;
      await refusedHandOff(client, cluster, id, final);
      if (final) {
        this.#refusals.delete(id);
        logger.error(
          `TrainingCoordinator: the sink refused group ${id} ${tries} times (${errorMessage(error)}); it is kept in Redis, counted in groups.handOffFailed (coordinator.handAgain([id]) tries again).`,
        );
      } else {
        logger.warn(
          `TrainingCoordinator: the sink refused group ${id} (${errorMessage(error)}); trying again (attempt ${tries} of ${HAND_OFF_ATTEMPTS}).`,
        );
        await abortableSleep(this.#run.pollMs * 2 ** tries, signal).catch(() => {});
      }
      return;
    }
    this.#refusals.delete(id);
    await confirmHandOff(client, cluster, id);
  }

  /**
   * The sink trains (a shipper's `trainEvery`): each new step of the model is
   * published for the workers. A shipper's count of training jobs says when
   * to look; another sink is asked every poll.
   */
  async #watchStep(): Promise<void> {
    const { client, cluster, signal, logger } = this.#run;
    const stats = () => (this.#sink as { stats?: () => SinkStats }).stats?.();
    let seen = stats()?.trainingJobs;
    // The sink's jobs, counted in readProgress's trainingJobs (as deltas: a
    // new coordinator's shipper starts again from 0).
    let counted = { jobs: seen ?? 0, failed: stats()?.trainingFailed ?? 0 };
    const count = async () => {
      const now = stats();
      if (now?.trainingJobs !== undefined) {
        const jobsDelta = now.trainingJobs - counted.jobs;
        const failedDelta = (now.trainingFailed ?? 0) - counted.failed;
        if (jobsDelta > 0 || failedDelta > 0) {
          const k = storeKeys(cluster).stats;
          await client
            .multi()
            .hincrby(k, "training_jobs", Math.max(0, jobsDelta))
            .hincrby(k, "failed_jobs", Math.max(0, failedDelta))
            .exec()
            .then(() => {
              counted = { jobs: now.trainingJobs as number, failed: now.trainingFailed ?? 0 };
            })
            .catch(() => {});
        }
      }
      return now;
    };
    this.#run.countSinkJobs = async () => {
      await count();
    };
    while (!signal.aborted) {
      await abortableSleep(this.#run.pollMs, signal).catch(() => {});
      const now = await count();
      if (signal.aborted || (now?.trainingJobs !== undefined && now.trainingJobs === seen))
        continue;
      const current = now?.trainingJobs;
      try {
        await publishStep(
          client,
          cluster,
          await this.#run.resolved.options.model.getStep({ signal }),
        );
        seen = current;
      } catch (error) {
        if (!signal.aborted) {
          logger.warn(
            `TrainingCoordinator: could not read the model's latest step (${errorMessage(error)}); trying again.`,
          );
        }
      }
    }
  }
}
