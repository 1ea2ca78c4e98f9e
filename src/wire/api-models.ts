// Request and response shapes of the Training Service's REST endpoints, as they
// travel (snake_case): ids, models, their checkpoints and logged groups, and
// cursor pages. Requests are strict enough to reject a bad call before it is
// sent; responses are loose so fields the service adds later are kept.
// Training jobs are in api-training.ts; errors, health and checks in
// api-service.ts.
import { z } from "zod";
import { sameType } from "./same-type.js";
import { TrajectoryGroupWireSchema } from "./trajectory.js";

// Every id of the service is a UUID (any version); the service answers 422 otherwise.
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An id of the service: a UUID string. */
export const IdSchema = z
  .string({ error: "expected a UUID string" })
  .regex(UUID_PATTERN, { error: "expected a UUID string" });

// ---------------------------------------------------------------- models

/**
 * Body of `POST /v1/preview/models`.
 *
 * @example
 * ModelCreateParamsSchema.parse({ project: "demo", name: "agent-001", base_model: "OpenPipe/Qwen3-14B-Instruct" });
 */
export const ModelCreateParamsSchema = z.strictObject({
  project: z.string().min(1),
  name: z.string().min(1),
  base_model: z.string().min(1),
  entity: z.string().min(1).nullish(),
  return_existing: z.boolean().optional(),
});
/** Body of `POST /v1/preview/models`. */
export interface ModelCreateParams {
  /** The project the model belongs to. */
  project: string;
  /** Its name in the project. */
  name: string;
  /** The base model it fine-tunes, e.g. `"OpenPipe/Qwen3-14B-Instruct"`. */
  base_model: string;
  /** The team or user that owns it (the key's default entity when left out). */
  entity?: string | null | undefined;
  /** Returns the model of the same name when there is one, instead of failing. */
  return_existing?: boolean | undefined;
}
sameType<ModelCreateParams, z.input<typeof ModelCreateParamsSchema>>(true);

/**
 * A trainable model as the service returns it.
 *
 * @example
 * const model: Model = ModelSchema.parse(await res.json());
 */
export const ModelSchema = z.looseObject({
  id: z.string(),
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  base_model: z.string(),
  run_id: z.string().nullish(),
});
/**
 * A trainable model as the service returns it. Its shape is what `ModelSchema` returns
 * (fields the service adds later are kept).
 */
export interface Model {
  /** The model's id (a UUID). */
  id: string;
  /** The team or user that owns it. */
  entity: string;
  /** Its project. */
  project: string;
  /** Its name in the project. */
  name: string;
  /** The base model it fine-tunes. */
  base_model: string;
  /** The W&B run its training logs to, when there is one. */
  run_id?: string | null | undefined;
  /** Fields the service adds later, kept as sent. */
  [key: string]: unknown;
}
sameType<Model, z.infer<typeof ModelSchema>>(true);

/**
 * Response of `DELETE /v1/preview/models/{model_id}`.
 *
 * @example
 * const { deleted_checkpoints } = ModelDeleteResponseSchema.parse(body);
 */
export const ModelDeleteResponseSchema = z.looseObject({
  model_id: z.string(),
  deleted_checkpoints: z.number().int(),
  deleted_run: z.boolean(),
});
/** Response of `DELETE /v1/preview/models/{model_id}`. */
export interface ModelDeleteResponse {
  /** The deleted model's id. */
  model_id: string;
  /** How many of its checkpoints were deleted. */
  deleted_checkpoints: number;
  /** Whether its tracking run was deleted. */
  deleted_run: boolean;
  /** Fields the service adds later, kept as sent. */
  [key: string]: unknown;
}
sameType<ModelDeleteResponse, z.infer<typeof ModelDeleteResponseSchema>>(true);

// ---------------------------------------------------------------- checkpoints

/**
 * One checkpoint of a model: its training step and free-form metrics.
 *
 * @example
 * const cp: Checkpoint = CheckpointSchema.parse({ id, step: 3, metrics: { reward: 0.5 } });
 */
export const CheckpointSchema = z.looseObject({
  id: z.string(),
  step: z.number().int(),
  metrics: z.record(z.string(), z.unknown()).default({}),
});
/**
 * One checkpoint of a model: its training step and free-form metrics. Its shape is what
 * `CheckpointSchema` returns.
 */
export interface Checkpoint {
  /** The checkpoint's id. */
  id: string;
  /** The training step it was saved at. */
  step: number;
  /** Free-form metrics of the step (`{}` when the service sent none). */
  metrics: Record<string, unknown>;
  /** Fields the service adds later, kept as sent. */
  [key: string]: unknown;
}
sameType<Checkpoint, z.infer<typeof CheckpointSchema>>(true);

/**
 * Query of `GET /v1/preview/models/{model_id}/checkpoints`.
 *
 * @example
 * CheckpointListParamsSchema.parse({ limit: 1, order: "desc" });
 */
export const CheckpointListParamsSchema = z.strictObject({
  after: z.string().min(1).optional(),
  limit: z.number().int().min(1).max(100).optional(),
  order: z.enum(["asc", "desc"]).optional(),
});
/** Query of `GET /v1/preview/models/{model_id}/checkpoints`. */
export interface CheckpointListParams {
  /** The cursor: the id of the last checkpoint already seen. */
  after?: string | undefined;
  /** How many checkpoints a page holds, 1 to 100. */
  limit?: number | undefined;
  /** By step, ascending or descending. */
  order?: "asc" | "desc" | undefined;
}
sameType<CheckpointListParams, z.input<typeof CheckpointListParamsSchema>>(true);

/**
 * Body of `DELETE /v1/preview/models/{model_id}/checkpoints`.
 *
 * @example
 * CheckpointDeleteParamsSchema.parse({ steps: [1, 2] });
 */
export const CheckpointDeleteParamsSchema = z.strictObject({
  steps: z.array(z.number().int().min(0)),
});
/** Body of `DELETE /v1/preview/models/{model_id}/checkpoints`. */
export interface CheckpointDeleteParams {
  /** The training steps whose checkpoints go. */
  steps: number[];
}
sameType<CheckpointDeleteParams, z.input<typeof CheckpointDeleteParamsSchema>>(true);

/**
 * Response of `DELETE /v1/preview/models/{model_id}/checkpoints`: steps that did
 * not exist are reported, not treated as an error.
 *
 * @example
 * const { deleted_count, not_found_steps } = CheckpointDeleteResponseSchema.parse(body);
 */
export const CheckpointDeleteResponseSchema = z.looseObject({
  deleted_count: z.number().int(),
  not_found_steps: z.array(z.number().int()).default([]),
});
/** Response of `DELETE /v1/preview/models/{model_id}/checkpoints`. */
export interface CheckpointDeleteResponse {
  /** How many checkpoints were deleted. */
  deleted_count: number;
  /** The steps asked for that had no checkpoint (not an error). */
  not_found_steps: number[];
  /** Fields the service adds later, kept as sent. */
  [key: string]: unknown;
}
sameType<CheckpointDeleteResponse, z.infer<typeof CheckpointDeleteResponseSchema>>(true);

// ---------------------------------------------------------------- log

/**
 * Body of `POST /v1/preview/models/{model_id}/log`.
 *
 * @example
 * LogParamsSchema.parse({ split: "val", trajectory_groups: [{ trajectories: [] }] });
 */
export const LogParamsSchema = z.strictObject({
  split: z.string().min(1),
  trajectory_groups: z.array(TrajectoryGroupWireSchema),
});
/**
 * Body of `POST /v1/preview/models/{model_id}/log`. Its shape is what `LogParamsSchema` accepts.
 */
export type LogParams = z.input<typeof LogParamsSchema>;

/**
 * Response of the log endpoint; the service documents it as "anything".
 *
 * @example
 * const out: LogResponse = LogResponseSchema.parse(body ?? {});
 */
export const LogResponseSchema = z.looseObject({});
/** Response of `POST /v1/preview/models/{model_id}/log`: the service documents it as "anything". */
export interface LogResponse {
  /** Whatever the service sends, kept as sent. */
  [key: string]: unknown;
}
sameType<LogResponse, z.infer<typeof LogResponseSchema>>(true);

// ---------------------------------------------------------------- pagination

/**
 * Builds the schema of a cursor page of `item`: `{object: "list", data, first_id,
 * last_id, has_more}`.
 *
 * @example
 * const CheckpointPage = PaginatedResponseSchema(CheckpointSchema);
 */
export function PaginatedResponseSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    object: z.string().default("list"),
    data: z.array(item),
    // The service's default is "" (some servers send null for an empty page).
    first_id: z
      .string()
      .nullish()
      .transform((id) => id ?? ""),
    last_id: z
      .string()
      .nullish()
      .transform((id) => id ?? ""),
    has_more: z.boolean().default(false),
  });
}
/** A page of items as it travels. */
export type PaginatedResponse<T> = {
  object: string;
  data: T[];
  first_id?: string | null;
  last_id?: string | null;
  has_more: boolean;
  [key: string]: unknown;
};

/** Schema of a page of checkpoints. */
export const CheckpointPageSchema = PaginatedResponseSchema(CheckpointSchema);
