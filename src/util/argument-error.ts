import { isMarked, markError } from "./error-family.js";
/**
 * A function or constructor of this library was called with an argument it
 * cannot use; nothing was done with it. The message names the call, the
 * argument (or the path of the field inside it) and what was expected. A
 * `TypeError`, as the engine's own would be, so existing `catch` code keeps
 * working; the value itself is never echoed (it may hold a secret).
 *
 * @example
 * try { rankRewards(null as never); }
 * catch (e) { if (e instanceof InvalidArgumentError) console.error(e.argument); } // "scores"
 */
export class InvalidArgumentError extends TypeError {
  static {
    markError(InvalidArgumentError, "InvalidArgumentError");
  }
  /** True when `value` is this error, from any entry point or copy of the package. */
  static isInstance<T extends abstract new (...args: never[]) => unknown>(
    this: T,
    value: unknown,
  ): value is InstanceType<T> {
    // biome-ignore lint/complexity/noThisInStatic: the class isInstance was called on.
    return isMarked(this, value);
  }
  /** The class's name, `"InvalidArgumentError"` (what `error.name` reads). */
  override name = "InvalidArgumentError";
  /** The argument or field path that was wrong, e.g. `scores[2]` or `options.client`. */
  readonly argument: string;

  /**
   * @param problem what was wrong, when "expected ..., received (its kind)"
   *   does not say it (e.g. "a circular reference").
   */
  constructor(
    call: string,
    argument: string,
    expected: string,
    received: unknown,
    problem = `expected ${expected}, received ${kindOf(received)}`,
  ) {
    super(`${call}: ${argument}: ${problem}.`);
    this.argument = argument;
  }
}

/**
 * What kind of value `value` is, in words, without its content.
 *
 * @example
 * kindOf(null); // "null"
 * kindOf([1]); // "an array"
 */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "number":
      return Number.isNaN(value)
        ? "NaN"
        : Number.isFinite(value)
          ? "a number"
          : "an infinite number";
    case "bigint":
      return "a BigInt";
    case "symbol":
      return "a symbol";
    case "function":
      return "a function";
    case "string":
      return "a string";
    case "boolean":
      return "a boolean";
    default:
      return "an object";
  }
}

/** True for a value objects' properties can be read from. */
export function isObjectLike(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object";
}
