import type { TrajectoryGroup } from "../../trajectory/index.js";
import {
  type Flat,
  type LogParams,
  LogParamsSchema,
  type LogResponse,
  LogResponseSchema,
  type Model,
  type ModelCreateParams,
  ModelCreateParamsSchema,
  type ModelDeleteResponse,
  ModelDeleteResponseSchema,
  ModelSchema,
  sameType,
} from "../../wire/index.js";
import type { APIPromise } from "../api-promise.js";
import { buildResource, type RequestCore, type RequestOptions, segment } from "../core.js";
import { groupsToWire, type WithGroupParams } from "../group-param.js";
import { registerCore } from "../resource-cores.js";
import { Checkpoints } from "./checkpoints.js";

/**
 * Trainable models: `client.models`.
 *
 * @example
 * const model = await client.models.create({ project: "demo", name: "agent-001", base_model: "OpenPipe/Qwen3-14B-Instruct", return_existing: true });
 */
export class Models {
  readonly #core: RequestCore;
  /** The model's checkpoints. */
  readonly checkpoints: Checkpoints;

  // Private: built by the client (`buildResource`), never by user code.
  private constructor(core: RequestCore) {
    this.#core = core;
    this.checkpoints = buildResource(Checkpoints, core);
    registerCore(this, core);
  }

  /**
   * Creates a model, or with `return_existing: true` returns the one of the same
   * name. Only that second form is retried on its own, since it cannot create twice.
   *
   * @example
   * const { id } = await client.models.create({ project: "demo", name: "agent-001", base_model: "Qwen/Qwen3-4B", return_existing: true });
   */
  create(params: Models.ModelCreateParams, options?: RequestOptions): APIPromise<Model> {
    return this.#core.request({
      operation: "models.create",
      method: "POST",
      path: "/preview/models",
      body: params,
      params,
      paramsSchema: ModelCreateParamsSchema,
      responseSchema: ModelSchema,
      options,
      safeToRetry: params?.return_existing === true,
    });
  }

  /**
   * Deletes a model with its checkpoints, artifacts and tracking run.
   *
   * @example
   * const { deleted_checkpoints } = await client.models.delete(modelId);
   */
  delete(modelId: string, options?: RequestOptions): APIPromise<Models.ModelDeleteResponse> {
    return this.#core.request({
      operation: "models.delete",
      method: "DELETE",
      path: `/preview/models/${segment(modelId)}`,
      pathParams: { model_id: modelId },
      responseSchema: ModelDeleteResponseSchema,
      options,
      safeToRetry: true,
    });
  }

  /**
   * Logs trajectory groups (`TrajectoryGroup`s or their JSON) under a split (e.g. `"val"`). Not retried unless
   * `{ idempotent: true }` is passed, since a repeat would log twice.
   *
   * @example
   * await client.models.log(modelId, { split: "val", trajectory_groups: groups });
   */
  log(
    modelId: string,
    params: Models.LogParams,
    options?: RequestOptions,
  ): APIPromise<Models.LogResponse> {
    const wire = groupsToWire(params);
    return this.#core.request({
      operation: "models.log",
      method: "POST",
      path: `/preview/models/${segment(modelId)}/log`,
      pathParams: { model_id: modelId },
      body: wire,
      params: wire,
      paramsSchema: LogParamsSchema,
      responseSchema: LogResponseSchema,
      options,
    });
  }
}

/**
 * The request and response types of {@link Models} (their zod schemas, in the
 * same names with `Schema`, are in `trajectory-recorder/wire`).
 */
export declare namespace Models {
  export type { LogResponse, ModelCreateParams, ModelDeleteResponse };
  /** Body of `POST /v1/preview/models/{model_id}/log`. */
  export interface LogParams {
    /** The split the groups are logged under, e.g. `"val"`. */
    split: string;
    /** The groups to log: `TrajectoryGroup`s or their JSON. */
    trajectory_groups: TrajectoryGroup.TrajectoryGroupParam[];
  }
}
// Each one exactly the type of its schema in the wire folder.
sameType<Models.LogParams, Flat<WithGroupParams<LogParams>>>(true);
