// Below trajectory/ and training/ alike: training's methods throw it for a bad
// option, and trajectory's group checks throw its subclass InvalidGroupDataError.
import { isMarked, markError } from "./error-family.js";

/**
 * An option given to a training method is not valid; nothing was sent. The
 * message names the option (in the camelCase it was given) and what was expected.
 *
 * @example
 * await model.train(groups, { learningRate: "fast" }); // InvalidTrainingOptionsError: learningRate: ...
 */
export class InvalidTrainingOptionsError extends TypeError {
  static {
    markError(InvalidTrainingOptionsError, "InvalidTrainingOptionsError");
  }
  /** True when `value` is this error, from any entry point or copy of the package. */
  static isInstance<T extends abstract new (...args: never[]) => unknown>(
    this: T,
    value: unknown,
  ): value is InstanceType<T> {
    // biome-ignore lint/complexity/noThisInStatic: the class isInstance was called on.
    return isMarked(this, value);
  }
  /** The class's name, `"InvalidTrainingOptionsError"` (what `error.name` reads). */
  override name = "InvalidTrainingOptionsError";
  constructor(method: string, problems: string[]) {
    super(`Invalid options to ${method}, nothing was sent: ${problems.join("; ")}.`);
  }
}
