/**
 * A deep copy of JSON data with `JSON.parse(JSON.stringify(value))`'s result
 * (undefined properties dropped, undefined array items and non-finite numbers
 * as null, `toJSON()` honoured), without building the string: several times
 * cheaper for the small objects the recorder keeps, and far cheaper than
 * Node's `structuredClone`, which serializes through its messaging machinery.
 *
 * @example
 * const kept = copyJson(message); // later edits to `message` do not reach `kept`
 */
export function copyJson<T>(value: T): T {
  return copy(value) as T;
}

function copy(value: unknown): unknown {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (value === null || typeof value !== "object") return value;
  const withToJSON = value as { toJSON?: () => unknown };
  if (typeof withToJSON.toJSON === "function") return copy(withToJSON.toJSON());
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : copy(item)));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined && typeof item !== "function") out[key] = copy(item);
  }
  return out;
}
