import { markError, TrajectoryRecorderError } from "../util/error-family.js";

/** Why a report source could not be read: see {@link ReportSourceError.reason}. */
export type ReportSourceProblem =
  | "unreadable"
  | "invalid"
  | "model_not_found"
  | "model_ambiguous"
  | "in_use";

/**
 * A report's source (an emulator data directory or a JSONL file of groups)
 * could not be read: the file is missing or not readable (`unreadable`), a
 * line is not a group or trajectory (`invalid`, with its `line`), or the
 * model asked for is not in it or is ambiguous, or a trajectory store is
 * held by a running process (`in_use`). The message names the file,
 * the line and what was expected.
 *
 * @example
 * try { await writeReport({ groupsFile: "groups.jsonl", out: "report.html" }); }
 * catch (e) { if (ReportSourceError.isInstance(e)) console.error(e.source, e.line, e.message); }
 */
export class ReportSourceError extends TrajectoryRecorderError {
  static {
    markError(ReportSourceError, "ReportSourceError");
  }
  override readonly name = "ReportSourceError";
  constructor(
    message: string,
    /** The file that could not be used. */
    readonly source: string,
    /** What was wrong with it. */
    readonly reason: ReportSourceProblem,
    /** The 1-based line of a JSONL file, when one line was wrong. */
    readonly line?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
