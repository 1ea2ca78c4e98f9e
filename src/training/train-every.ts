import type { TrainConfig } from "./config.js";
import type { NoSignalPolicy } from "./model.js";

/**
 * When and how a process that collects groups trains on them: a training job
 * (`model.train`) every `groups` groups, with `config`, one job at a time.
 * The same object on `TrajectoryShipper` and `TrainingCoordinator`.
 *
 * @example
 * const trainEvery: TrainEvery = { groups: 8, config: { learningRate: 1e-5 } };
 */
export interface TrainEvery {
  /** Groups per training job (a positive integer). */
  groups: number;
  /** The jobs' training options (`learningRate`, ...). */
  config?: TrainConfig;
  /** How often a job's progress is polled, in ms (passed to `train`). */
  pollIntervalMs?: number;
  /**
   * Groups whose rewards are all equal teach nothing (every advantage is
   * zero): `"skip"` (default) leaves them out of the jobs (they are still
   * logged to the step, marked as not trained); `"send"` trains on them too.
   */
  noSignal?: NoSignalPolicy;
  /**
   * Groups sampled more than this many steps before the checkpoint a job
   * trains (their oldest trajectory's `initial_policy_version`) are dropped
   * from it, logged and counted (passed to `train`). Default 4, as ART's
   * pipeline trainer; `Infinity` keeps every group; a trajectory without a
   * version is never dropped.
   */
  maxStepsOffPolicy?: number;
}
