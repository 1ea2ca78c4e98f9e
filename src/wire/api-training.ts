// Request and response shapes of the Training Service's training job endpoints
// (RL and SFT jobs, and their events), as they travel (snake_case). Requests
// are strict enough to reject a bad call before it is sent; responses are loose
// so fields the service adds later are kept.
import { z } from "zod";
import { IdSchema, PaginatedResponseSchema } from "./api-models.js";
import { sameType } from "./same-type.js";
import { TrajectoryGroupWireSchema } from "./trajectory.js";

const uuid = IdSchema;

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

/** Schema of a page of training job events. */
export const TrainingJobEventPageSchema = PaginatedResponseSchema(TrainingJobEventSchema);
