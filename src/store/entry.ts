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
// (records, replay, segments) stays internal. The shapes a stored record is
// made of are listed too, so that its type reads whole from this entry.

// SFT from the best: declared in training/ (which reads the store), listed
// here beside the store a production program already imports.
export type { SftRow, SftSource } from "../training/sft-rows.js";
export {
  type SftFilter,
  type SftMetadataValue,
  type SftSelection,
  type SftSelectionCounts,
  sftRowsFromStore,
  sftRowsFromTrajectories,
} from "../training/sft-select.js";
export { TrajectoryRecorderError } from "../util/error-family.js";
export type { MessageOrChoiceWire, TrajectoryWire } from "../wire/index.js";
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
