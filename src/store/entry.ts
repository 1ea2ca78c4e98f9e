/**
 * The durable store of production trajectories (sessions and rollouts written
 * after every call, crash-safe), their feedback by id, and signed feedback
 * tokens for browsers. See docs/production.md.
 *
 * @packageDocumentation
 * @module trajectory-recorder/store
 */
// The `trajectory-recorder/store` entry point: what a program opens a store
// and sends feedback with. A file of its own, so the folder's plumbing
// (records, replay, segments) stays internal.
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
  FEEDBACK_FIELDS,
  type FeedbackField,
  type FeedbackInput,
  FeedbackInputSchema,
  type FeedbackRecord,
  SHAPING_REWARD,
  TURN_REWARD_PREFIX,
} from "./feedback.js";
export {
  checkFeedbackAllowed,
  type FeedbackGrant,
  signFeedbackToken,
  verifyFeedbackToken,
} from "./signed.js";
export {
  type CallProgress,
  type CallRequest,
  type ListFilter,
  type StoredTrajectory,
  type StoreEntry,
  type StoreLogger,
  type StoreStats,
  TrajectoryStore,
  type TrajectoryStoreOptions,
  type TrajectorySummary,
} from "./store.js";
