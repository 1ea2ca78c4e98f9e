import { markError } from "../util/error-family.js";
import { InvalidTrainingOptionsError } from "../util/training-options-error.js";

/**
 * The trajectory groups given to a training method or the shipper are not
 * valid data (a NaN reward, a field of the wrong type, what JSON cannot
 * write); nothing was sent. The message names each bad field by its path
 * (`groups[0].trajectories[1].reward`). An `InvalidTrainingOptionsError`
 * subclass, so code catching that class keeps working.
 *
 * @example
 * try { await shipper.add(group); }
 * catch (e) { if (e instanceof InvalidGroupDataError) console.error(e.problems); }
 */
export class InvalidGroupDataError extends InvalidTrainingOptionsError {
  static {
    markError(InvalidGroupDataError, "InvalidGroupDataError");
  }
  /** The class's name, `"InvalidGroupDataError"` (what `error.name` reads). */
  override name = "InvalidGroupDataError";
  /** Each bad field, as `path: what is wrong`. */
  readonly problems: string[];
  constructor(method: string, problems: string[]) {
    super(method, problems);
    this.problems = problems;
    this.message = `Invalid trajectory groups given to ${method}, nothing was sent: ${problems.join("; ")}.`;
  }
}
