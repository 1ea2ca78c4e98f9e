// The client of the Training Service: request core, errors, pagination, resources.

// Shared by every folder; exported here beside the client's other error classes.
export { InvalidArgumentError } from "../util/argument-error.js";
export { TrajectoryRecorderError } from "../util/error-family.js";
export { APIPromise, type WithResponse } from "./api-promise.js";
export {
  type CreateOpenAIOptions,
  DEFAULT_BASE_URL,
  TrainingClient,
  type TrainingClientOptions,
} from "./client.js";
export type { RequestOptions } from "./core.js";
export { type CreateOutcome, createOutcome } from "./create-outcome.js";
export {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  InvalidBaseURLError,
  MissingAPIKeyError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RequestValidationError,
  redactSecret,
  TrainingClientError,
  UnprocessableEntityError,
} from "./errors.js";
export type { TrajectoryGroupParam, WithGroupParams } from "./group-param.js";
export { type InferenceModelRef, inferenceModelName } from "./model-name.js";
export { CursorPage, PagePromise } from "./pagination.js";
// Internal: the model's train and log send prepared groups through these.
export { createPreparedJob, logPreparedGroups } from "./prepared.js";
export {
  Chat,
  ChatCompletions,
  type ServiceChatParams,
  type ServiceErrorFetchOptions,
  serviceErrorFetch,
} from "./resources/chat.js";
export { Checkpoints } from "./resources/checkpoints.js";
export { Models } from "./resources/models.js";
export { SFTTrainingJobs, TrainingJobEvents, TrainingJobs } from "./resources/training-jobs.js";
export {
  abortableSleep,
  type BackoffOptions,
  isRetryableError,
  isRetryableStatus,
  retryDelay,
  serverRequestedDelay,
} from "./retry.js";
export { USER_AGENT, VERSION } from "./version.js";
