// Finds what would make JSON.stringify throw (or overflow the stack) before it
// is called: a BigInt, a cycle, or nesting deeper than any real payload.

/**
 * Deepest nesting of objects and arrays accepted in a request body. Real
 * payloads (a trajectory group with logprobs, a JSON-schema tool) stay under
 * 20 levels; thousands of levels overflow the stack of `JSON.stringify`.
 */
export const MAX_JSON_DEPTH = 256;

/** Where a value stops being JSON, and why. */
export interface JsonProblem {
  path: (string | number)[];
  message: string;
}

/**
 * The first place where `value` cannot travel as JSON, or `undefined`. Follows
 * `JSON.stringify`'s rules (`toJSON()` honoured, functions and symbols
 * dropped), so it accepts exactly what that would serialize.
 *
 * @example
 * findJsonProblem({ a: [1, 2n] }); // { path: ["a", 1], message: "expected a JSON value, received a BigInt" }
 */
export function findJsonProblem(
  value: unknown,
  maxDepth: number = MAX_JSON_DEPTH,
): JsonProblem | undefined {
  const path: (string | number)[] = [];
  const open = new Set<object>();

  const visit = (v: unknown, key: string | number, depth: number): string | undefined => {
    if (typeof v === "bigint") return "expected a JSON value, received a BigInt";
    if (v === null || typeof v !== "object") return undefined;
    const withToJSON = v as { toJSON?: (key: string) => unknown };
    let threw: unknown;
    if (typeof withToJSON.toJSON === "function") {
      let replaced: unknown = v;
      try {
        replaced = withToJSON.toJSON(String(key));
      } catch (error) {
        // Our classes' toJSON copies their fields: walking those finds the
        // value that made it throw, by its path (a BigInt in a metadata object).
        threw = error;
      }
      // One level deeper, so that a chain of toJSON() results ends too.
      if (replaced !== v) return visit(replaced, key, depth + 1);
    }
    if (depth >= maxDepth)
      return `expected JSON nested at most ${maxDepth} levels deep, received deeper nesting`;
    if (open.has(v)) return "expected a JSON value, received a circular reference";
    open.add(v);
    const entries: [string | number, unknown][] = Array.isArray(v)
      ? // Array.from, not map: a sparse array's holes are items too (null in JSON).
        Array.from(v, (item, i) => [i, item])
      : Object.keys(v).map((k) => [k, (v as Record<string, unknown>)[k]]);
    for (const [k, item] of entries) {
      path.push(k);
      const problem = visit(item, k, depth + 1);
      if (problem) return problem;
      path.pop();
    }
    open.delete(v);
    if (threw !== undefined)
      return `its toJSON() method threw (${threw instanceof Error ? threw.message : String(threw)})`;
    return undefined;
  };

  const message = visit(value, "", 0);
  if (!message) return undefined;
  // A path thousands of keys long says no more than its first few keys.
  return { path: path.length > 8 ? [...path.slice(0, 8), "..."] : path, message };
}
