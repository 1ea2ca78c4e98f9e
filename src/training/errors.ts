/**
 * A training job ended with `training_failed`. `message` carries the service's
 * `error_message`; `jobId` names the job.
 *
 * @example
 * try { await model.train(groups); } catch (err) { if (err instanceof TrainingFailedError) console.error(err.jobId, err.serviceMessage); }
 */
export class TrainingFailedError extends Error {
  override name = "TrainingFailedError";
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
 * An option given to a training method is not valid; nothing was sent. The
 * message names the option (in the camelCase it was given) and what was expected.
 *
 * @example
 * await model.train(groups, { learningRate: "fast" }); // InvalidTrainingOptionsError: learningRate: ...
 */
export class InvalidTrainingOptionsError extends TypeError {
  override name = "InvalidTrainingOptionsError";
  constructor(method: string, problems: string[]) {
    super(`Invalid options to ${method}, nothing was sent: ${problems.join("; ")}.`);
  }
}
