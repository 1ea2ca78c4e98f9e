// Requests whose trajectory groups were written and checked beforehand (the
// bytes of `PreparedGroup`s): the body is put together from those bytes,
// without another validation or stringify. The model's `train` and `log`
// send through these. They are functions of this module rather than methods
// of `client.trainingJobs` / `client.models`, so the public classes carry
// nothing internal; each resource registers its request core in
// resource-cores.ts when it is built.
import { z } from "zod";
import {
  type LogResponse,
  LogResponseSchema,
  type TrainingJob,
  type TrainingJobCreateParams,
  TrainingJobCreateParamsSchema,
  TrainingJobSchema,
} from "../wire/index.js";
import type { APIPromise } from "./api-promise.js";
import { groupsBody, type RequestOptions, segment } from "./core.js";
import { coreOf } from "./resource-cores.js";
import type { Models } from "./resources/models.js";
import type { TrainingJobs } from "./resources/training-jobs.js";

/**
 * A job's body whose groups were written and checked when they were
 * prepared: every other field is checked as `create` checks it, and that
 * there is at least one group.
 */
const PreparedJobParamsSchema = TrainingJobCreateParamsSchema.extend({
  trajectory_groups: z.array(z.unknown()).min(1),
});

/**
 * `client.trainingJobs.create` with groups already serialized and checked;
 * `experimental_config` is checked here. Sent once, as `create`.
 */
export function createPreparedJob(
  jobs: TrainingJobs,
  params: Omit<TrainingJobCreateParams, "trajectory_groups">,
  groups: readonly (readonly Uint8Array[])[],
  options?: RequestOptions,
): APIPromise<TrainingJob> {
  return coreOf(jobs, "createPreparedJob").request({
    operation: "trainingJobs.create",
    method: "POST",
    path: "/preview/training-jobs",
    rawBody: groupsBody(params, "trajectory_groups", groups),
    // The groups were checked when they were prepared: the rest of the
    // body is checked here, and that it holds at least one group.
    params: { ...params, trajectory_groups: groups },
    paramsSchema: PreparedJobParamsSchema,
    responseSchema: TrainingJobSchema,
    options,
  });
}

/** `client.models.log` with groups already serialized and checked. */
export function logPreparedGroups(
  models: Models,
  modelId: string,
  split: string,
  groups: readonly (readonly Uint8Array[])[],
  options?: RequestOptions,
): APIPromise<LogResponse> {
  return coreOf(models, "logPreparedGroups").request({
    operation: "models.log",
    method: "POST",
    path: `/preview/models/${segment(modelId)}/log`,
    pathParams: { model_id: modelId },
    rawBody: groupsBody({ split }, "trajectory_groups", groups),
    responseSchema: LogResponseSchema,
    options,
  });
}
