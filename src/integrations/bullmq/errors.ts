/**
 * Redis could not be reached when a producer, worker or coordinator started.
 * Nothing was enqueued or taken.
 *
 * @example
 * try { await producer.enqueue(groups); } catch (e) { if (e instanceof RedisUnavailableError) retryLater(); }
 */
export class RedisUnavailableError extends Error {
  override name = "RedisUnavailableError";
}

/**
 * Groups given to `RolloutProducer.enqueue` that cannot be enqueued: the
 * message names the field (`groups[2].payload.when`) and what was expected.
 * Nothing of the call was enqueued.
 */
export class InvalidGroupError extends Error {
  override name = "InvalidGroupError";
}

/**
 * A rollout's result that is not a trajectory: the rollout function returned
 * something else, or the trajectory does not serialize to ART's JSON (the
 * message names the field). The rollout counts as failed, in its group's
 * `exceptions`; it is not retried, since running it again would fail the same way.
 */
export class RolloutResultError extends Error {
  override name = "RolloutResultError";
}
