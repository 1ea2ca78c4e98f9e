import type { Trajectory } from "../trajectory/index.js";
import { markError, TrajectoryRecorderError } from "../util/error-family.js";

/**
 * Thrown by `recorder.rollout()` when its `signal` aborted or its `timeout`
 * passed before the rollout's function settled. The rollout ended there: its
 * `trajectory` holds what was recorded until then, and its logs say why it
 * ended. The function may still be running; nothing it does later is recorded.
 *
 * @example
 * try { await recorder.rollout(run, { timeout: 60_000 }); }
 * catch (e) { if (e instanceof RolloutAbortedError) console.error(e.trajectory.logs); }
 */
export class RolloutAbortedError extends TrajectoryRecorderError {
  static {
    markError(RolloutAbortedError, "RolloutAbortedError");
  }
  /** The class's name, `"RolloutAbortedError"` (what `error.name` reads). */
  override readonly name = "RolloutAbortedError";
  /** The rollout's trajectory, as it was when the rollout was aborted. */
  readonly trajectory: Trajectory;
  /** Whether the rollout's `timeout` passed (else its `signal` aborted). */
  readonly timedOut: boolean;

  constructor(trajectory: Trajectory, timedOut: boolean, why: string, reason?: unknown) {
    super(`recorder.rollout: the rollout was aborted ${why}.`, { cause: reason });
    this.trajectory = trajectory;
    this.timedOut = timedOut;
  }
}
