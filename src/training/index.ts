// Training: the model handle, following jobs, SFT data and uploaders.

export { type GroupInput, toWireGroups } from "../trajectory/index.js";
export { InvalidTrainingOptionsError } from "../util/training-options-error.js";
export { type SftConfig, type TrainConfig, toExperimentalConfig, toSftConfig } from "./config.js";
export { CheckpointTimeoutError, TrainingFailedError } from "./errors.js";
export {
  type CheckpointEvaluation,
  type EvaluateCheckpointsOptions,
  type EvaluationContext,
  evaluateCheckpoints,
} from "./evaluate.js";
export {
  type FollowOptions,
  type FollowResult,
  followTrainingJob,
  type TrainingProgress,
} from "./follow.js";
export {
  INFRA_FAILURES_METRIC,
  LEFT_OUT_INFRA_FAILURE,
  splitInfraFailures,
} from "./infra-split.js";
export { LEFT_OUT_KEY, LEFT_OUT_NO_SIGNAL, markLeftOut } from "./left-out.js";
export { ART_GRADIENT_STEPS_KEY, ART_METRIC_NAMES, artMetricName } from "./metric-names.js";
export { TrainableModel } from "./model.js";
export type {
  CreatedJob,
  NoSignalPolicy,
  OpenAIWrapper,
  RegisterOptions,
  TrainResult,
  TrainRunOptions,
} from "./model-options.js";
export {
  DEFAULT_MAX_STEPS_OFF_POLICY,
  maxStepsOffPolicyProblem,
  STALE_GROUPS_METRIC,
} from "./off-policy.js";
export { type SftExample, toSftJsonl } from "./sft-data.js";
export {
  type SftRow,
  type SftSource,
  sftRowsOfTrajectory,
  type TrajectoryRows,
} from "./sft-rows.js";
export {
  type SftFilter,
  type SftMetadataValue,
  type SftSelection,
  type SftSelectionCounts,
  sftRowsFromStore,
  sftRowsFromTrajectories,
} from "./sft-select.js";
export { ART_TRAIN_DEFAULTS } from "./train-defaults.js";
export type { TrainEvery } from "./train-every.js";
export {
  type Artifact,
  type ArtifactOwner,
  type ArtifactUploader,
  LocalFileUploader,
  type PresignedTarget,
  PresignedUrlUploader,
  type PresignedUrlUploaderOptions,
} from "./uploaders.js";
export {
  DEFAULT_WANDB_BASE_URL,
  DEFAULT_WANDB_MAX_ANSWER_BYTES,
  DEFAULT_WANDB_TIMEOUTS,
  defaultSftUploader,
  manifestDigest,
  WandbApiError,
  WandbArtifactUploader,
  type WandbArtifactUploaderOptions,
  type WandbTimeouts,
} from "./wandb/index.js";
