// The coordinator training its own batches: `trainEvery.groups` collected
// groups at a time, one job at a time. A batch is formed atomically in Redis
// (a group is in exactly one batch); a job's id is saved as soon as the
// service names it, and a coordinator started after a crash follows that job
// instead of training the batch again.
import { abortableSleep, createOutcome } from "../../client/index.js";
import type { GroupInput, TrainResult } from "../../training/index.js";
import { STALE_GROUPS_METRIC, TrainingFailedError } from "../../training/index.js";
import { errorMessage } from "../../util/index.js";
import { luaStaleness, type ResolvedCoordinatorOptions } from "./coordinator-options.js";
import type { CoordinatorRun } from "./coordinator-run.js";
import { readGroup } from "./group-record.js";
import { policyKeys } from "./policy.js";
import {
  type BatchRecord,
  claimBatch,
  finishBatch,
  openBatches,
  saveBatch,
  storeKeys,
  uncertainBatch,
} from "./store.js";

type Own = NonNullable<ResolvedCoordinatorOptions["own"]>;

/** The batch's groups could not be read (Redis or the payload store): nothing was sent. */
class ReadFailed extends Error {}
/** A group's wire JSON as the collector wrote it. */
type WireGroup = GroupInput;

export class OwnTraining {
  readonly #run: CoordinatorRun;
  readonly #own: Own;
  /**
   * Groups released for having no reward signal since the last job, as read
   * out of Redis: passed to the next `train` with the batch, which leaves
   * them out of the job and logs them to its step as not trained.
   */
  #noSignal: WireGroup[] = [];
  /** Groups dropped as too far off-policy since the last job: its step metric. */
  #stale = 0;

  constructor(run: CoordinatorRun, own: Own) {
    this.#run = run;
    this.#own = own;
  }

  /** Resumes the batches a previous coordinator left open, then trains as groups arrive. */
  async run(): Promise<void> {
    const { client, cluster, signal, logger } = this.#run;
    for (const { batch, record } of await openBatches(client, cluster)) {
      if (record.jobId === undefined && record.creating) {
        await this.#uncertain(batch, record, "the previous coordinator stopped");
        continue;
      }
      logger.info(
        `TrainingCoordinator: resuming batch ${batch} (${record.groups.length} groups${record.jobId ? `, job ${record.jobId}` : ""}).`,
      );
      await this.#train(batch, record);
    }
    while (!signal.aborted) {
      let claim = await this.#claim(false);
      if (claim.batch === undefined && (await this.#run.draining())) {
        claim = await this.#claim(true);
        if (claim.batch === undefined) {
          await this.#logNoSignal();
          await this.#run.drained();
        }
      }
      if (claim.batch === undefined) {
        await this.#run.idle();
        continue;
      }
      await this.#train(claim.batch, { groups: claim.groups });
    }
  }

  async #claim(partial: boolean) {
    const claim = await claimBatch(
      this.#run.client,
      this.#run.cluster,
      this.#own.trainEvery.groups,
      {
        maxStaleness: luaStaleness(this.#run.resolved),
        onStale: this.#run.resolved.onStale,
        noSignal: this.#own.trainEvery.noSignal,
        partial,
      },
      policyKeys(this.#run.cluster).step,
    );
    await this.#run.stale(claim.stale);
    if (this.#run.resolved.onStale === "drop") this.#stale += claim.stale.length;
    this.#run.released(claim.noSignal, ", logged with the next job's step as not trained");
    // Read before their payloads are deleted (the next tidy); one whose
    // payloads are gone is only counted, as released.
    for (const entry of claim.noSignalJson) {
      if (!entry.startsWith("{")) continue;
      const read = await readGroup(this.#run.payloads, entry).catch(() => undefined);
      if (read?.group) this.#noSignal.push(read.group as WireGroup);
    }
    return claim;
  }

  /** Released groups and no batch left to ride with (a drain): logged through `train`, which creates no job. */
  async #logNoSignal(): Promise<void> {
    if (this.#noSignal.length === 0) return;
    const groups = this.#noSignal;
    this.#noSignal = [];
    try {
      await this.#own.model.train(groups, this.#own.trainEvery.config, {
        signal: this.#run.signal,
        noSignal: "skip",
        maxStepsOffPolicy: Number.POSITIVE_INFINITY,
        logger: this.#run.logger,
      });
    } catch (error) {
      this.#run.logger.warn(
        `TrainingCoordinator: ${groups.length} group(s) without reward signal could not be logged (${errorMessage(error)}); they stay counted in groups.noSignal.`,
      );
    }
  }

  /** A batch whose job the service may have created: reported, never trained again on our own. */
  async #uncertain(batch: number, record: BatchRecord, why: string): Promise<void> {
    await uncertainBatch(this.#run.client, this.#run.cluster, batch, { ...record, uncertain: why });
    this.#run.logger.error(
      `TrainingCoordinator: batch ${batch} (${record.groups.length} groups: ${record.groups.join(", ")}) was being sent to the service when ${why}; the service may have created its job, so the groups are not trained again. They stay in Redis, counted in groups.uncertain; check the service's jobs, then coordinator.retrain(ids) (or retrain(options, ids) from any process) trains them again.`,
    );
  }

  /** Trains (or follows) one batch until it ended; transient failures are retried. */
  async #train(batch: number, record: BatchRecord): Promise<void> {
    const { client, cluster, signal, logger } = this.#run;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        const result = await this.#trainOnce(batch, record);
        if (result === undefined) {
          // Every group's payloads were gone: nothing was sent.
          const ms = this.#run.retention.ms;
          await finishBatch(client, cluster, batch, record, policyKeys(cluster), ms);
          await this.#run.tidy();
          return;
        }
        this.#noSignal = [];
        await finishBatch(
          client,
          cluster,
          batch,
          { ...record, step: result.step },
          policyKeys(cluster),
          this.#run.retention.ms,
        );
        await this.#run.tidy();
        logger.info(
          `TrainingCoordinator: batch ${batch} (${record.groups.length} groups) trained in job ${result.jobId}: step ${result.step}.`,
        );
        const stale = this.#stale;
        this.#stale = 0;
        const metrics =
          stale > 0 ? { ...result.metrics, [STALE_GROUPS_METRIC]: stale } : result.metrics;
        this.#own.onTrained?.({
          ...result,
          metrics,
          ...(stale > 0 ? { staleGroups: stale } : {}),
          batch,
          groups: record.groups,
        });
        return;
      } catch (error) {
        if (signal.aborted) return;
        // A payload that could not be read (the store is down) sent nothing: tried again.
        const outcome =
          record.jobId === undefined && !(error instanceof ReadFailed)
            ? createOutcome(error)
            : "retry";
        if (outcome === "uncertain") {
          this.#noSignal = [];
          await this.#uncertain(
            batch,
            record,
            `the service's answer was lost (${errorMessage(error)})`,
          );
          return;
        }
        if (error instanceof TrainingFailedError || outcome === "refused") {
          this.#noSignal = [];
          // The groups stay in Redis, readable under their ids; never trained again.
          await finishBatch(
            client,
            cluster,
            batch,
            { ...record, failed: errorMessage(error) },
            policyKeys(cluster),
            this.#run.retention.ms,
          );
          logger.error(
            `TrainingCoordinator: batch ${batch} (${record.groups.length} groups: ${record.groups.join(", ")}) failed (${errorMessage(error)}); its groups are kept in Redis, counted in groups.trainingFailed, and not trained again (coordinator.retrain(ids) sends them again).`,
          );
          return;
        }
        const delay = this.#run.backoff(attempt);
        logger.warn(
          `TrainingCoordinator: batch ${batch}: ${errorMessage(error)}; trying again in ${delay} ms (attempt ${attempt}).`,
        );
        await abortableSleep(delay, signal).catch(() => {});
      }
    }
  }

  async #trainOnce(batch: number, record: BatchRecord): Promise<TrainResult | undefined> {
    const { client, cluster, signal } = this.#run;
    const every = this.#own.trainEvery;
    const run = { signal, pollIntervalMs: every.pollIntervalMs ?? this.#run.pollMs };
    if (record.jobId !== undefined) {
      return this.#own.model.followJob(record.jobId, {
        ...run,
        stepBefore: record.stepBefore ?? 0,
      });
    }
    const groups = await this.#load(batch, record).catch((error: unknown) => {
      throw new ReadFailed(`reading the batch's groups failed: ${errorMessage(error)}`);
    });
    if (record.groups.length === 0) return undefined;
    // Marked before the request: a coordinator that dies before the job's id
    // is saved leaves this mark, and the next one reports the batch instead
    // of training it again (the service may have created the job).
    if (!record.creating) {
      record.creating = true;
      await saveBatch(client, cluster, batch, record);
    }
    // The groups as the collector wrote them: `train` writes and checks each
    // once on its way to the service (the one check they get here). The
    // released ones without reward signal ride along: `train` leaves them
    // out of the job (noSignal "skip") and logs them to its step.
    return this.#own.model.train([...groups, ...this.#noSignal], every.config, {
      ...run,
      // The batch was formed under the coordinator's own rule for such groups.
      noSignal: every.noSignal,
      // And judged for staleness against the published step when it was formed.
      maxStepsOffPolicy: Number.POSITIVE_INFINITY,
      logger: this.#run.logger,
      onJobCreated: async ({ jobId, stepBefore }) => {
        record.jobId = jobId;
        record.stepBefore = stepBefore;
        await saveBatch(client, cluster, batch, record);
      },
    });
  }

  /**
   * The batch's groups, read from the payload store just before the job is
   * created. Groups whose payloads are gone are marked lost and taken out of
   * the batch (its record says which), before the record is marked
   * `creating`: a coordinator resuming it finds them marked and skips them.
   */
  async #load(batch: number, record: BatchRecord): Promise<WireGroup[]> {
    const ids = record.groups;
    const entries = await this.#run.client.hmget(storeKeys(this.#run.cluster).groups, ...ids);
    const groups: WireGroup[] = [];
    const lost: string[] = [];
    for (const [i, id] of ids.entries()) {
      const group = await this.#run.load(id, entries[i] ?? null);
      if (group) groups.push(group as WireGroup);
      else lost.push(id);
    }
    if (lost.length > 0) {
      record.groups = ids.filter((id) => !lost.includes(id));
      record.lost = [...(record.lost ?? []), ...lost];
      await saveBatch(this.#run.client, this.#run.cluster, batch, record);
    }
    return groups;
  }
}
