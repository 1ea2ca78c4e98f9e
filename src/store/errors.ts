// The store's errors. Each carries the HTTP status a server answers with, so
// the routes map them without a table of their own.
import { markError, TrajectoryRecorderError } from "../util/error-family.js";

/**
 * Another process (or another store in this one) holds the store's directory:
 * two writers would interleave their records. The message names the holder's
 * pid; a lock left by a process that no longer runs is taken over on open.
 *
 * @example
 * try { await TrajectoryStore.open({ dir }); }
 * catch (e) { if (StoreLockedError.isInstance(e)) console.error(`held by pid ${e.pid}`); }
 */
export class StoreLockedError extends TrajectoryRecorderError {
  static {
    markError(StoreLockedError, "StoreLockedError");
  }
  /** The class's name, `"StoreLockedError"` (what `error.name` reads). */
  override name = "StoreLockedError";
  /** The pid written in the lock file, or null when it could not be read. */
  readonly pid: number | null;
  constructor(dir: string, pid: number | null, host: string | null) {
    const who =
      pid === null
        ? "a process whose lock file cannot be read"
        : `process ${pid}${host ? ` on ${host}` : ""}`;
    super(
      `The trajectory store at ${dir} is in use by ${who}: only one process may write a store. Stop that process, or give this one another directory.`,
    );
    this.pid = pid;
  }
}

/**
 * A method of a store was called after `close()`.
 *
 * @example
 * await store.close(); store.put(entry); // throws StoreClosedError
 */
export class StoreClosedError extends TrajectoryRecorderError {
  static {
    markError(StoreClosedError, "StoreClosedError");
  }
  /** The class's name, `"StoreClosedError"` (what `error.name` reads). */
  override name = "StoreClosedError";
  constructor(method: string, dir: string) {
    super(`TrajectoryStore.${method}: the store at ${dir} is closed; open it again to use it.`);
  }
}

/**
 * A feedback body is not valid: a field of the wrong type, an unknown field,
 * a turn for a call the trajectory does not have. Nothing was stored. HTTP 400.
 *
 * @example
 * try { parseFeedback(body); }
 * catch (e) { if (InvalidFeedbackError.isInstance(e)) res.writeHead(e.status).end(e.message); }
 */
export class InvalidFeedbackError extends TrajectoryRecorderError {
  static {
    markError(InvalidFeedbackError, "InvalidFeedbackError");
  }
  /** The class's name, `"InvalidFeedbackError"` (what `error.name` reads). */
  override name = "InvalidFeedbackError";
  /** The HTTP status a server answers with. */
  readonly status = 400;
  /** Each bad field, as `path: what is wrong`. */
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid feedback, nothing was stored: ${problems.join("; ")}.`);
    this.problems = problems;
  }
}

/**
 * Feedback names a trajectory the store does not hold: never recorded, or
 * dropped by the store's bounds. Nothing was stored. HTTP 404.
 *
 * @example
 * catch (e) { if (FeedbackNotFoundError.isInstance(e)) res.writeHead(e.status); }
 */
export class FeedbackNotFoundError extends TrajectoryRecorderError {
  static {
    markError(FeedbackNotFoundError, "FeedbackNotFoundError");
  }
  /** The class's name, `"FeedbackNotFoundError"` (what `error.name` reads). */
  override name = "FeedbackNotFoundError";
  /** The HTTP status a server answers with. */
  readonly status = 404;
  /** The trajectory id the feedback named. */
  readonly trajectoryId: string;
  constructor(trajectoryId: string) {
    super(
      `No trajectory ${JSON.stringify(trajectoryId)} in the store (never recorded, or dropped by its size or age bound): trajectory_id must name a recorded trajectory.`,
    );
    this.trajectoryId = trajectoryId;
  }
}

/**
 * Feedback was resent with an `idempotency_key` already used, with different
 * content. The stored feedback is unchanged. HTTP 409; `field` names the
 * first field that differs.
 *
 * @example
 * catch (e) { if (FeedbackConflictError.isInstance(e)) console.error(e.field); } // "reward"
 */
export class FeedbackConflictError extends TrajectoryRecorderError {
  static {
    markError(FeedbackConflictError, "FeedbackConflictError");
  }
  /** The class's name, `"FeedbackConflictError"` (what `error.name` reads). */
  override name = "FeedbackConflictError";
  /** The HTTP status a server answers with. */
  readonly status = 409;
  /** The first field whose value differs from the stored feedback's, e.g. `"reward"`. */
  readonly field: string;
  constructor(key: string, field: string) {
    super(
      `Feedback with idempotency_key ${JSON.stringify(key)} was already stored with a different ${field}: a resend must repeat the same content, new feedback needs a new key.`,
    );
    this.field = field;
  }
}

/** Why a signed feedback token was refused. */
export type FeedbackTokenProblem = "malformed" | "tampered" | "expired";

/**
 * A signed feedback token was refused: `malformed` (not a token this library
 * makes), `tampered` (its signature does not match: altered, or signed with
 * another secret) or `expired`. HTTP 403. Neither the token nor the secret is
 * in the message.
 *
 * @example
 * catch (e) { if (FeedbackTokenError.isInstance(e) && e.problem === "expired") askForANewLink(); }
 */
export class FeedbackTokenError extends TrajectoryRecorderError {
  static {
    markError(FeedbackTokenError, "FeedbackTokenError");
  }
  /** The class's name, `"FeedbackTokenError"` (what `error.name` reads). */
  override name = "FeedbackTokenError";
  /** The HTTP status a server answers with. */
  readonly status = 403;
  /** Why the token was refused. */
  readonly problem: FeedbackTokenProblem;
  constructor(problem: FeedbackTokenProblem, detail: string) {
    super(`The signed feedback token was refused: ${detail}.`);
    this.problem = problem;
  }
}

/**
 * A feedback body sent with a signed token uses a field the token does not
 * allow, or names another trajectory. Nothing was stored. HTTP 403.
 *
 * @example
 * catch (e) { if (FeedbackNotAllowedError.isInstance(e)) console.error(e.field); } // "metrics"
 */
export class FeedbackNotAllowedError extends TrajectoryRecorderError {
  static {
    markError(FeedbackNotAllowedError, "FeedbackNotAllowedError");
  }
  /** The class's name, `"FeedbackNotAllowedError"` (what `error.name` reads). */
  override name = "FeedbackNotAllowedError";
  /** The HTTP status a server answers with. */
  readonly status = 403;
  /** The field the token does not allow. */
  readonly field: string;
  constructor(field: string, why: string) {
    super(`Feedback field ${field} is not allowed with this signed token: ${why}.`);
    this.field = field;
  }
}
