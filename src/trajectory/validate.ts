// The check before training: what a trainer would silently learn wrong from.
// It walks trajectories as objects or as their ART JSON (same field names),
// without copying them, so it costs one pass over the items.

import { CompactLogprobs, logprobProblems } from "../logprobs/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { TrajectoryCheckError, type ValidationProblem } from "./errors.js";
import type { TokenSharing } from "./validate-lineage.js";
import { checkLineage, checkTokenCount, groupTokenSharing } from "./validate-lineage.js";

/** What to do with a trajectory that fails the check: see {@link ValidateOptions.mode}. */
export type ValidationMode = "throw" | "drop" | "warn";

/** Options of {@link validateTrajectory} and {@link validateGroup}. */
export interface ValidateOptions {
  /**
   * `"throw"` (default): throw {@link TrajectoryCheckError} naming every bad
   * item. `"drop"`: report the bad trajectories (and refused groups) so the
   * caller leaves them out and counts them. `"warn"`: warn through `logger`
   * and keep everything.
   */
  mode?: ValidateOptions.ValidationMode;
  /** Accept Choices without `logprobs` (the trainer treats them as context). Default `false`. */
  allowMissingLogprobs?: boolean;
  /**
   * Accept Choices without vLLM's `token_ids` / `prompt_token_ids` (ART's
   * newest tokenizer refuses them). Default `false`.
   */
  allowMissingTokenIds?: boolean;
  /**
   * Accept a history whose later turn's `prompt_token_ids` do not extend the
   * earlier turn's prompt and `token_ids` (recorded with `lineage: "text"`).
   * Default `false`.
   */
  allowLineageBreaks?: boolean;
  /** Refuse a group in which no trajectory holds a trainable Choice. Default `true`. */
  requireTrainable?: boolean;
  /** Where `"warn"` and `"drop"` report. Default `console`. */
  logger?: { warn(message: string): void };
}

/** The types {@link ValidateOptions} uses. */
export declare namespace ValidateOptions {
  export type { ValidationMode };
}

/** The `finish_reason` values the Training Service's schema accepts. */
export const FINISH_REASONS = [
  "stop",
  "length",
  "tool_calls",
  "content_filter",
  "function_call",
] as const;
const FINISH = new Set<unknown>(FINISH_REASONS);

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isChoiceItem(item: Obj): boolean {
  return "message" in item;
}

/** Where no Choice is trainable, the check says what most likely went wrong. */
const LIKELY_CAUSES =
  "Likely causes: the openai client was not wrapped (recorder.wrap(client) or model.openai({ recorder })), the calls were made outside recorder.rollout(), or the model that answered is not the recorder's policy (see each trajectory's logs)";
const NO_TRAINABLE = `no trajectory holds a trainable Choice (a sampled turn with logprobs). ${LIKELY_CAUSES}`;

/** Tells whether `items` hold a Choice the trainer would learn from. */
function hasTrainable(items: unknown): boolean {
  if (!Array.isArray(items)) return false;
  for (const item of items)
    if (isObj(item) && isChoiceItem(item) && isObj(item.logprobs)) return true;
  return false;
}

function trainable(t: Obj): boolean {
  if (hasTrainable(t.messages_and_choices)) return true;
  const histories = t.additional_histories;
  if (!Array.isArray(histories)) return false;
  return histories.some((h) => isObj(h) && hasTrainable(h.messages_and_choices));
}

/** Whether any trajectory of `g` holds a Choice with logprobs, whatever else is wrong with it. */
function holdsTrainable(g: unknown): boolean {
  const trajectories = isObj(g) ? g.trajectories : undefined;
  return Array.isArray(trajectories) && trajectories.some((t) => isObj(t) && trainable(t));
}

// Compact logprobs answer without being expanded: reading `content` would
// build the SDK's objects back, about 1 KB of heap per token.
function hasTokenLogprobs(lp: unknown): boolean {
  if (lp instanceof CompactLogprobs) return lp.hasTokens();
  return isObj(lp) && (Array.isArray(lp.content) || Array.isArray(lp.refusal));
}

function checkChoice(c: Obj, path: string, o: ValidateOptions, out: ValidationProblem[]): void {
  if (!FINISH.has(c.finish_reason))
    out.push({
      path: `${path}.finish_reason`,
      message: `expected one of ${FINISH_REASONS.join(", ")}, got ${JSON.stringify(c.finish_reason ?? null)}`,
    });
  logprobProblems(c.logprobs, `${path}.logprobs`, out);
  if (!o.allowMissingLogprobs && !hasTokenLogprobs(c.logprobs))
    out.push({
      path: `${path}.logprobs`,
      message:
        "a Choice without logprobs is not trained on (ask for logprobs: the recorder does inside a rollout; or allowMissingLogprobs)",
    });
  if (!o.allowMissingTokenIds && !(Array.isArray(c.token_ids) && Array.isArray(c.prompt_token_ids)))
    out.push({
      path: `${path}.token_ids`,
      message:
        "a Choice without token_ids and prompt_token_ids (ask a vLLM server for return_token_ids, as the recorder does; or allowMissingTokenIds)",
    });
  checkTokenCount(c, path, out);
}

function toolCallIds(message: unknown): string[] {
  const calls = isObj(message) ? message.tool_calls : undefined;
  if (!Array.isArray(calls)) return [];
  return calls
    .map((c) => (isObj(c) ? c.id : undefined))
    .filter((id) => typeof id === "string") as string[];
}

/** One conversation: each tool message answers an earlier call of the same conversation, once. */
function checkHistory(
  items: unknown,
  path: string,
  o: ValidateOptions,
  out: ValidationProblem[],
): void {
  if (!Array.isArray(items)) {
    out.push({ path, message: "expected an array of messages and Choices" });
    return;
  }
  const open = new Set<string>();
  const answered = new Set<string>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const at = `${path}[${i}]`;
    if (!isObj(item)) {
      out.push({ path: at, message: "expected a message or a Choice" });
      continue;
    }
    if (isChoiceItem(item)) {
      checkChoice(item, at, o, out);
      for (const id of toolCallIds(item.message)) open.add(id);
    } else if (item.role === "assistant") {
      for (const id of toolCallIds(item)) open.add(id);
    } else if (item.role === "tool") {
      const id = item.tool_call_id;
      if (typeof id !== "string" || (!open.has(id) && !answered.has(id)))
        out.push({
          path: `${at}.tool_call_id`,
          message: `a tool message answers call ${JSON.stringify(id ?? null)}, which no earlier assistant turn of this history issued`,
        });
      else if (answered.has(id))
        out.push({ path: `${at}.tool_call_id`, message: `call ${id} is answered a second time` });
      else {
        open.delete(id);
        answered.add(id);
      }
    }
  }
  if (!o.allowLineageBreaks) checkLineage(items, path, out);
}

function checkMetadata(metadata: unknown, path: string, out: ValidationProblem[]): void {
  if (metadata === undefined || metadata === null) return;
  if (!isObj(metadata)) {
    out.push({ path, message: "expected an object of scalar values" });
    return;
  }
  for (const key of Object.keys(metadata)) {
    const v = metadata[key];
    const t = typeof v;
    if (v === null || t === "string" || t === "boolean" || (t === "number" && Number.isFinite(v)))
      continue;
    out.push({
      path: `${path}.${key}`,
      message: `metadata values must be a number, string, boolean or null (the service answers 422), got ${Array.isArray(v) ? "an array" : t === "number" ? String(v) : t}`,
    });
  }
}

/**
 * The problems of one trajectory (an object or its ART JSON), each with its
 * path under `prefix`; empty when it is fine. Never throws.
 */
export function trajectoryProblems(
  t: unknown,
  options: ValidateOptions = {},
  prefix = "",
): ValidationProblem[] {
  const out: ValidationProblem[] = [];
  const at = (p: string) => (prefix ? `${prefix}.${p}` : p);
  if (!isObj(t)) {
    out.push({ path: prefix || "(root)", message: "expected a trajectory object" });
    return out;
  }
  checkHistory(t.messages_and_choices ?? [], at("messages_and_choices"), options, out);
  const histories = t.additional_histories ?? [];
  if (Array.isArray(histories))
    for (let i = 0; i < histories.length; i++) {
      const h = histories[i];
      const items = isObj(h) ? h.messages_and_choices : undefined;
      checkHistory(items, at(`additional_histories[${i}].messages_and_choices`), options, out);
    }
  checkMetadata(t.metadata, at("metadata"), out);
  return out;
}

function report(what: string, problems: ValidationProblem[], options: ValidateOptions): void {
  if (problems.length === 0) return;
  const mode = options.mode ?? "throw";
  if (mode === "throw") throw new TrajectoryCheckError(what, problems);
  if (mode === "warn")
    (options.logger ?? console).warn(new TrajectoryCheckError(what, problems).message);
}

/**
 * Checks a trajectory before it is trained on: every tool message answers a
 * call issued earlier in its own history, every Choice has logprobs and
 * token ids (unless allowed) and a `finish_reason` of the schema, and every
 * `metadata` value is a scalar. Returns `{ problems }` (empty when none),
 * the shape `validateGroup` returns; in the default `"throw"` mode, throws them.
 *
 * @throws TrajectoryCheckError (a `TrajectoryValidationError`) naming the path of each bad item.
 * @example
 * validateTrajectory(t); // throws on a corrupt trajectory
 * const { problems } = validateTrajectory(t, { mode: "warn", allowMissingTokenIds: true });
 */
export function validateTrajectory(
  t: unknown,
  options: ValidateOptions = {},
): TrajectoryValidation {
  checkOptions("validateTrajectory", options);
  const json = toPlain(t);
  const problems = trajectoryProblems(json, options);
  report("The trajectory", problems, options);
  // 0.1 returned the array itself: it still is one until 0.3, with `problems`
  // (not enumerable, so it is not copied, compared or written as JSON).
  const result = [...problems] as ValidationProblem[] & { problems?: ValidationProblem[] };
  Object.defineProperty(result, "problems", { value: problems, enumerable: false });
  return result as TrajectoryValidation;
}

/**
 * What {@link validateTrajectory} returns: `{ problems }`, as
 * {@link validateGroup} returns `{ problems, badTrajectories, refused }`.
 *
 * Until 0.3 the result is also the array of problems itself (what 0.1
 * returned), so `validateTrajectory(t).length` and `for (const p of ...)` keep
 * working; that use is deprecated: read `.problems`.
 */
export interface TrajectoryValidation extends Array<ValidationProblem> {
  /** Every problem, with its path (`messages_and_choices[3].logprobs`, ...). */
  readonly problems: ValidationProblem[];
}

/** What {@link validateGroup} found. */
export interface GroupValidation {
  /** Every problem, with its path (`trajectories[2].messages_and_choices[3]...`). */
  problems: ValidationProblem[];
  /** Indexes of the trajectories with a problem: `"drop"` leaves them out. */
  badTrajectories: number[];
  /** The whole group is refused (no trainable Choice in any trajectory). */
  refused: boolean;
  /** The group's histories in tokens: how many, the splits, the prefix tokens read more than once. */
  tokens: GroupValidation.TokenSharing;
}

/** The types {@link GroupValidation} uses. */
export declare namespace GroupValidation {
  export type { TokenSharing };
}

/**
 * Checks every trajectory of a group (a `TrajectoryGroup` or its ART JSON)
 * as {@link validateTrajectory} does, and refuses a group in which no
 * trajectory holds a trainable Choice, naming the likely cause.
 *
 * @throws TrajectoryCheckError in the default `"throw"` mode.
 * @example
 * const { badTrajectories } = validateGroup(group, { mode: "drop" });
 */
export function validateGroup(g: unknown, options: ValidateOptions = {}): GroupValidation {
  checkOptions("validateGroup", options);
  const result = groupProblems(toPlain(g), options);
  report("The trajectory group", result.problems, options);
  return result;
}

/** {@link validateGroup} without reporting: what the group's check found. */
export function groupProblems(
  g: unknown,
  options: ValidateOptions = {},
  prefix = "",
): GroupValidation {
  const at = (p: string) => (prefix ? `${prefix}.${p}` : p);
  const trajectories = isObj(g) ? g.trajectories : undefined;
  if (!Array.isArray(trajectories))
    return {
      problems: [{ path: at("trajectories"), message: "expected an array of trajectories" }],
      badTrajectories: [],
      refused: true,
      tokens: { histories: 0, splits: 0, duplicatePrefixTokens: 0 },
    };
  const problems: ValidationProblem[] = [];
  const badTrajectories: number[] = [];
  let anyTrainable = false;
  trajectories.forEach((t, i) => {
    const found = trajectoryProblems(t, options, at(`trajectories[${i}]`));
    if (found.length) {
      badTrajectories.push(i);
      problems.push(...found);
    } else if (isObj(t) && trainable(t)) anyTrainable = true;
  });
  let refused = false;
  if (options.requireTrainable !== false && !anyTrainable) {
    refused = true;
    // Said once, for the group, unless every trajectory is bad already.
    if (badTrajectories.length < trajectories.length)
      problems.push({ path: prefix || "(group)", message: NO_TRAINABLE });
  }
  return { problems, badTrajectories, refused, tokens: groupTokenSharing(trajectories) };
}

/** A `Trajectory` or `TrajectoryGroup` walked as its fields; JSON as it is; a string parsed. */
function toPlain(value: unknown): unknown {
  if (typeof value === "string") {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

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

const WARNED = Symbol.for("trajectory-recorder.check-warned");
const shared = globalThis as { [WARNED]?: Set<string> };

/** A kind of finding: the key it is said once by, and how a count of it reads. */
interface FindingKind {
  key: string;
  /** e.g. "Choices lack token ids" for `n` > 1, "Choice lacks token ids" for one. */
  say(n: number): string;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const KINDS: Record<string, FindingKind> = {
  token_ids: {
    key: "token_ids",
    say: (n) =>
      `${plural(n, "Choice lacks", "Choices lack")} token ids (token_ids, prompt_token_ids)`,
  },
  logprobs: {
    key: "logprobs",
    say: (n) => `${plural(n, "Choice lacks", "Choices lack")} logprobs`,
  },
  finish_reason: {
    key: "finish_reason",
    say: (n) => `${plural(n, "Choice has", "Choices have")} a finish_reason the schema refuses`,
  },
  tool_call_id: {
    key: "tool_call_id",
    say: (n) => `${plural(n, "tool message answers", "tool messages answer")} no open call`,
  },
  metadata: {
    key: "metadata",
    say: (n) =>
      `${plural(n, "metadata value is", "metadata values are")} not a scalar (the service answers 422)`,
  },
  untrainable: {
    key: "untrainable",
    say: (n) =>
      `${plural(n, "group holds", "groups hold")} no trainable Choice (was the openai client wrapped, and called inside recorder.rollout()?)`,
  },
  other: { key: "other", say: (n) => `${plural(n, "other problem", "other problems")}` },
};

/** The kind of a finding, from where it was found (not from its wording). */
function kindOf(problem: ValidationProblem): FindingKind {
  if (problem.message === NO_TRAINABLE) return KINDS.untrainable as FindingKind;
  if (/(^|\.)metadata(\.|$)/.test(problem.path)) return KINDS.metadata as FindingKind;
  const last = problem.path.slice(problem.path.lastIndexOf(".") + 1);
  if (last in KINDS && last !== "other" && last !== "untrainable")
    return KINDS[last] as FindingKind;
  return KINDS.other as FindingKind;
}

/**
 * The findings said briefly: one line per kind, with its count and the path
 * of the first; in the order the kinds were first found.
 */
function summarize(problems: ValidationProblem[]): { key: string; line: string }[] {
  const byKind = new Map<FindingKind, { count: number; first: ValidationProblem }>();
  for (const p of problems) {
    const kind = kindOf(p);
    const seen = byKind.get(kind);
    if (seen) seen.count++;
    else byKind.set(kind, { count: 1, first: p });
  }
  return [...byKind].map(([kind, { count, first }]) => ({
    key: kind.key,
    line: `${kind.say(count)}, first ${first.path}${kind === KINDS.other ? ` (${first.message})` : ""}`,
  }));
}

const HOW_TO_LIST = "validateGroup() or `trajectory-recorder validate` lists them";

/** Unasked, each kind of finding is said once per process, in one short line. */
function warnOnce(where: string, problems: ValidationProblem[]): void {
  shared[WARNED] ??= new Set();
  const said = shared[WARNED];
  for (const { key, line } of summarize(problems)) {
    if (said.has(key)) continue;
    said.add(key);
    console.warn(
      `${where}: ${line}; ${HOW_TO_LIST} (said once per process; validate: "throw" refuses such groups).`,
    );
  }
}

/** Asked for (`"warn"` with options), the findings are said on every call, briefly. */
function briefly(where: string, problems: ValidationProblem[]): string {
  return `${where}: ${summarize(problems)
    .map((s) => s.line)
    .join("; ")}; ${HOW_TO_LIST}.`;
}

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

function checkOptions(call: string, options: unknown): void {
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new InvalidArgumentError(`${call}(value, options)`, "options", "an object", options);
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
