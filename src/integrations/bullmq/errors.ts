import { markError, TrajectoryRecorderError } from "../../util/error-family.js";
/**
 * Redis could not be reached when a producer, worker or coordinator started.
 * Nothing was enqueued or taken.
 *
 * @example
 * try { await producer.enqueue(groups); } catch (e) { if (e instanceof RedisUnavailableError) retryLater(); }
 */
export class RedisUnavailableError extends TrajectoryRecorderError {
  static {
    markError(RedisUnavailableError, "RedisUnavailableError");
  }
  /** The class's name, `"RedisUnavailableError"` (what `error.name` reads). */
  override name = "RedisUnavailableError";
}

/**
 * Groups given to `RolloutProducer.enqueue` that cannot be enqueued: the
 * message names the field (`groups[2].payload.when`) and what was expected.
 * Nothing of the call was enqueued.
 *
 * @example
 * await producer.enqueue([{ id: "g1", payload: { when: new Date() }, rollouts: 4 }]);
 * // InvalidGroupError: RolloutProducer.enqueue: groups[0].payload.when is a Date; it must be plain JSON ...
 */
export class InvalidGroupError extends TrajectoryRecorderError {
  static {
    markError(InvalidGroupError, "InvalidGroupError");
  }
  /** The class's name, `"InvalidGroupError"` (what `error.name` reads). */
  override name = "InvalidGroupError";
}

/**
 * A rollout's result that is not a trajectory: the rollout function returned
 * something else, or the trajectory does not serialize to ART's JSON (the
 * message names the field). The rollout counts as failed, in its group's
 * `exceptions`; it is not retried, since running it again would fail the same way.
 *
 * @example
 * // In a collected group's exceptions:
 * // { type: "<class 'RolloutResultError'>", message: "Rollout g1#0: the rollout function returned a number; ..." }
 */
export class RolloutResultError extends TrajectoryRecorderError {
  static {
    markError(RolloutResultError, "RolloutResultError");
  }
  /** The class's name, `"RolloutResultError"` (what `error.name` reads). */
  override name = "RolloutResultError";
}
