import { MaxTurnsExceededError } from "@openai/agents";
import { InvalidArgumentError, type Recorder } from "../../recorder/index.js";

/**
 * A `scoreError` for `recorder.rollout` that scores a run ending in the
 * Agents SDK's `MaxTurnsExceededError` with `reward` (default 0) instead of
 * failing the rollout: an agent that calls its tool again and again until
 * `maxTurns` is a bad trajectory to learn from, kept for training, not an
 * exception a gather counts. Every other error is thrown as before.
 *
 * @example
 * const t = await recorder.rollout(
 *   async (t) => { t.reward = grade((await runner.run(agent, input, { maxTurns: 4 })).finalOutput); },
 *   { scoreError: scoreMaxTurns() },
 * );
 */
export function scoreMaxTurns(reward = 0): Recorder.RolloutErrorScorer {
  if (typeof reward !== "number" || !Number.isFinite(reward))
    throw new InvalidArgumentError("scoreMaxTurns(reward)", "reward", "a finite number", reward);
  return (error) => (error instanceof MaxTurnsExceededError ? reward : undefined);
}
