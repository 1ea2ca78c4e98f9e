// One family for every error the package throws. Each class carries a
// registry symbol (`Symbol.for`) on its prototype, so membership survives what
// `instanceof` does not: each entry point's CommonJS build holds its own copy
// of the classes, and an application may load two copies of the package. The
// classes that must stay a `TypeError` or `RangeError` (so `catch` code written
// for the engine's own errors keeps working) cannot extend the base class; they
// carry the same marks and answer `isInstance()` and `instanceof
// TrajectoryRecorderError` the same way.

import { keepClassName } from "./class-name.js";

const FAMILY = "trajectory-recorder.error";
const FAMILY_MARK = Symbol.for(FAMILY);
/** On each class: the symbol its instances carry. */
const OWN_MARK = Symbol.for(`${FAMILY}.class-mark`);

type AnyClass = abstract new (...args: never[]) => unknown;

/**
 * Marks `Class` (and so its instances) as a member of the family under `name`.
 * Called once per class, in its static block.
 */
export function markError(Class: AnyClass, name: string): void {
  keepClassName(Class, name);
  const mark = name === "TrajectoryRecorderError" ? FAMILY_MARK : Symbol.for(`${FAMILY}:${name}`);
  Object.defineProperty(Class.prototype, FAMILY_MARK, { value: true });
  Object.defineProperty(Class.prototype, mark, { value: true });
  Object.defineProperty(Class, OWN_MARK, { value: mark });
}

/** Whether `value` is an instance of `Class` (or of a subclass), in any copy of the package. */
export function isMarked(Class: AnyClass, value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const mark = (Class as unknown as Record<symbol, symbol | undefined>)[OWN_MARK] ?? FAMILY_MARK;
  return (value as Record<symbol, unknown>)[mark] === true;
}

/**
 * The base of every error this package throws. `TrajectoryRecorderError.isInstance(e)`
 * answers "is this one of the library's errors?", and each error class has its
 * own `isInstance`, e.g. `APIError.isInstance(e)`. Unlike `instanceof`, both
 * work across entry points (each entry point's CommonJS build has its own copy
 * of the classes) and across two copies of the package. The few errors that
 * are a `TypeError` or `RangeError` (`InvalidArgumentError`,
 * `InvalidTrainingOptionsError`, `InvalidRewardError`) carry the same mark, so
 * `isInstance` and `instanceof TrajectoryRecorderError` are true for them too.
 *
 * @example
 * try { await model.train(groups); }
 * catch (e) { if (TrajectoryRecorderError.isInstance(e)) console.error(e.name, e.message); else throw e; }
 */
export class TrajectoryRecorderError extends Error {
  /** The class's name, `"TrajectoryRecorderError"` (what `error.name` reads). */
  override name = "TrajectoryRecorderError";
  static {
    markError(TrajectoryRecorderError, "TrajectoryRecorderError");
  }

  /**
   * True when `value` is an error of this class or one of its subclasses,
   * from any entry point or copy of the package.
   *
   * @example
   * if (NotFoundError.isInstance(err)) return undefined;
   */
  static isInstance<T extends abstract new (...args: never[]) => unknown>(
    this: T,
    value: unknown,
  ): value is InstanceType<T> {
    // biome-ignore lint/complexity/noThisInStatic: the class isInstance was called on.
    return isMarked(this, value);
  }

  /**
   * `err instanceof TrajectoryRecorderError` follows `isInstance`: true for
   * every error of the family, the `TypeError` and `RangeError` ones included.
   * For the subclasses `instanceof` is the usual prototype check.
   */
  // `this` is the class `instanceof` was asked about (a subclass inherits this
  // method), which the rule below needs: not replaceable by the class name.
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore-start lint/complexity/noThisInStatic: the receiver is the point
    return this === TrajectoryRecorderError
      ? isMarked(TrajectoryRecorderError, value)
      : Function.prototype[Symbol.hasInstance].call(this, value);
    // biome-ignore-end lint/complexity/noThisInStatic: the receiver is the point
  }
}
