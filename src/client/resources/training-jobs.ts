import type { TrajectoryGroup } from "../../trajectory/index.js";
import {
  type EventListParams,
  EventListParamsSchema,
  type ExperimentalTrainingConfig,
  type Flat,
  type SFTTrainingConfig,
  type SFTTrainingJobCreateParams,
  SFTTrainingJobCreateParamsSchema,
  sameType,
  type TrainingJob,
  type TrainingJobCreateParams,
  TrainingJobCreateParamsSchema,
  type TrainingJobEvent,
  TrainingJobEventPageSchema,
  TrainingJobSchema,
} from "../../wire/index.js";
import type { APIPromise } from "../api-promise.js";
import { buildResource, type RequestCore, type RequestOptions, segment } from "../core.js";
import { groupsToWire, type WithGroupParams } from "../group-param.js";
import { CursorPage, PagePromise } from "../pagination.js";
import { registerCore } from "../resource-cores.js";

/**
 * Events of a training job (RL or SFT): `client.trainingJobs.events`.
 *
 * @example
 * for await (const ev of client.trainingJobs.events.list(jobId)) if (ev.type === "training_ended") break;
 */
export class TrainingJobEvents {
  readonly #core: RequestCore;
  // Private: built by the client (`buildResource`), never by user code.
  private constructor(core: RequestCore) {
    this.#core = core;
  }

  /**
   * Lists events after the `after` cursor (exclusive), `limit` 1..100 per page.
   *
   * @example
   * const page = await client.trainingJobs.events.list(jobId, { after: lastSeenId });
   */
  list(
    jobId: string,
    params: TrainingJobEvents.EventListParams = {},
    options?: RequestOptions,
  ): PagePromise<TrainingJobEvent> {
    const fetchPage = (
      query: EventListParams,
    ): Promise<{ data: CursorPage<TrainingJobEvent>; response: Response }> =>
      this.#core
        .requestRaw({
          operation: "trainingJobs.events.list",
          method: "GET",
          path: `/preview/training-jobs/${segment(jobId)}/events`,
          pathParams: { training_job_id: jobId },
          query: { ...query },
          params: query,
          paramsSchema: EventListParamsSchema,
          responseSchema: TrainingJobEventPageSchema,
          options,
          safeToRetry: true,
        })
        .then(({ data, response }) => ({
          data: new CursorPage(data, (after) => new PagePromise(fetchPage({ ...query, after }))),
          response,
        }));
    return new PagePromise(fetchPage(params));
  }
}

/**
 * The request types of {@link TrainingJobEvents} (their zod schemas, in the
 * same names with `Schema`, are in `trajectory-recorder/wire`).
 */
export declare namespace TrainingJobEvents {
  export type { EventListParams };
}
// Exactly the type of its schema in the wire folder.

/**
 * RL training jobs: `client.trainingJobs`.
 *
 * @example
 * const job = await client.trainingJobs.create({ model_id, trajectory_groups });
 */
export class TrainingJobs {
  readonly #core: RequestCore;
  /** The job's event log. */
  readonly events: TrainingJobEvents;

  // Private: built by the client (`buildResource`), never by user code.
  private constructor(core: RequestCore) {
    this.#core = core;
    this.events = buildResource(TrainingJobEvents, core);
    registerCore(this, core);
  }

  /**
   * Starts an RL training job on `TrajectoryGroup`s or their JSON. Sent once: it is never retried unless the caller
   * passes `{ idempotent: true }`, because a retry after a lost answer could
   * start a second job.
   *
   * @example
   * const { id } = await client.trainingJobs.create({ model_id, trajectory_groups, experimental_config: { learning_rate: 5e-6 } });
   */
  create(
    params: TrainingJobs.TrainingJobCreateParams,
    options?: RequestOptions,
  ): APIPromise<TrainingJob> {
    const wire = groupsToWire(params);
    return this.#core.request({
      operation: "trainingJobs.create",
      method: "POST",
      path: "/preview/training-jobs",
      body: wire,
      params: wire,
      paramsSchema: TrainingJobCreateParamsSchema,
      responseSchema: TrainingJobSchema,
      options,
    });
  }

  /**
   * Reads a training job. The spec only promises `id`; status fields are kept when present.
   *
   * @example
   * const job = await client.trainingJobs.retrieve(jobId);
   */
  retrieve(jobId: string, options?: RequestOptions): APIPromise<TrainingJob> {
    return this.#core.request({
      operation: "trainingJobs.retrieve",
      method: "GET",
      path: `/preview/training-jobs/${segment(jobId)}`,
      pathParams: { training_job_id: jobId },
      responseSchema: TrainingJobSchema,
      options,
      safeToRetry: true,
    });
  }
}

/**
 * The request types of {@link TrainingJobs} (their zod schemas, in the same
 * names with `Schema`, are in `trajectory-recorder/wire`).
 */
export declare namespace TrainingJobs {
  export type { ExperimentalTrainingConfig };
  /** Body of `POST /v1/preview/training-jobs`. */
  export interface TrainingJobCreateParams {
    /** The model to train (its id, a UUID). */
    model_id: string;
    /** The groups to train on (at least one): `TrajectoryGroup`s or their JSON. */
    trajectory_groups: TrajectoryGroup.TrajectoryGroupParam[];
    /** The job's knobs, each documented on `TrainConfig` (its camelCase form). */
    experimental_config?: TrainingJobs.ExperimentalTrainingConfig | null | undefined;
  }
}
// Exactly the types of their schemas in the wire folder (the groups widened).
sameType<TrainingJobs.TrainingJobCreateParams, Flat<WithGroupParams<TrainingJobCreateParams>>>(
  true,
);

/**
 * SFT training jobs: `client.sftTrainingJobs`. Their events are read with
 * `client.trainingJobs.events.list(id)`.
 *
 * @example
 * const { id } = await client.sftTrainingJobs.create({ model_id, training_data_url });
 */
export class SFTTrainingJobs {
  readonly #core: RequestCore;
  // Private: built by the client (`buildResource`), never by user code.
  private constructor(core: RequestCore) {
    this.#core = core;
  }

  /**
   * Starts an SFT job on data already uploaded to the artifact store. Never
   * retried unless the caller passes `{ idempotent: true }`.
   *
   * @example
   * await client.sftTrainingJobs.create({ model_id, training_data_url: "wandb-artifact:///me/demo/data:v0", config: { learning_rate: 5e-5 } });
   */
  create(
    params: SFTTrainingJobs.SFTTrainingJobCreateParams,
    options?: RequestOptions,
  ): APIPromise<TrainingJob> {
    return this.#core.request({
      operation: "sftTrainingJobs.create",
      method: "POST",
      path: "/preview/sft-training-jobs",
      body: params,
      params,
      paramsSchema: SFTTrainingJobCreateParamsSchema,
      responseSchema: TrainingJobSchema,
      options,
    });
  }
}

/**
 * The request types of {@link SFTTrainingJobs} (their zod schemas, in the
 * same names with `Schema`, are in `trajectory-recorder/wire`).
 */
export declare namespace SFTTrainingJobs {
  export type { SFTTrainingConfig, SFTTrainingJobCreateParams };
}
// Each one exactly the type of its schema in the wire folder.
