import { InvalidArgumentError } from "./argument-error.js";
import { findJsonProblem, MAX_JSON_DEPTH } from "./json-check.js";

/** Thrown inside the copy, caught at its top: the slow search for the path runs only then. */
const NOT_JSON = Symbol("not JSON");

/**
 * A deep copy of JSON data with `JSON.parse(JSON.stringify(value))`'s result
 * (undefined properties dropped, undefined array items and non-finite numbers
 * as null, `toJSON()` honoured), without building the string: several times
 * cheaper for the small objects the recorder keeps, and far cheaper than
 * Node's `structuredClone`, which serializes through its messaging machinery.
 *
 * Like `JSON.stringify`, it refuses a BigInt and a circular reference, and
 * data nested deeper than {@link MAX_JSON_DEPTH} levels (which would
 * overflow the stack here or later, when the data is sent): an
 * `InvalidArgumentError` naming `what` and the path of the bad value.
 *
 * @example
 * const kept = copyJson(message); // later edits to `message` do not reach `kept`
 */
export function copyJson<T>(value: T, what = "value"): T {
  try {
    return copy(value, 0) as T;
  } catch (error) {
    if (error !== NOT_JSON) throw error;
    const problem = findJsonProblem(value);
    const path = problem?.path.reduce<string>(
      (out, key) =>
        typeof key === "number" ? `${out}[${key}]` : key === "..." ? `${out}...` : `${out}.${key}`,
      what,
    );
    throw new InvalidArgumentError(
      "Copying JSON data",
      path ?? what,
      "JSON data",
      value,
      problem?.message,
    );
  }
}

function copy(value: unknown, depth: number): unknown {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (value === null || typeof value !== "object") {
    if (typeof value === "bigint") throw NOT_JSON;
    return value;
  }
  const toJSON = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON !== "function") return copyObject(value, depth);
  // As JSON.stringify: the replacement's own toJSON is not called, its items' are.
  const replaced = toJSON.call(value);
  if (replaced === null || typeof replaced !== "object") return copy(replaced, depth);
  return copyObject(replaced, depth);
}

function copyObject(value: object, depth: number): unknown {
  // A cycle goes on forever: it is caught here too, at the depth limit.
  if (depth >= MAX_JSON_DEPTH) throw NOT_JSON;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      out[i] = item === undefined ? null : copy(item, depth + 1);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined && typeof item !== "function") out[key] = copy(item, depth + 1);
  }
  return out;
}
