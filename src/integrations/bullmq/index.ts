/**
 * Rollouts across many processes and machines on BullMQ and Redis, with a training coordinator.
 * Needs `bullmq` (and its `ioredis`).
 *
 * @packageDocumentation
 * @module trajectory-recorder/bullmq
 */
// trajectory-recorder/bullmq: rollouts across many processes and machines on
// BullMQ and Redis, with a training coordinator. Needs `bullmq` (and its
// `ioredis`); importing the root of the package never loads them.
export type { RolloutRef } from "./claim-check.js";
export { GroupCollector, type GroupCollectorOptions } from "./collector.js";
export { drain, handAgain, retrain, unhanded } from "./control.js";
export {
  type CoordinatorBaseOptions,
  type CoordinatorSinkOptions,
  type CoordinatorTrainingOptions,
  TrainingCoordinator,
  type TrainingCoordinatorOptions,
} from "./coordinator.js";
export { InvalidGroupError, RedisUnavailableError, RolloutResultError } from "./errors.js";
export { BullMQExecutor, type BullMQExecutorOptions } from "./executor.js";
export type { UnhandedGroups } from "./handoff.js";
export type { ClusterOptions } from "./options.js";
export { DirectoryPayloadStore, type DirectoryPayloadStoreOptions } from "./payload-directory.js";
export {
  type PayloadStore,
  RedisPayloadStore,
  type RedisPayloadStoreOptions,
} from "./payload-store.js";
export {
  type GroupJobData,
  type GroupSpec,
  type KeepJobs,
  type RolloutJobData,
  RolloutProducer,
  type RolloutProducerOptions,
} from "./producer.js";
export {
  type ClusterProgress,
  GROUP_STATES,
  type GroupState,
  type ReadProgressOptions,
  readProgress,
} from "./progress.js";
export type { DistributedLogger } from "./redis.js";
export type { StaleMode } from "./store.js";
export { RedisTrajectoryStore, type RedisTrajectoryStoreOptions } from "./trajectory-store.js";
export { type RolloutContext, RolloutWorker, type RolloutWorkerOptions } from "./worker.js";
