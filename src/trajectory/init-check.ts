import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";

/** What a field given to a constructor must be, when it is given. */
export type FieldKind = "array" | "object" | "number" | "number or null" | "array or null" | "Date";

const EXPECTED: Record<FieldKind, string> = {
  array: "an array",
  object: "a plain object",
  number: "a number",
  "number or null": "a number or null",
  "array or null": "an array or null",
  Date: "a valid Date",
};

function fits(kind: FieldKind, value: unknown): boolean {
  switch (kind) {
    case "array":
      return Array.isArray(value);
    case "array or null":
      return value === null || Array.isArray(value);
    case "object":
      return isObjectLike(value) && !Array.isArray(value);
    // Any number: a NaN reward is named at its path by the check before a send.
    case "number":
      return typeof value === "number";
    case "number or null":
      return value === null || typeof value === "number";
    case "Date":
      return value instanceof Date && isValidDate(value);
  }
}

/**
 * Checks a constructor's `init` object and the fields it gives, so that a bad
 * field is named where it is given, not where it later trips (in `toJSON`, in
 * a send). Fields left undefined take their defaults.
 */
export function checkInit(call: string, init: unknown, fields: Record<string, FieldKind>): void {
  if (!isObjectLike(init) || Array.isArray(init))
    throw new InvalidArgumentError(call, "init", "an object of fields", init);
  for (const key of Object.keys(fields)) {
    const value = init[key];
    const kind = fields[key] as FieldKind;
    if (value !== undefined && !fits(kind, value))
      throw new InvalidArgumentError(call, `init.${key}`, EXPECTED[kind], value);
  }
}

/** Whether `value` is a real Date holding a time (an object made from Date.prototype is not). */
function isValidDate(value: Date): boolean {
  try {
    return !Number.isNaN(Date.prototype.getTime.call(value));
  } catch {
    return false;
  }
}
