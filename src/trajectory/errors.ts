import type { z } from "zod";
import { markError, TrajectoryRecorderError } from "../util/error-family.js";

/**
 * Thrown when JSON given to `fromJSON` is not a valid ART trajectory or group.
 * The message names each bad field by its path and what was expected.
 *
 * @example
 * try { Trajectory.fromJSON({ reward: "high" }); }
 * catch (e) { if (e instanceof TrajectoryValidationError) console.error(e.issues); }
 */
export class TrajectoryValidationError extends TrajectoryRecorderError {
  static {
    markError(TrajectoryValidationError, "TrajectoryValidationError");
  }
  /** The class's name, `"TrajectoryValidationError"` (what `error.name` reads). */
  override readonly name: string = "TrajectoryValidationError";
  /** The zod issues, each with its `path`. */
  readonly issues: z.core.$ZodIssue[];

  constructor(what: string, issues: z.core.$ZodIssue[]) {
    const details = issues
      .flatMap((i) => explain(i, []))
      .map((i) => `${formatPath(i.path)}: ${i.message}`)
      .join("; ");
    super(`The ${what} is not valid ART JSON: ${details}.`);
    this.issues = issues;
  }
}

/** One thing the check before training found wrong, at `path` (e.g. `trajectories[1].metadata.tags`). */
export interface ValidationProblem {
  /** Where, e.g. `messages_and_choices[3].logprobs`. */
  path: string;
  /** What is wrong there. */
  message: string;
}

/**
 * Thrown by `validateTrajectory`, `validateGroup`, and by `train`, `log` and
 * the shipper's `add` before anything is sent, when a trajectory would teach
 * the trainer something wrong (a tool result without its call, a Choice
 * without logprobs, nested metadata, a group with nothing trainable).
 * A `TrajectoryValidationError`; `problems` names the path of each bad item.
 *
 * @example
 * try { validateGroup(group); }
 * catch (e) { if (e instanceof TrajectoryCheckError) for (const p of e.problems) console.error(p.path, p.message); }
 */
export class TrajectoryCheckError extends TrajectoryValidationError {
  static {
    markError(TrajectoryCheckError, "TrajectoryCheckError");
  }
  /** The class's name, `"TrajectoryCheckError"` (what `error.name` reads). */
  override readonly name = "TrajectoryCheckError";
  /** Every problem found, with its path. */
  readonly problems: ValidationProblem[];

  constructor(what: string, problems: ValidationProblem[]) {
    super(what, []);
    this.problems = problems;
    const shown = problems.slice(0, 10).map((p) => `${p.path}: ${p.message}`);
    const more = problems.length > 10 ? `; and ${problems.length - 10} more` : "";
    this.message = `${what} failed the check before training: ${shown.join("; ")}${more}.`;
  }
}

/**
 * Thrown by `gatherTrajectoryGroups` when more rollouts failed than
 * `maxExceptions` allows. `cause` is the rollout error that crossed the limit.
 */
export class TooManyExceptionsError extends TrajectoryRecorderError {
  static {
    markError(TooManyExceptionsError, "TooManyExceptionsError");
  }
  /** The class's name, `"TooManyExceptionsError"` (what `error.name` reads). */
  override readonly name = "TooManyExceptionsError";
  /** How many rollouts failed. */
  readonly failures: number;
  /** The `maxExceptions` that was crossed. */
  readonly limit: number;
  constructor(failures: number, limit: number, options: { cause: unknown }) {
    const cause = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(
      `${failures} rollouts failed, more than maxExceptions allows (${limit}); the last error was: ${cause}`,
      options,
    );
    this.failures = failures;
    this.limit = limit;
  }
}

// A union failure ("Invalid input") says nothing useful; report the issues of
// the branch that came closest (fewest issues), with their full path.
function explain(
  issue: z.core.$ZodIssue,
  prefix: PropertyKey[],
): { path: PropertyKey[]; message: string }[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const closest = issue.errors.reduce((best, branch) =>
      branch.length < best.length ? branch : best,
    );
    if (closest.length > 0) return closest.flatMap((i) => explain(i, path));
  }
  return [{ path, message: issue.message }];
}

function formatPath(path: PropertyKey[]): string {
  if (path.length === 0) return "(root)";
  return path
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
}
