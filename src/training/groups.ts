import type { z } from "zod";
// Groups as callers hand them over (TrajectoryGroup objects or their JSON) and
// as they travel.
import {
  formatZodPath,
  type TrajectoryGroupWire,
  TrajectoryGroupWireSchema,
} from "../wire/index.js";
import { InvalidTrainingOptionsError } from "./errors.js";

/** A trajectory group: a `TrajectoryGroup` (anything with `toJSON()`) or its wire JSON. */
export type GroupInput = z.input<typeof TrajectoryGroupWireSchema> | { toJSON(): unknown };

/**
 * The wire JSON of each group, validated; a bad group throws naming its index
 * and field, before anything is sent.
 *
 * @example
 * const wire = toWireGroups([group], "train");
 */
export function toWireGroups(groups: readonly GroupInput[], method: string): TrajectoryGroupWire[] {
  if (!Array.isArray(groups)) {
    throw new InvalidTrainingOptionsError(method, [
      "groups: expected an array of trajectory groups",
    ]);
  }
  return groups.map((group, index) => {
    const raw =
      group && typeof (group as { toJSON?: unknown }).toJSON === "function"
        ? (group as { toJSON(): unknown }).toJSON()
        : group;
    // JSON turns NaN and Infinity into null, which the schema would then
    // report as "received null": name the number the caller set instead.
    const bad = nonFiniteNumber(raw);
    if (bad) {
      throw new InvalidTrainingOptionsError(method, [
        `${groupPath(index, bad.path)}: is ${bad.value}, but JSON has no such number; set it to a finite number (e.g. t.reward = 0) before sending`,
      ]);
    }
    // A round trip through JSON gives exactly what would be sent.
    const json = JSON.parse(JSON.stringify(raw ?? null));
    const parsed = TrajectoryGroupWireSchema.safeParse(json);
    if (!parsed.success) {
      throw new InvalidTrainingOptionsError(
        method,
        parsed.error.issues.map((i) => `${groupPath(index, i.path)}: ${i.message}`),
      );
    }
    return json as TrajectoryGroupWire;
  });
}

function groupPath(index: number, path: readonly PropertyKey[]): string {
  const inner = formatZodPath(path);
  if (inner === "(root)") return `groups[${index}]`;
  return inner.startsWith("[") ? `groups[${index}]${inner}` : `groups[${index}].${inner}`;
}

/** The first NaN or ±Infinity inside `value`, with its path. */
function nonFiniteNumber(
  value: unknown,
  path: PropertyKey[] = [],
  seen = new Set<object>(),
): { path: PropertyKey[]; value: number } | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : { path, value };
  if (typeof value !== "object" || value === null || seen.has(value)) return undefined;
  seen.add(value);
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  for (const [key, inner] of entries) {
    const found = nonFiniteNumber(inner, [...path, key], seen);
    if (found) return found;
  }
  return undefined;
}
