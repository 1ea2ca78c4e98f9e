// The check as train, log and the shipper run it before sending: throws,
// warns, or leaves out bad trajectories and refused groups; and the refusals
// made even when no mode was chosen.

import { InvalidArgumentError } from "../util/argument-error.js";
import { TrajectoryCheckError, type ValidationProblem } from "./errors.js";
import type { ValidateOptions, ValidationMode } from "./validate.js";
import { groupProblems, holdsTrainable, LIKELY_CAUSES, NO_TRAINABLE } from "./validate-group.js";
import { briefly, warnOnce } from "./validate-summary.js";

/** What {@link checkGroups} kept and left out. */
export interface CheckedGroups<G> {
  groups: G[];
  droppedTrajectories: number;
  droppedGroups: number;
}

/**
 * The mode `train`, `log` and the shipper's `add` check groups in unless told
 * otherwise: they warn (through their logger) and send. `"throw"` refuses.
 */
export const DEFAULT_SEND_CHECK: ValidationMode = "warn";

/**
 * The check as `train`, `log` and the shipper run it on wire groups: throws,
 * warns, or leaves out (and counts) bad trajectories and refused groups.
 * `false` turns it off; no options: {@link DEFAULT_SEND_CHECK}. In `"drop"`
 * mode, leaving out every group throws unless `allowNone` (the shipper's
 * `add` of one refused group). With `refuseUntrainable` (train), groups none
 * of which holds a trainable Choice are refused even with no options: the job
 * would "succeed" on zero trainable tokens. Other findings still only warn.
 *
 * @internal
 */
export function checkGroups<G extends { trajectories: unknown[] }>(
  groups: G[],
  options: ValidateOptions | ValidationMode | false | undefined,
  where: string,
  {
    allowNone = false,
    refuseUntrainable = false,
  }: { allowNone?: boolean; refuseUntrainable?: boolean } = {},
): CheckedGroups<G> {
  if (!Array.isArray(groups))
    throw new InvalidArgumentError(`${where}`, "groups", "an array of trajectory groups", groups);
  const none = { groups, droppedTrajectories: 0, droppedGroups: 0 };
  if (options === false) return none;
  const byDefault = options === undefined;
  if (byDefault && refuseUntrainable && groups.length > 0 && !groups.some(holdsTrainable))
    refuseNothingToTrain(groups, where);
  const o: ValidateOptions = typeof options === "string" ? { mode: options } : (options ?? {});
  const mode = o.mode ?? DEFAULT_SEND_CHECK;
  const all: ValidationProblem[] = [];
  const kept: G[] = [];
  let droppedTrajectories = 0;
  let droppedGroups = 0;
  groups.forEach((g, i) => {
    const r = groupProblems(g, o, `groups[${i}]`);
    all.push(...r.problems);
    if (mode !== "drop") return;
    if (r.refused || r.badTrajectories.length === g.trajectories.length) {
      droppedGroups++;
      droppedTrajectories += g.trajectories.length;
      return;
    }
    if (r.badTrajectories.length === 0) kept.push(g);
    else {
      const bad = new Set(r.badTrajectories);
      kept.push({ ...g, trajectories: g.trajectories.filter((_, k) => !bad.has(k)) });
      droppedTrajectories += bad.size;
    }
  });
  if (all.length === 0) return none;
  const what = `${where}: trajectory group`;
  // Metadata the service cannot take is refused unless a mode was chosen: see refusedUnasked.
  if (o.mode === undefined) refuseUnasked(what, all);
  if (mode === "throw") throw new TrajectoryCheckError(what, all);
  const logger = o.logger ?? console;
  if (mode === "warn") {
    // Unasked, the check speaks once per kind of finding and process, on the console.
    if (byDefault) warnOnce(where, all);
    else logger.warn(briefly(where, all));
    return none;
  }
  // Dropping every group leaves nothing to send: a job on no data is refused like bad data.
  if (kept.length === 0 && !allowNone) throw new TrajectoryCheckError(what, all);
  logger.warn(
    briefly(
      `${where}: left out ${droppedTrajectories} trajectories (${droppedGroups} whole groups) that failed the check`,
      all,
    ),
  );
  return { groups: kept, droppedTrajectories, droppedGroups };
}

/**
 * Problems refused even when no mode was chosen: a metadata value that is not
 * a scalar (a nested object, an array), which ART's pydantic model refuses
 * when the trajectory is built, and a Choice whose `finish_reason` is outside
 * the service's enum. The service answers 422 to both, so they are refused
 * here, naming the path, before anything is sent. `validate: "warn"` sends anyway;
 * `"drop"` leaves such trajectories out.
 */
function refuseUnasked(what: string, problems: ValidationProblem[]): void {
  const refused = problems.filter(
    (p) => /(^|\.)metadata\.[^.[\]]+$/.test(p.path) || p.path.endsWith(".finish_reason"),
  );
  if (refused.length === 0) return;
  throw new TrajectoryCheckError(
    what,
    refused.map((p) => ({
      path: p.path,
      message: p.path.endsWith(".finish_reason")
        ? `${p.message}; refused before sending, as the service's schema refuses it (422): an aborted or unfinished turn (vLLM's "abort", a null) is not a Choice to train on; pass validate: "drop" to leave such trajectories out, or "warn" to send anyway`
        : `${p.message}; refused before sending, as ART's Trajectory refuses it: flatten it (e.g. metadata.${p.path.split(".").pop()}_json = JSON.stringify(value)), or pass validate: "warn" to send anyway`,
    })),
  );
}

/** Unasked, `train` refuses a job that would learn from no token at all. */
/** Why `train` refused `count` groups that hold nothing to learn from. */
function nothingToTrain(count: number): string {
  return `none of the ${count} group(s) holds a trainable Choice (a sampled turn with logprobs), so the job would train on nothing; nothing was sent (validate: "warn" sends them anyway). ${LIKELY_CAUSES}`;
}

const LOGPROBS_KEY = Buffer.from('"logprobs":{');

/**
 * {@link checkGroups}' default refusal for groups already serialized (the
 * shipper's prepared bytes): a Choice with logprobs is written with the key
 * `"logprobs":{`, which no plain message carries, so groups whose bytes hold
 * none have nothing to train on. The scan can only err towards sending.
 *
 * @internal
 */
export function refuseUntrainableBytes(
  groups: readonly (readonly Uint8Array[])[],
  where: string,
): void {
  const call = "refuseUntrainableBytes(groups)";
  if (!Array.isArray(groups))
    throw new InvalidArgumentError(call, "groups", "an array of byte chunk lists", groups);
  groups.forEach((chunks, i) => {
    if (!Array.isArray(chunks) || !chunks.every((c) => c instanceof Uint8Array))
      throw new InvalidArgumentError(call, `groups[${i}]`, "an array of Uint8Array", chunks);
  });
  if (groups.length === 0) return;
  if (groups.some((chunks) => chunksInclude(chunks, LOGPROBS_KEY))) return;
  throw new TrajectoryCheckError(`${where}: trajectory group`, [
    {
      path: "groups",
      message: nothingToTrain(groups.length),
    },
  ]);
}

/** Whether `needle` occurs in the bytes of `chunks` taken in order, across their seams too. */
function chunksInclude(chunks: readonly Uint8Array[], needle: Buffer): boolean {
  const keep = needle.length - 1;
  let tail: Uint8Array = new Uint8Array(0);
  for (const chunk of chunks) {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (buf.includes(needle)) return true;
    if (Buffer.concat([tail, buf.subarray(0, keep)]).includes(needle)) return true;
    tail = buf.length >= keep ? buf.subarray(-keep) : Buffer.concat([tail, buf]).subarray(-keep);
  }
  return false;
}

function refuseNothingToTrain(groups: unknown[], where: string): never {
  const others = groups.flatMap((g, i) =>
    groupProblems(g, {}, `groups[${i}]`).problems.filter((p) => p.message !== NO_TRAINABLE),
  );
  throw new TrajectoryCheckError(`${where}: trajectory group`, [
    {
      path: "groups",
      message: nothingToTrain(groups.length),
    },
    ...others,
  ]);
}
