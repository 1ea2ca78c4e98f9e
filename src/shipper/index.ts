// The shipper: queue, retries, spool, training every N groups.
export { SpoolLockedError, type SpoolLockHolder } from "./errors.js";
export {
  type ShipperLogger,
  type ShipperStats,
  TrajectoryShipper,
  type TrajectoryShipperOptions,
} from "./shipper.js";
export {
  type TrainWithExecutorOptions,
  type TrainWithExecutorResult,
  trainWithExecutor,
} from "./train-with-executor.js";
