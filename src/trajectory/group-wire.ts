// A group's wire JSON, written and checked once on its way out: groups as
// callers hand them over (TrajectoryGroup objects or their JSON) become
// PreparedGroups, the bytes `train`, `log` and the shipper send. Here, beside
// the shape it writes, since only trajectory/ knows that shape.

import { setImmediate as nextTurn } from "node:timers/promises";
import { InvalidArgumentError } from "../util/argument-error.js";
import { findJsonProblem } from "../util/json-check.js";
import { formatZodPath, type TrajectoryGroupWire } from "../wire/index.js";
import type { TrajectoryGroup } from "./group.js";
import { InvalidGroupDataError } from "./group-errors.js";
import { PreparedGroup } from "./prepared.js";
import { hasRewardSignal } from "./signal.js";
import { groupWirePieces, type WireIssue } from "./wire-writer.js";

/** How long one slice of writing may hold the event loop, in ms. */
const SLICE_MS = 8;
/** Text gathered before it is turned into one chunk of bytes, in characters. */
const CHUNK_CHARS = 256 * 1024;

/** A trajectory group: a `TrajectoryGroup` (anything with `toJSON()`) or its wire JSON. */
// A PreparedGroup is one too (it has toJSON()); it is not named here, so the
// root's declarations do not name a class the root does not export.
export type GroupInput = TrajectoryGroup.TrajectoryGroupWireInput | { toJSON(): unknown };

/**
 * The wire JSON of each group, validated; a bad group throws naming its index
 * and field, before anything is sent. Each group is written and checked once
 * by the shipper's writer (see {@link prepareGroup}) and read back from that
 * text, in one go: for a few groups at hand, as the CLI has. A shipper or a
 * long-running process uses {@link prepareGroups}, which keeps the event loop free.
 *
 * @example
 * const wire = toWireGroups([group], "train");
 */
export function toWireGroups(groups: readonly GroupInput[], method: string): TrajectoryGroupWire[] {
  if (typeof method !== "string")
    throw new InvalidArgumentError("toWireGroups(groups, method)", "method", "a string", method);
  if (!Array.isArray(groups)) {
    throw new InvalidGroupDataError(method, ["groups: expected an array of trajectory groups"]);
  }
  return groups.map((group, index) => {
    // Checked when it was prepared.
    if (group instanceof PreparedGroup) return group.toJSON();
    const issues: WireIssue[] = [];
    let text: string;
    try {
      const parts: string[] = [];
      for (const piece of groupWirePieces(group, issues))
        parts.push(typeof piece === "string" ? piece : decoder.decode(piece));
      text = parts.join("");
    } catch (error) {
      // What JSON cannot write (a BigInt, a cycle, runaway nesting): named.
      throw jsonProblemError(group, index, method) ?? error;
    }
    if (issues.length > 0) throw issuesError(group, issues, index, method);
    return JSON.parse(text) as TrajectoryGroupWire;
  });
}

const decoder = new TextDecoder();

/** The error naming where a group holds what JSON cannot write, if it does. */
function jsonProblemError(
  group: unknown,
  index: number,
  method: string,
): InvalidGroupDataError | undefined {
  const raw =
    group && typeof (group as { toJSON?: unknown }).toJSON === "function"
      ? (group as { toJSON(): unknown }).toJSON()
      : group;
  const problem = findJsonProblem(raw ?? null);
  if (!problem) return undefined;
  return new InvalidGroupDataError(method, [
    `${groupPath(index, problem.path)}: ${problem.message}`,
  ]);
}

/** The error naming the first problems the writer found in `group`. */
function issuesError(
  group: unknown,
  issues: readonly WireIssue[],
  index: number,
  method: string,
): InvalidGroupDataError {
  return new InvalidGroupDataError(
    method,
    issues.slice(0, 20).map((i) => {
      // JSON turns NaN and Infinity into null, which the schema then
      // reports as "received null": name the number the caller set instead.
      const value = valueAt(group, i.path);
      const message =
        typeof value === "number" && !Number.isFinite(value) ? nonFinite(value) : i.message;
      return `${groupPath(index, i.path)}: ${message}`;
    }),
  );
}

/**
 * The next piece of a group's JSON. JSON.stringify throws a bare TypeError on
 * a BigInt (and copying one throws without the group's path): the value is
 * found and named by its path in the group instead, as toWireGroups does.
 */
function nextPiece<T>(
  pieces: Iterator<T>,
  group: unknown,
  method: string,
  index: number,
): IteratorResult<T> {
  try {
    return pieces.next();
  } catch (error) {
    const problem = error instanceof TypeError ? findJsonProblem(group ?? null) : undefined;
    if (!problem) throw error;
    throw new InvalidGroupDataError(method, [
      `${groupPath(index, problem.path)}: ${problem.message}`,
    ]);
  }
}

export function groupPath(index: number, path: readonly PropertyKey[]): string {
  const inner = formatZodPath(path);
  if (inner === "(root)") return `groups[${index}]`;
  return inner.startsWith("[") ? `groups[${index}]${inner}` : `groups[${index}].${inner}`;
}

/** Said of a NaN or ±Infinity, which JSON would have sent as null. */
const nonFinite = (value: number) =>
  `is ${value}, but JSON has no such number; set it to a finite number (e.g. t.reward = 0) before sending`;

/** What is at `path` inside `value` (objects as they are in memory), if anything. */
function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let at = value;
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

/**
 * {@link prepareGroup} for each of `groups`, one after the other; a bad
 * group rejects naming `groups[index]` and the field, before anything is sent.
 *
 * @example
 * const prepared = await prepareGroups(groups, "train");
 */
export async function prepareGroups(groups: unknown, method: string): Promise<PreparedGroup[]> {
  if (!Array.isArray(groups)) {
    throw new InvalidGroupDataError(method, ["groups: expected an array of trajectory groups"]);
  }
  const out: PreparedGroup[] = [];
  for (let i = 0; i < groups.length; i++) out.push(await prepareGroup(groups[i], method, i));
  return out;
}

/**
 * Writes and checks a group (a `TrajectoryGroup`, anything with `toJSON()`,
 * or wire JSON) once, in slices of at most about {@link SLICE_MS} ms; a bad
 * group rejects naming `groups[index]` and the field, before anything is sent.
 *
 * @example
 * const prepared = await prepareGroup(group, "TrajectoryShipper.add");
 */
export async function prepareGroup(
  group: unknown,
  method: string,
  index = 0,
): Promise<PreparedGroup> {
  if (group instanceof PreparedGroup) return group;
  const issues: WireIssue[] = [];
  const chunks: Uint8Array[] = [];
  let parts: string[] = [];
  let length = 0;
  // Text is turned into bytes as it comes, a chunk at a time, so that the
  // clock sees that work too: joining a whole slice's text at its end would
  // add as long again to the slice.
  const encode = () => {
    chunks.push(Buffer.from(parts.join("")));
    parts = [];
    length = 0;
  };
  let started = performance.now();
  const pieces = groupWirePieces(group, issues);
  // Pieces range from a comma to a whole Choice, so the clock is read after
  // each one (a read costs far less than the smallest Choice).
  for (
    let next = nextPiece(pieces, group, method, index);
    !next.done;
    next = nextPiece(pieces, group, method, index)
  ) {
    const piece = next.value;
    if (typeof piece === "string") {
      parts.push(piece);
      length += piece.length;
      if (length >= CHUNK_CHARS) encode();
    } else {
      // Recorded logprobs, written as bytes already: kept as they are.
      if (length > 0) encode();
      chunks.push(piece);
    }
    if (performance.now() - started >= SLICE_MS) {
      await nextTurn();
      started = performance.now();
    }
  }
  if (issues.length > 0) throw issuesError(group, issues, index, method);
  if (length > 0 || chunks.length === 0) encode();
  return new PreparedGroup(chunks, rewardSignalOf(group));
}

function metadataOf(t: unknown): unknown {
  return (t as { metadata?: unknown } | null)?.metadata;
}

/**
 * Whether a group's rewards differ (see `hasRewardSignal`), from its
 * trajectories' `reward`; `undefined` when it holds no trajectory.
 */
export function rewardSignalOf(group: unknown): boolean | undefined {
  if (group instanceof PreparedGroup) {
    // Read back as bytes: parsed once, and remembered.
    group.rewardSignal ??= rewardSignalOf(group.toJSON());
    return group.rewardSignal;
  }
  const trajectories = (group as { trajectories?: unknown } | null)?.trajectories;
  if (!Array.isArray(trajectories) || trajectories.length === 0) return undefined;
  // A reward the JSON leaves out is ART's default, 0.
  const rewards = trajectories.map((t) => {
    const reward = (t as { reward?: unknown } | null)?.reward;
    // Infrastructure failures keep their mark: they are left out of the signal.
    return { reward: typeof reward === "number" ? reward : 0, metadata: metadataOf(t) };
  });
  return hasRewardSignal({ trajectories: rewards } as Parameters<typeof hasRewardSignal>[0]);
}
