// The shipper's counters and where it reports what went wrong.

/** Where the shipper writes what it could not ship. Default: `console`. */
export interface ShipperLogger {
  /** Something went wrong and was handled (a retry, a group kept on disk). */
  warn(message: string): void;
  /** Something was lost or needs action. */
  error(message: string): void;
  /** Notes that need no action (groups left out of training for no reward signal); `warn` when absent. */
  info?(message: string): void;
}

/** Counters of a shipper. */
export interface ShipperStats {
  /** Groups accepted but not yet confirmed (in memory or in flight). */
  queued: number;
  /** Groups the service confirmed. */
  shipped: number;
  /** Retried attempts. */
  retried: number;
  /**
   * Groups given up on: refused or failing past `maxAttempts`, still unshipped
   * when `close` ran out of time, or in a failed training job. Kept in
   * `failedGroups()` (and in the spool).
   */
  failed: number;
  /** Groups on disk in the spool. */
  spooled: number;
  /** Spool files left by an earlier run that could not be read; left in place and logged. */
  unreadable: number;
  /** Training jobs that ended successfully. */
  trainingJobs: number;
  /** Training jobs that failed or could not be started; their groups are kept and counted in `failed`. */
  trainingFailed: number;
  /**
   * Training jobs the shipper stopped following before they ended: `close`
   * ran out of time, or polling kept failing. With a spool, the next start
   * follows them to their end (their groups are not trained again).
   */
  trainingAbandoned: number;
  /**
   * Logged groups left out of the training jobs because their rewards are
   * all equal (no reward signal; `trainEvery.noSignal`, default `"skip"`).
   */
  noSignal: number;
  /**
   * Logged groups left out of a training job because they were sampled more
   * than `trainEvery.maxStepsOffPolicy` steps before the checkpoint it
   * trained (too far off-policy; default 4 steps).
   */
  stale: number;
  /** Logged groups waiting for the next training job. */
  awaitingTraining: number;
}

/** The counters the shipper keeps itself (the others are derived). */
export type Counters = Omit<ShipperStats, "queued" | "awaitingTraining">;

export function newCounters(): Counters {
  return {
    shipped: 0,
    retried: 0,
    failed: 0,
    spooled: 0,
    unreadable: 0,
    trainingJobs: 0,
    trainingFailed: 0,
    trainingAbandoned: 0,
    noSignal: 0,
    stale: 0,
  };
}
