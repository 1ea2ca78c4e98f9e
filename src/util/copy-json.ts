/**
 * A deep copy of JSON-like data (plain objects, arrays, primitives). Much
 * cheaper than `structuredClone` for the small message objects the recorder
 * keeps: Node's `structuredClone` serializes through its messaging machinery,
 * which costs microseconds even for a tiny object.
 *
 * @example
 * const kept = copyJson(message); // later edits to `message` do not reach `kept`
 */
export function copyJson<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    out[key] = copyJson((value as Record<string, unknown>)[key]);
  return out as T;
}
