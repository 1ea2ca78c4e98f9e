/**
 * What a user of the README writes: the recorder, the Training Service client and the trainable
 * model, trajectories and groups, rewards, the shipper, the uploaders, the errors a program
 * catches most, and the types these take and return.
 *
 * @packageDocumentation
 * @module trajectory-recorder
 */
// The root entry point, named one by one so the public surface reads in this
// file (its API report is api/trajectory-recorder.api.md). At most 40 values
// and 100 names (docs/development.md, "Entry points", says where every other
// name lives): every error class is in `trajectory-recorder/errors`, the run
// report in `trajectory-recorder/report`, the wire schemas and the ART helpers
// in `trajectory-recorder/wire`, what plugins and advanced code build on in
// `trajectory-recorder/core`.
// A type a root declaration takes or returns and that is not named here is
// declared in the namespace of the class or interface that uses it
// (`Checkpoints.CheckpointListParams`, `Recorder.RolloutCallOptions`, ...;
// docs/development.md, "Types reached through a namespace"), so that the
// root's API report names no type the root does not export.

// The root exports the errors a program catches most, each beside its topic;
// `TrajectoryRecorderError.isInstance(e)` says whether any error is one of the
// library's (all of them are in `trajectory-recorder/errors`). They come from
// their own modules, not from ./errors.js, which gathers the integrations'
// errors too: the root must not load the integrations.
export { APIError, TrainingClientError } from "./client/errors.js";
// The Training Service client; its resources are reached through it
// (`client.models`, ...) and their types are exported as types.
export {
  type APIPromise,
  type BackoffOptions,
  type Chat,
  type ChatCompletions,
  type Checkpoints,
  type CreateOpenAIOptions,
  type CursorPage,
  type InferenceModelRef,
  inferenceModelName,
  isRetryableError,
  type Models,
  type PagePromise,
  type RequestOptions,
  type SFTTrainingJobs,
  TrainingClient,
  type TrainingClientOptions,
  type TrainingJobEvents,
  type TrainingJobs,
} from "./client/index.js";
// Recording rollouts.
export {
  type ActiveRollout,
  currentRollout,
  Recorder,
  type RecorderOptions,
  type RolloutTrajectory,
} from "./recorder/index.js";
// Rewards.
export {
  applyGroupReward,
  applyJudge,
  applyReward,
  DEFAULT_JUDGE_RUBRIC,
  type GroupReward,
  type JudgeClient,
  type JudgeOptions,
  judgeGroup,
  minMaxRewards,
  rankRewards,
  type TrajectoryReward,
  zScores,
} from "./rewards/index.js";
export { SpoolLockedError } from "./shipper/errors.js";
// Shipping rollouts in the background.
export {
  type ShipperLogger,
  type ShipperStats,
  TrajectoryShipper,
  type TrajectoryShipperOptions,
} from "./shipper/index.js";
export { CheckpointTimeoutError, TrainingFailedError } from "./training/errors.js";
// Training: the model handle, its options and results, SFT uploaders.
export {
  type Artifact,
  type ArtifactUploader,
  type CheckpointEvaluation,
  type CreatedJob,
  type EvaluateCheckpointsOptions,
  type EvaluationContext,
  evaluateCheckpoints,
  type GroupInput,
  LocalFileUploader,
  type NoSignalPolicy,
  PresignedUrlUploader,
  type PresignedUrlUploaderOptions,
  type RegisterOptions,
  type SftConfig,
  type SftExample,
  TrainableModel,
  type TrainConfig,
  type TrainEvery,
  type TrainingProgress,
  type TrainResult,
  type TrainRunOptions,
  WandbArtifactUploader,
  type WandbArtifactUploaderOptions,
} from "./training/index.js";
export {
  TooManyExceptionsError,
  TrajectoryCheckError,
  TrajectoryValidationError,
} from "./trajectory/errors.js";
// Trajectories and groups: the data model, gathering, the check before training.
export {
  type GatherOptions,
  type GatherProgress,
  type GatherTrajectoriesOptions,
  type GroupSink,
  type GroupValidation,
  gatherTrajectories,
  gatherTrajectoryGroups,
  type History,
  hasRewardSignal,
  type MessageOrChoice,
  type MessageParam,
  type PendingGroup,
  type Rollout,
  Trajectory,
  TrajectoryGroup,
  type TrajectoryGroupInit,
  type TrajectoryGroupOptions,
  type TrajectoryInit,
  type TrajectoryValidation,
  type ValidateOptions,
  type ValidationProblem,
  validateGroup,
  validateTrajectory,
} from "./trajectory/index.js";
export { InvalidArgumentError } from "./util/argument-error.js";
export { TrajectoryRecorderError } from "./util/error-family.js";
export { InvalidTrainingOptionsError } from "./util/training-options-error.js";
// The service's objects a program holds most (every request and response
// shape, with its zod schema, is in `trajectory-recorder/wire`).
export type { Checkpoint, Model, TrainingJob, TrainingJobEvent } from "./wire/index.js";
