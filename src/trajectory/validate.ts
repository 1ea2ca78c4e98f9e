// The check before training: what a trainer would silently learn wrong from.
// It walks trajectories as objects or as their ART JSON (same field names),
// without copying them, so it costs one pass over the items. Here: the
// options and one trajectory's check; validate-group.ts checks a group,
// validate-send.ts runs the check before sending.
import { CompactLogprobs, logprobProblems } from "../logprobs/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { TrajectoryCheckError, type ValidationProblem } from "./errors.js";
import { checkLineage, checkTokenCount } from "./validate-lineage.js";

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
   * earlier turn's prompt and `token_ids`: what a rollout recorded with
   * `lineage: "text"` or `lineage: "off"` holds wherever the template renders
   * a turn back differently, and data recorded elsewhere. Default `false`.
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

export type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isChoiceItem(item: Obj): boolean {
  return "message" in item;
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

export function report(
  what: string,
  problems: ValidationProblem[],
  options: ValidateOptions,
): void {
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

/** A `Trajectory` or `TrajectoryGroup` walked as its fields; JSON as it is; a string parsed. */
export function toPlain(value: unknown): unknown {
  if (typeof value === "string") {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

export function checkOptions(call: string, options: unknown): void {
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new InvalidArgumentError(`${call}(value, options)`, "options", "an object", options);
}
