import { markError, TrajectoryRecorderError } from "../util/error-family.js";
/**
 * A training job ended with `training_failed`. `message` carries the service's
 * `error_message`; `jobId` names the job.
 *
 * @example
 * try { await model.train(groups); } catch (err) { if (err instanceof TrainingFailedError) console.error(err.jobId, err.serviceMessage); }
 */
export class TrainingFailedError extends TrajectoryRecorderError {
  static {
    markError(TrainingFailedError, "TrainingFailedError");
  }
  /** The class's name, `"TrainingFailedError"` (what `error.name` reads). */
  override name = "TrainingFailedError";
  /** The job that failed. */
  readonly jobId: string;
  /** The service's own words, as sent in the event's `error_message`. */
  readonly serviceMessage: string;
  constructor(jobId: string, serviceMessage: string, kind: "RL" | "SFT" = "RL") {
    super(`${kind} training job ${jobId} failed: ${serviceMessage}`);
    this.jobId = jobId;
    this.serviceMessage = serviceMessage;
  }
}

/**
 * A training job ended, but no checkpoint newer than the step before it was
 * listed within `checkpointTimeoutMs`. The job itself succeeded; its
 * checkpoint may still appear (check `model.getStep()` later).
 *
 * @example
 * try { await model.train(groups); } catch (err) { if (err instanceof CheckpointTimeoutError) console.warn(err.jobId, err.stepBefore); }
 */
export class CheckpointTimeoutError extends TrajectoryRecorderError {
  static {
    markError(CheckpointTimeoutError, "CheckpointTimeoutError");
  }
  /** The class's name, `"CheckpointTimeoutError"` (what `error.name` reads). */
  override name = "CheckpointTimeoutError";
  /** The job that ended without a new checkpoint. */
  readonly jobId: string;
  /** The latest step before the job started; the job should have listed a newer one. */
  readonly stepBefore: number;
  constructor(jobId: string, stepBefore: number, timeoutMs: number, options?: ErrorOptions) {
    super(
      `Training job ${jobId} ended, but no checkpoint newer than step ${stepBefore} was listed within ${timeoutMs} ms; raise checkpointTimeoutMs or check model.getStep() later.`,
      options,
    );
    this.jobId = jobId;
    this.stepBefore = stepBefore;
  }
}
