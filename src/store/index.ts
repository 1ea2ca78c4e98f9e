// The durable store of production trajectories and their feedback. Below the
// recorder and the proxy: it stores trajectory JSON (`TrajectoryWire`) and
// imports only util/ and wire/.

export { checkWrite, progressRecord } from "./check-write.js";
export {
  FeedbackConflictError,
  FeedbackNotAllowedError,
  FeedbackNotFoundError,
  FeedbackTokenError,
  type FeedbackTokenProblem,
  InvalidFeedbackError,
  StoreClosedError,
  StoreLockedError,
} from "./errors.js";
export {
  aggregateFeedback,
  FEEDBACK_FIELDS,
  type FeedbackField,
  type FeedbackInput,
  FeedbackInputSchema,
  type FeedbackOutcome,
  type FeedbackRecord,
  firstDifference,
  MAX_FEEDBACK_COMMENT,
  MAX_IDEMPOTENCY_KEY,
  parseFeedback,
  SHAPING_REWARD,
  TURN_REWARD_PREFIX,
} from "./feedback.js";
export { emptyTrajectory, interruptedRecord, keepInterruptedCall } from "./interrupted.js";
export { applyAppend, continues, type Lengths, lengthsAfter } from "./reconstruct.js";
export type { AppendRecord, CallRecord, ProgressRecord, PutRecord } from "./records.js";
export {
  checkFeedbackAllowed,
  DEFAULT_TOKEN_FIELDS,
  type FeedbackGrant,
  signFeedbackToken,
  verifyFeedbackToken,
} from "./signed.js";
export { TrajectoryStore } from "./store.js";
export type {
  CallProgress,
  CallRequest,
  ListFilter,
  MaybePromise,
  ProductionStore,
  StoreAppend,
  StoredTrajectory,
  StoreEntry,
  StoreLogger,
  StoreStats,
  TrajectoryStoreOptions,
  TrajectorySummary,
} from "./types.js";
