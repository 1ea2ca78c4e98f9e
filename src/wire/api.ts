// Request and response shapes of the Training Service's REST endpoints, as they
// travel (snake_case). Requests are strict enough to reject a bad call before it
// is sent; responses are loose so fields the service adds later are kept.
import { z } from "zod";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { sameType } from "./same-type.js";
import { TrajectoryGroupWireSchema } from "./trajectory.js";

// Every id of the service is a UUID (any version); the service answers 422 otherwise.
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An id of the service: a UUID string. */
export const IdSchema = z
  .string({ error: "expected a UUID string" })
  .regex(UUID_PATTERN, { error: "expected a UUID string" });
const uuid = IdSchema;

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

// ---------------------------------------------------------------- RL training jobs

const nullableNumber = z.number().nullish();
const nullableBool = z.boolean().nullish();
const nullableInt = z.number().int().nullish();

/**
 * Optional knobs of an RL training job (`experimental_config`). Every key is
 * optional and may be `null`; unknown keys are rejected so a typo is caught
 * before the job is created.
 *
 * @example
 * ExperimentalTrainingConfigSchema.parse({ learning_rate: 5e-6, importance_sampling_level: "token" });
 */
export const ExperimentalTrainingConfigSchema = z.strictObject({
  advantage_balance: nullableNumber,
  allow_training_without_logprobs: nullableBool,
  epsilon: nullableNumber,
  epsilon_high: nullableNumber,
  importance_sampling_level: z
    .enum(["token", "sequence", "average", "geometric_average"])
    .nullish(),
  kimi_k2_tau: nullableNumber,
  kl_penalty_coef: nullableNumber,
  kl_penalty_reference_step: z.number().int().min(0).nullish(),
  kl_penalty_source: z.enum(["current_learner", "sample"]).nullish(),
  kl_penalty_step_lag: z.number().int().min(1).nullish(),
  kl_ref_adapter_path: z.string().nullish(),
  learning_rate: nullableNumber,
  logprob_calculation_chunk_size: nullableInt,
  loss_fn: z.enum(["cispo", "ppo"]).nullish(),
  mask_prob_ratio: nullableBool,
  max_negative_advantage_importance_sampling_weight: nullableNumber,
  normalize_advantages: nullableBool,
  num_trajectories_learning_rate_multiplier_power: nullableNumber,
  packed_sequence_length: nullableInt,
  plot_tensors: nullableBool,
  ppo: nullableBool,
  precalculate_logprobs: nullableBool,
  scale_learning_rate_by_reward_std_dev: nullableBool,
  scale_rewards: nullableBool,
  truncated_importance_sampling: nullableNumber,
});
/**
 * Optional knobs of an RL training job, as the service takes them: the
 * snake_case keys of `TrainConfig`. A key it does not know is refused before
 * anything is sent.
 */
export interface ExperimentalTrainingConfig {
  /** `TrainConfig.advantageBalance`. */
  advantage_balance?: number | null | undefined;
  /** `TrainConfig.allowTrainingWithoutLogprobs`. */
  allow_training_without_logprobs?: boolean | null | undefined;
  /** `TrainConfig.epsilon`. */
  epsilon?: number | null | undefined;
  /** `TrainConfig.epsilonHigh`. */
  epsilon_high?: number | null | undefined;
  /** `TrainConfig.importanceSamplingLevel`. */
  importance_sampling_level?:
    | "token"
    | "sequence"
    | "average"
    | "geometric_average"
    | null
    | undefined;
  /** `TrainConfig.kimiK2Tau`. */
  kimi_k2_tau?: number | null | undefined;
  /** `TrainConfig.klPenaltyCoef`. */
  kl_penalty_coef?: number | null | undefined;
  /** `TrainConfig.klPenaltyReferenceStep`. */
  kl_penalty_reference_step?: number | null | undefined;
  /** `TrainConfig.klPenaltySource`. */
  kl_penalty_source?: "current_learner" | "sample" | null | undefined;
  /** `TrainConfig.klPenaltyStepLag`. */
  kl_penalty_step_lag?: number | null | undefined;
  /** `TrainConfig.klRefAdapterPath`. */
  kl_ref_adapter_path?: string | null | undefined;
  /** `TrainConfig.learningRate`. */
  learning_rate?: number | null | undefined;
  /** `TrainConfig.logprobCalculationChunkSize`. */
  logprob_calculation_chunk_size?: number | null | undefined;
  /** `TrainConfig.lossFn`. */
  loss_fn?: "cispo" | "ppo" | null | undefined;
  /** `TrainConfig.maskProbRatio`. */
  mask_prob_ratio?: boolean | null | undefined;
  /** `TrainConfig.maxNegativeAdvantageImportanceSamplingWeight`. */
  max_negative_advantage_importance_sampling_weight?: number | null | undefined;
  /** `TrainConfig.normalizeAdvantages`. */
  normalize_advantages?: boolean | null | undefined;
  /** `TrainConfig.numTrajectoriesLearningRateMultiplierPower`. */
  num_trajectories_learning_rate_multiplier_power?: number | null | undefined;
  /** `TrainConfig.packedSequenceLength`. */
  packed_sequence_length?: number | null | undefined;
  /** `TrainConfig.plotTensors`. */
  plot_tensors?: boolean | null | undefined;
  /** `TrainConfig.ppo`. */
  ppo?: boolean | null | undefined;
  /** `TrainConfig.precalculateLogprobs`. */
  precalculate_logprobs?: boolean | null | undefined;
  /** `TrainConfig.scaleLearningRateByRewardStdDev`. */
  scale_learning_rate_by_reward_std_dev?: boolean | null | undefined;
  /** `TrainConfig.scaleRewards`. */
  scale_rewards?: boolean | null | undefined;
  /** `TrainConfig.truncatedImportanceSampling`. */
  truncated_importance_sampling?: number | null | undefined;
}
sameType<ExperimentalTrainingConfig, z.input<typeof ExperimentalTrainingConfigSchema>>(true);

/**
 * Body of `POST /v1/preview/training-jobs`.
 *
 * @example
 * TrainingJobCreateParamsSchema.parse({ model_id, trajectory_groups: groups });
 */
export const TrainingJobCreateParamsSchema = z.strictObject({
  model_id: uuid,
  trajectory_groups: z.array(TrajectoryGroupWireSchema).min(1),
  experimental_config: ExperimentalTrainingConfigSchema.nullish(),
});
/**
 * Body of `POST /v1/preview/training-jobs`. Its shape is what `TrainingJobCreateParamsSchema`
 * accepts.
 */
export type TrainingJobCreateParams = z.input<typeof TrainingJobCreateParamsSchema>;

/**
 * A training job. The spec only promises `id`; the status fields some
 * deployments add are typed when present and kept otherwise.
 *
 * @example
 * const job: TrainingJob = TrainingJobSchema.parse({ id });
 */
export const TrainingJobSchema = z.looseObject({
  id: z.string(),
  status: z.string().nullish(),
  training_start: z.string().nullish(),
  training_end: z.string().nullish(),
  error_message: z.string().nullish(),
});
/**
 * A training job. Its shape is what `TrainingJobSchema` returns: the spec only
 * promises `id`, the status fields are kept when the service sends them.
 */
export interface TrainingJob {
  /** The job's id. */
  id: string;
  /** Its status, e.g. `"running"`, when reported. */
  status?: string | null | undefined;
  /** When training began (ISO 8601), when reported. */
  training_start?: string | null | undefined;
  /** When training ended (ISO 8601), when reported. */
  training_end?: string | null | undefined;
  /** Why it failed, when it did. */
  error_message?: string | null | undefined;
  /** Fields the service adds later, kept as sent. */
  [key: string]: unknown;
}
sameType<TrainingJob, z.infer<typeof TrainingJobSchema>>(true);

/** The four kinds of training job event, in the order a job emits them. */
export const TrainingJobEventTypeSchema = z.enum([
  "training_started",
  "gradient_step",
  "training_ended",
  "training_failed",
]);
/**
 * The four kinds of training job event, in the order a job emits them. Its shape is what
 * `TrainingJobEventTypeSchema` returns.
 */
export type TrainingJobEventType =
  | "training_started"
  | "gradient_step"
  | "training_ended"
  | "training_failed";
sameType<TrainingJobEventType, z.infer<typeof TrainingJobEventTypeSchema>>(true);

/**
 * One event of a training job (`training_started` carries `num_sequences`,
 * `gradient_step` carries numeric metrics, `training_failed` an `error_message`).
 *
 * @example
 * const ev: TrainingJobEvent = TrainingJobEventSchema.parse({ id, type: "gradient_step", data: { loss: 0.1 } });
 */
export const TrainingJobEventSchema = z.looseObject({
  id: z.string(),
  // An event type this client does not know yet is kept, not rejected, so one
  // new kind of event cannot break following a job.
  type: z.union([TrainingJobEventTypeSchema, z.string() as z.ZodType<string & {}>]),
  data: z.record(z.string(), z.unknown()).default({}),
});
/**
 * One event of a training job (`training_started` carries `num_sequences`, `gradient_step` carries
 * numeric metrics, `training_failed` an `error_message`). Its shape is what
 * `TrainingJobEventSchema` returns.
 */
export interface TrainingJobEvent {
  /** The event's id: pass it as `after` to read the events that follow. */
  id: string;
  /** One of the four known kinds, or a newer kind kept as its string. */
  type: "training_started" | "gradient_step" | "training_ended" | "training_failed" | (string & {});
  /** What the event carries (`{}` when the service sent nothing). */
  data: Record<string, unknown>;
  /** Fields the service adds later, kept as sent. */
  [key: string]: unknown;
}
sameType<TrainingJobEvent, z.infer<typeof TrainingJobEventSchema>>(true);

/**
 * Query of `GET /v1/preview/training-jobs/{id}/events`.
 *
 * @example
 * EventListParamsSchema.parse({ after: lastEventId, limit: 100 });
 */
export const EventListParamsSchema = z.strictObject({
  after: z.string().min(1).optional(),
  limit: z.number().int().min(1).max(100).optional(),
});
/** Query of `GET /v1/preview/training-jobs/{training_job_id}/events`. */
export interface EventListParams {
  /** The cursor: the id of the last event already seen (exclusive). */
  after?: string | undefined;
  /** How many events a page holds, 1 to 100. */
  limit?: number | undefined;
}
sameType<EventListParams, z.input<typeof EventListParamsSchema>>(true);

// ---------------------------------------------------------------- SFT training jobs

/**
 * `config` of an SFT job. `batch_size` may be `"auto"`; `learning_rate` may be a
 * per-batch list.
 *
 * @example
 * SFTTrainingConfigSchema.parse({ batch_size: 2, learning_rate: 5e-5 });
 */
export const SFTTrainingConfigSchema = z.looseObject({
  batch_size: z.union([z.number().int().min(1), z.literal("auto")]).nullish(),
  learning_rate: z.union([z.number(), z.array(z.number())]).nullish(),
  metric_logging: z
    .looseObject({
      enabled: z.boolean().optional(),
      target_training_step: z.number().int().optional(),
    })
    .nullish(),
});
/** Settings of an SFT job, as the service takes them (`SftConfig` is the camelCase form). */
export interface SFTTrainingConfig {
  /** Examples per batch, or `"auto"` for the service's choice. */
  batch_size?: number | "auto" | null | undefined;
  /** One learning rate, or one per batch. */
  learning_rate?: number | number[] | null | undefined;
  /** The service's metric logging of the job. */
  metric_logging?:
    | {
        /** Whether the job logs metrics. */
        enabled?: boolean | undefined;
        /** The step the metrics are logged at. */
        target_training_step?: number | undefined;
        /** Keys the service adds later, passed through. */
        [key: string]: unknown;
      }
    | null
    | undefined;
  /** Keys the service adds later, passed through. */
  [key: string]: unknown;
}
sameType<SFTTrainingConfig, z.input<typeof SFTTrainingConfigSchema>>(true);

/**
 * Body of `POST /v1/preview/sft-training-jobs`.
 *
 * @example
 * SFTTrainingJobCreateParamsSchema.parse({ model_id, training_data_url: "wandb-artifact:///e/p/data:v0" });
 */
export const SFTTrainingJobCreateParamsSchema = z.strictObject({
  model_id: uuid,
  training_data_url: z.string().min(1),
  config: SFTTrainingConfigSchema.nullish(),
  experimental_config: z.record(z.string(), z.unknown()).nullish(),
});
/** Body of `POST /v1/preview/sft-training-jobs`. */
export interface SFTTrainingJobCreateParams {
  /** The model to train (its id, a UUID). */
  model_id: string;
  /** Where the service reads the JSONL training file (an uploader's URL). */
  training_data_url: string;
  /** The job's settings. */
  config?: SFTTrainingConfig | null | undefined;
  /** Settings the service has not made official, passed through as given. */
  experimental_config?: Record<string, unknown> | null | undefined;
}
sameType<SFTTrainingJobCreateParams, z.input<typeof SFTTrainingJobCreateParamsSchema>>(true);

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
/** Schema of a page of training job events. */
export const TrainingJobEventPageSchema = PaginatedResponseSchema(TrainingJobEventSchema);

// ---------------------------------------------------------------- errors and checks

/**
 * One item of a FastAPI-style validation error.
 *
 * @example
 * const item: ValidationErrorItem = { loc: ["body", "split"], msg: "Field required", type: "missing" };
 */
export const ValidationErrorItemSchema = z.looseObject({
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  type: z.string(),
});
/**
 * One item of a FastAPI-style validation error. Its shape is what `ValidationErrorItemSchema`
 * returns.
 */
export type ValidationErrorItem = z.infer<typeof ValidationErrorItemSchema>;

/**
 * The service's 422 body: `{detail: [{loc, msg, type}]}`.
 *
 * @example
 * const parsed = HTTPValidationErrorSchema.safeParse(body);
 */
export const HTTPValidationErrorSchema = z.looseObject({
  detail: z.array(ValidationErrorItemSchema),
});
/**
 * The service's 422 body: `{detail: [{loc, msg, type}]}`. Its shape is what
 * `HTTPValidationErrorSchema` returns.
 */
export type HTTPValidationError = z.infer<typeof HTTPValidationErrorSchema>;

/**
 * Response of `GET /v1/health`; its shape is not documented, so anything is kept.
 *
 * @example
 * const { status } = HealthResponseSchema.parse(body);
 */
export const HealthResponseSchema = z.looseObject({ status: z.string().optional() });
/** Response of `GET /v1/health`; its shape is not documented, so every key is kept. */
export interface HealthResponse {
  /** The service's status, e.g. `"ok"`, when it says one. */
  status?: string | undefined;
  /** Fields the service sends, kept as sent. */
  [key: string]: unknown;
}
sameType<HealthResponse, z.infer<typeof HealthResponseSchema>>(true);

/**
 * Response of `GET /v1/system-check`; the service answers 503 when a check fails.
 * The contract names `api`, `database`, `cpu_queue` and `gpu_queue` but does
 * not publish their shapes, so every key is kept as sent.
 *
 * @example
 * const report = SystemCheckResponseSchema.parse(body);
 */
export const SystemCheckResponseSchema = z.looseObject({ status: z.string().optional() });
/**
 * Response of `GET /v1/system-check` (a failed check answers 503). The contract
 * names `api`, `database`, `cpu_queue` and `gpu_queue` without their shapes, so
 * every key is kept as sent.
 */
export interface SystemCheckResponse {
  /** The overall status, when the service says one. */
  status?: string | undefined;
  /** The checks, kept as sent. */
  [key: string]: unknown;
}
sameType<SystemCheckResponse, z.infer<typeof SystemCheckResponseSchema>>(true);

// ---------------------------------------------------------------- zod issues as FastAPI items

/**
 * Renders a zod path as `a.b[0].c`, or `(root)` when empty.
 *
 * @example
 * formatZodPath(["trajectory_groups", 0, "trajectories"]); // "trajectory_groups[0].trajectories"
 */
export function formatZodPath(path: readonly PropertyKey[]): string {
  checkPath("formatZodPath(path)", "path", path);
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(root)" : out;
}

/**
 * Turns a zod error into FastAPI-style `{loc, msg, type}` items, `loc` starting
 * with where the value came from (`"body"`, `"query"` or `"path"`).
 *
 * @example
 * const r = LogParamsSchema.safeParse(body);
 * if (!r.success) reply(422, { detail: zodIssuesToValidationItems(r.error, "body") });
 */
export function zodIssuesToValidationItems(
  error: z.ZodError,
  location: "body" | "query" | "path",
): ValidationErrorItem[] {
  const call = "zodIssuesToValidationItems(error, location)";
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues))
    throw new InvalidArgumentError(call, "error", "a ZodError (an object with issues)", error);
  if (location !== "body" && location !== "query" && location !== "path")
    throw new InvalidArgumentError(call, "location", '"body", "query" or "path"', location);
  issues.forEach((issue: unknown, i) => {
    if (!isObjectLike(issue) || typeof issue.message !== "string")
      throw new InvalidArgumentError(call, `error.issues[${i}]`, "a zod issue", issue);
    checkPath(call, `error.issues[${i}].path`, issue.path);
  });
  return error.issues.map((issue) => ({
    loc: [location, ...issue.path.map((k) => (typeof k === "number" ? k : String(k)))],
    msg: issue.message,
    type: issueType(issue),
  }));
}

// Keys only: an object in a path would be stringified, without bound for a deep one.
function checkPath(call: string, name: string, path: unknown): asserts path is PropertyKey[] {
  if (!Array.isArray(path))
    throw new InvalidArgumentError(call, name, "an array of keys (strings, numbers)", path);
  for (let i = 0; i < path.length; i++) {
    const key: unknown = path[i];
    if (typeof key !== "string" && typeof key !== "number" && typeof key !== "symbol")
      throw new InvalidArgumentError(call, `${name}[${i}]`, "a string, number or symbol key", key);
  }
}

function issueType(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return "missing";
  if (issue.code === "unrecognized_keys") return "extra_forbidden";
  return issue.code;
}
