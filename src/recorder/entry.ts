/**
 * What framework plugins and advanced code build on: the current rollout (`currentRollout`,
 * `ActiveRollout`), recording a completion the plugin saw, stream accumulation, wrapping a
 * client; the client's promise and page classes, retry delays, the history and pending-group
 * classes. The recorder's contract is src/recorder/CORE-CONTRACT.md in the repository.
 *
 * @packageDocumentation
 * @module trajectory-recorder/core
 */
// The `trajectory-recorder/core` entry point: the recorder folder's exports
// (CORE-CONTRACT.md beside this file), plus the lower-level classes the root
// leaves out. A file of its own that no folder imports (see wire/entry.ts).

export {
  APIPromise,
  type BackoffOptions,
  type ChatCompletions,
  CursorPage,
  PagePromise,
  retryDelay,
  type ServiceChatParams,
  type SFTTrainingJobs,
  type TrainingJobEvents,
  type TrajectoryGroupParam,
  VERSION,
  type WithGroupParams,
  type WithResponse,
} from "../client/index.js";
export type { JudgeErrorPolicy, JudgeScore } from "../rewards/index.js";
// The rollout-executor seam and its training loop (docs/distributed.md, "Other engines").
export {
  type ShipperStats,
  type TrainWithExecutorOptions,
  type TrainWithExecutorResult,
  trainWithExecutor,
} from "../shipper/index.js";
export type {
  ArtifactOwner,
  FollowOptions,
  FollowResult,
  OpenAIWrapper,
  PresignedTarget,
  TrainingProgress,
  WandbTimeouts,
} from "../training/index.js";
export {
  type AfterEachResult,
  checkGroupRequest,
  type GatherGroupInput,
  History,
  type HistoryInit,
  type InfraFailureKind,
  InProcessExecutor,
  type InProcessExecutorOptions,
  type InProcessRolloutContext,
  type LineageMode,
  type MetricValue,
  PendingGroup,
  type ProgressStream,
  type RolloutExecutor,
  type RolloutExecutorStats,
  type RolloutGroupRequest,
  type RolloutOutcome,
  type TokenSharing,
  type ToolParam,
  type TrajectoriesRollout,
  type TrajectoryFields,
  type ValidationMode,
} from "../trajectory/index.js";
export { TrajectoryRecorderError } from "../util/error-family.js";
export type { TrainingJob, TrainingJobEvent } from "../wire/index.js";
export * from "./index.js";
