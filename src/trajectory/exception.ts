import type { ExceptionWire } from "../wire/index.js";

/**
 * Records a failed rollout the way ART does on a group (`PydanticException`):
 * `type` as Python prints a class (`"<class 'TypeError'>"`), the message, and
 * the stack as the traceback.
 *
 * @example
 * group.exceptions.push(exceptionToWire(new Error("tool timed out")));
 */
export function exceptionToWire(error: unknown): ExceptionWire {
  if (error instanceof Error) {
    return {
      type: `<class '${error.name}'>`,
      message: error.message,
      traceback: error.stack ?? "",
    };
  }
  return { type: `<class '${typeof error}'>`, message: textOf(error), traceback: "" };
}

/** `String(value)`, or its tag for a value that refuses conversion (a null-prototype object). */
export function textOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
