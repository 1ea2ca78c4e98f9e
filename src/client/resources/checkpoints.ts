import {
  type Checkpoint,
  type CheckpointDeleteParams,
  CheckpointDeleteParamsSchema,
  type CheckpointDeleteResponse,
  CheckpointDeleteResponseSchema,
  type CheckpointListParams,
  CheckpointListParamsSchema,
  CheckpointPageSchema,
} from "../../wire/index.js";
import type { APIPromise } from "../api-promise.js";
import { type RequestCore, type RequestOptions, segment } from "../core.js";
import { CursorPage, PagePromise } from "../pagination.js";

/**
 * A model's checkpoints: `client.models.checkpoints`.
 *
 * @example
 * const [latest] = (await client.models.checkpoints.list(modelId, { limit: 1, order: "desc" })).data;
 */
export class Checkpoints {
  readonly #core: RequestCore;
  // Private: built by the client (`buildResource`), never by user code.
  private constructor(core: RequestCore) {
    this.#core = core;
  }

  /**
   * Lists checkpoints with cursor pagination (`after`, `limit` 1..100, `order`).
   * The result is a page that `for await` walks across all pages.
   *
   * @example
   * for await (const cp of client.models.checkpoints.list(modelId)) console.log(cp.step, cp.metrics);
   */
  list(
    modelId: string,
    params: Checkpoints.CheckpointListParams = {},
    options?: RequestOptions,
  ): PagePromise<Checkpoint> {
    const fetchPage = (
      query: CheckpointListParams,
    ): Promise<{ data: CursorPage<Checkpoint>; response: Response }> =>
      this.#core
        .requestRaw({
          operation: "models.checkpoints.list",
          method: "GET",
          path: `/preview/models/${segment(modelId)}/checkpoints`,
          pathParams: { model_id: modelId },
          query: { ...query },
          params: query,
          paramsSchema: CheckpointListParamsSchema,
          responseSchema: CheckpointPageSchema,
          options,
          safeToRetry: true,
        })
        .then(({ data, response }) => ({
          data: new CursorPage(data, (after) => new PagePromise(fetchPage({ ...query, after }))),
          response,
        }));
    return new PagePromise(fetchPage(params));
  }

  /**
   * Deletes the given steps; steps that do not exist come back in `not_found_steps`.
   *
   * @example
   * const { deleted_count } = await client.models.checkpoints.delete(modelId, { steps: [1, 2] });
   */
  delete(
    modelId: string,
    params: Checkpoints.CheckpointDeleteParams,
    options?: RequestOptions,
  ): APIPromise<Checkpoints.CheckpointDeleteResponse> {
    return this.#core.request({
      operation: "models.checkpoints.delete",
      method: "DELETE",
      path: `/preview/models/${segment(modelId)}/checkpoints`,
      pathParams: { model_id: modelId },
      body: params,
      params,
      paramsSchema: CheckpointDeleteParamsSchema,
      responseSchema: CheckpointDeleteResponseSchema,
      options,
      safeToRetry: true,
    });
  }
}

/**
 * The request and response types of {@link Checkpoints} (their zod schemas, in
 * the same names with `Schema`, are in `trajectory-recorder/wire`).
 */
export declare namespace Checkpoints {
  export type { CheckpointDeleteParams, CheckpointDeleteResponse, CheckpointListParams };
}
// Each one exactly the type of its schema in the wire folder.
