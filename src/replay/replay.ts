// Replayed groups for RL: production gives one answer per state; replay
// samples N more from the current checkpoint, scores them together, and keeps
// the groups whose rewards differ (the only ones `model.train` learns from).
import { Recorder } from "../recorder/index.js";
import { applyJudge, applyReward } from "../rewards/index.js";
import { hasRewardSignal, type Trajectory, TrajectoryGroup } from "../trajectory/index.js";
import { errorMessage } from "../util/error-message.js";
import { checkReplayOptions, REPLAY_DEFAULTS } from "./options.js";
import { type SampleContext, sampleState } from "./sample.js";
import { chooseStates } from "./select.js";
import { stateOf } from "./state.js";
import type { ReplayedState, ReplayOptions, ReplayResult, ReplayState } from "./types.js";

const STDERR_INFO = { info: (message: string) => console.error(message) };

/**
 * Replays recorded states of a production store as RL groups: for each state
 * chosen (negative feedback first, then a seeded sample of the rest), samples
 * `n` answers from the model's latest checkpoint, records each as a
 * trajectory with the recorder (token ids and logprobs as usual), scores the
 * group with `reward`, `judge` or both, and returns the groups whose rewards
 * differ. Groups scored alike are counted, logged and left out. See
 * docs/production.md, "Replayed groups for RL".
 *
 * @throws InvalidArgumentError naming the bad option, before anything is read or sent.
 * @example
 * const store = await TrajectoryStore.open({ dir: "./store" });
 * const { groups } = await replayGroups({ store, model, n: 4, judge: { client: new OpenAI(), model: "o4-mini" } });
 * if (groups.length > 0) await model.train(groups);
 */
export async function replayGroups(options: ReplayOptions): Promise<ReplayResult> {
  checkReplayOptions(options);
  const logger = options.logger ?? STDERR_INFO;
  const recorder = options.recorder ?? new Recorder();
  const n = options.n ?? REPLAY_DEFAULTS.n;
  const result: ReplayResult = { groups: [], states: [], noSignalGroups: 0, unusable: 0 };
  const { chosen, missing } = chooseStates(options.store, options.select);
  // Every sample comes from one checkpoint, asked for now and pinned: each
  // records its policy version (a model that has not asked for its step
  // would record none), and a step trained meanwhile does not mix into a group.
  const step = chosen.length > 0 ? await options.model.getStep() : undefined;
  const ctx: SampleContext = {
    recorder,
    openai: options.model.openai({ recorder, step }),
    toolRunner: options.toolRunner,
    maxTurns: options.toolRunner ? (options.maxTurns ?? REPLAY_DEFAULTS.maxTurns) : 1,
    requestOptions: options.requestOptions ?? {},
  };
  if (missing.length > 0) {
    result.unusable += missing.length;
    logger.info(
      `replayGroups: ${missing.length} of the ids in select.ids cannot be replayed (not in the store, outside since/until, without calls, or marked eligible: false): ${missing.join(", ")}.`,
    );
  }
  for (const { summary, negative } of chosen) {
    const stored = options.store.get(summary.id);
    const state = stored && stateOf(stored, negative);
    if (!state) {
      result.unusable++;
      logger.info(
        `replayGroups: ${summary.id} has no assistant turn after a request to replay (or left the store); skipped.`,
      );
      continue;
    }
    const replayed = await replayState(ctx, options, state, n, logger);
    result.states.push(replayed.summary);
    if (replayed.group) result.groups.push(replayed.group);
  }
  result.noSignalGroups = result.states.filter((s) => s.outcome === "no_reward_signal").length;
  if (result.noSignalGroups > 0)
    logger.info(
      `replayGroups: left out ${result.noSignalGroups} of ${result.states.length} replayed group(s) whose rewards are all equal (nothing to learn); ${result.groups.length} to train on.`,
    );
  return result;
}

async function replayState(
  ctx: SampleContext,
  options: ReplayOptions,
  state: ReplayState,
  n: number,
  logger: { info(message: string): void },
): Promise<{ summary: ReplayedState; group?: TrajectoryGroup }> {
  const settled = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => sampleState(ctx, state, i)),
  );
  const trajectories: Trajectory[] = [];
  let failedSamples = 0;
  for (const s of settled) {
    if (s.status === "fulfilled") trajectories.push(s.value);
    else {
      failedSamples++;
      logger.info(
        `replayGroups: a sample of ${state.trajectoryId} failed and is left out of its group: ${errorMessage(s.reason)}`,
      );
    }
  }
  const summary = (outcome: ReplayedState["outcome"], rewards: number[] = []): ReplayedState => ({
    state,
    rewards,
    outcome,
    failedSamples,
  });
  if (trajectories.length < 2) return { summary: summary("too_few_samples") };
  const group = new TrajectoryGroup({
    trajectories,
    metadata: { replay_of: state.trajectoryId, replay_turn: state.turn },
  });
  if (!(await score(group, options, state))) return { summary: summary("judge_failed") };
  const rewards = group.trajectories.map((t) => t.reward);
  if (!hasRewardSignal(group)) return { summary: summary("no_reward_signal", rewards) };
  return { summary: summary("trainable", rewards), group };
}

/**
 * The reward function first; the judge's score, when asked for, is added to
 * it. False when the judge failed with `onError: "skip"` (it logged why).
 */
async function score(
  group: TrajectoryGroup,
  options: ReplayOptions,
  state: ReplayState,
): Promise<boolean> {
  const reward = options.reward;
  if (reward) await applyReward(group, (t) => reward(t, state));
  if (!options.judge) return true;
  const judged = await applyJudge(group, options.judge);
  if (judged === null) return false;
  if (reward) for (const t of group.trajectories) t.reward += Number(t.metrics.independent_reward);
  return true;
}
