/**
 * Every error class the package throws, under one base: `TrajectoryRecorderError.isInstance(e)`
 * says whether an error is one of the library's, from any entry point or copy of the package, and
 * each class has its own `isInstance` (`NotFoundError.isInstance(e)`).
 *
 * @packageDocumentation
 * @module trajectory-recorder/errors
 */
// The `trajectory-recorder/errors` entry point. A file of its own: no folder
// imports it, and neither does the root (which takes its few errors from
// their own modules), since this one loads the integrations' errors too.
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
  TrainingClientError,
  UnprocessableEntityError,
} from "./client/errors.js";
export {
  InvalidGroupError,
  RedisUnavailableError,
  RolloutResultError,
} from "./integrations/bullmq/errors.js";
export { RolloutAbortedError } from "./recorder/errors.js";
export { ReportSourceError, type ReportSourceProblem } from "./report/errors.js";
export { InvalidRewardError } from "./rewards/apply.js";
export { JudgeResponseError } from "./rewards/judge.js";
export { SpoolLockedError, type SpoolLockHolder } from "./shipper/errors.js";
export { CheckpointTimeoutError, TrainingFailedError } from "./training/errors.js";
export { WandbApiError } from "./training/wandb/index.js";
export {
  TooManyExceptionsError,
  TrajectoryCheckError,
  TrajectoryValidationError,
  type ValidationProblem,
} from "./trajectory/errors.js";
export { GatherTimeoutError } from "./trajectory/gather-limits.js";
export { InvalidGroupDataError } from "./trajectory/group-errors.js";
export { InvalidArgumentError } from "./util/argument-error.js";
export { TrajectoryRecorderError } from "./util/error-family.js";
export { InvalidTrainingOptionsError } from "./util/training-options-error.js";
// What `UnprocessableEntityError.detail` lists.
export type { ValidationErrorItem } from "./wire/index.js";
