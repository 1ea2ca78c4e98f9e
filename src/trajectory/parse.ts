import type { z } from "zod";
import { TrajectoryValidationError } from "./errors.js";

/** Validates `input` against `schema`, throwing a TrajectoryValidationError with zod paths. */
export function parseWire<S extends z.ZodType>(
  schema: S,
  input: unknown,
  what: string,
): z.infer<S> {
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      throw new TrajectoryValidationError(what, [
        { code: "custom", path: [], message: "expected a JSON string or an object", input },
      ]);
    }
  }
  const result = schema.safeParse(value);
  if (!result.success) throw new TrajectoryValidationError(what, result.error.issues);
  return result.data;
}

/** Keys of `obj` not in `known`, in their original order. */
export function extraKeys(
  obj: Record<string, unknown>,
  known: readonly string[],
): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!known.includes(k)) extra[k] = v;
  return extra;
}
