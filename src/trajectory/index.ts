// The trajectory data model and its ART wire JSON, groups, and gathering.

export { ART_PAYLOAD_FORMAT, type ArtPayload, decodeArtPayload } from "./art-payload.js";
export { choiceToJson } from "./choice-json.js";
export {
  TooManyExceptionsError,
  TrajectoryCheckError,
  TrajectoryValidationError,
  type ValidationProblem,
} from "./errors.js";
export { exceptionToWire } from "./exception.js";
export {
  checkGroupRequest,
  type RolloutExecutor,
  type RolloutExecutorStats,
  type RolloutGroupRequest,
  type RolloutOutcome,
} from "./executor.js";
export { OutcomeChannel } from "./executor-channel.js";
export {
  InProcessExecutor,
  type InProcessExecutorOptions,
  type InProcessRolloutContext,
} from "./executor-in-process.js";
export type { MetricValue, TrajectoryFields } from "./fields.js";
export { gatherTrajectoryGroups } from "./gather.js";
export { GatherTimeoutError } from "./gather-limits.js";
export { gatherTrajectories } from "./gather-trajectories.js";
export type {
  AfterEachResult,
  GatherGroupInput,
  GatherOptions,
  GatherTrajectoriesOptions,
  TrajectoriesRollout,
} from "./gather-types.js";
export {
  PendingGroup,
  type Rollout,
  readWrittenGroup,
  TrajectoryGroup,
  type TrajectoryGroupInit,
  type TrajectoryGroupOptions,
} from "./group.js";
export { InvalidGroupDataError } from "./group-errors.js";
export {
  type GroupInput,
  groupPath,
  prepareGroup,
  prepareGroups,
  rewardSignalOf,
  toWireGroups,
} from "./group-wire.js";
export { History, type HistoryInit } from "./history.js";
export {
  countInfraFailures,
  INFRA_FAILURE_KEY,
  type InfraFailureKind,
  infraFailureOf,
  keptByApplication,
  withoutInfraFailures,
} from "./infra-failure.js";
export {
  type ChoiceTokens,
  choiceTokens,
  describeDeparture,
  duplicatePrefixTokens,
  LINEAGE_MODES,
  type LineageMode,
  lineageDeparture,
  logprobCount,
  SPLIT_LOG,
} from "./lineage.js";
export {
  type ChoiceLike,
  isChoice,
  type MessageOrChoice,
  type MessageParam,
  messagesAndChoicesToJson,
  type ToolParam,
  toChatMessage,
  toChatMessages,
} from "./messages.js";
export { oldestPolicyVersion, stepOfModelName } from "./policy-version.js";
export { PreparedGroup } from "./prepared.js";
export {
  createProgressBar,
  formatProgress,
  type GatherProgress,
  type ProgressStream,
} from "./progress.js";
// Internal: the recorder marks the Choices it captured.
export { recordedItems } from "./recorded.js";
export { hasRewardSignal } from "./signal.js";
export type { GroupSink } from "./sink.js";
export { readWrittenTrajectory, Trajectory, type TrajectoryInit } from "./trajectory.js";
export {
  FINISH_REASONS,
  type TrajectoryValidation,
  type ValidateOptions,
  type ValidationMode,
  validateTrajectory,
} from "./validate.js";
export { type GroupValidation, validateGroup } from "./validate-group.js";
export { groupTokenSharing, type TokenSharing } from "./validate-lineage.js";
export {
  type CheckedGroups,
  checkGroups,
  DEFAULT_SEND_CHECK,
  refuseUntrainableBytes,
} from "./validate-send.js";
export { checkRolloutTrajectory, type WireIssue } from "./wire-writer.js";
