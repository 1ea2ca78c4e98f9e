// The shapes replayGroups takes and returns, declared once here.
import type { Recorder } from "../recorder/index.js";
import type { JudgeOptions } from "../rewards/index.js";
import type { ListFilter, StoredTrajectory, TrajectorySummary } from "../store/index.js";
import type { TrainableModel } from "../training/index.js";
import type { MessageParam, Trajectory, TrajectoryGroup } from "../trajectory/index.js";

/** What replay reads from a store: a `TrajectoryStore` fits, or anything with its `list` and `get`. */
export interface ReplayStoreReader {
  list(filter?: ListFilter): TrajectorySummary[];
  get(id: string): StoredTrajectory | undefined;
}

/** A recorded state: a stored trajectory's conversation up to one assistant turn, with its tools. */
export interface ReplayState {
  /** The stored trajectory it was taken from. */
  trajectoryId: string;
  /** Its session, or null. */
  session: string | null;
  /** The index in `messages_and_choices` of the assistant turn replayed (the prefix ends before it). */
  turn: number;
  /** The messages before that turn, as plain chat messages (recorded answers as assistant messages). */
  messages: MessageParam[];
  /** The tools the trajectory was recorded with, or null. */
  tools: unknown[] | null;
  /** The reward its feedback gave, or null. */
  reward: number | null;
  /** True when it was chosen for its negative feedback. */
  negative: boolean;
}

/** One tool call of an answer, as a `ChatCompletionMessageToolCall` reads. */
export interface ReplayToolCall {
  id: string;
  type: string;
  function?: { name: string; arguments: string };
}

/** A tool's answer, as the next request's `messages` take it. */
export interface ReplayToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

/**
 * Runs the tool calls of a replayed answer and returns one tool message per
 * call, so the agent loop goes on.
 *
 * @example
 * const toolRunner: ToolRunner = (calls) =>
 *   calls.map((c) => ({ role: "tool", tool_call_id: c.id, content: lookUp(c.function?.arguments) }));
 */
export type ToolRunner = (
  calls: readonly ReplayToolCall[],
  context: { state: ReplayState; messages: readonly MessageParam[] },
) => readonly ReplayToolMessage[] | PromiseLike<readonly ReplayToolMessage[]>;

/**
 * Scores one replayed answer on its own; `state` is the recorded state it
 * continues. May be async.
 *
 * @example
 * const reward: ReplayReward = (t) => (t.messages().at(-1)?.content?.includes("refund") ? 1 : 0);
 */
export type ReplayReward = (
  trajectory: Trajectory,
  state: ReplayState,
) => number | PromiseLike<number>;

/**
 * Which recorded states are replayed; every field has a default.
 *
 * @example
 * const select: ReplaySelect = { limit: 32, negativeAtMost: 0.2, seed: 7 };
 */
export interface ReplaySelect {
  /** The most states to replay. Default 8. */
  limit?: number;
  /** A stored reward at or below this is negative feedback; those states come first. Default 0 (a thumbs down). */
  negativeAtMost?: number;
  /** Seeds the sample of the other states, so the same store gives the same choice. Default 1. */
  seed?: number;
  /**
   * Only these trajectories (in this order), instead of choosing; `limit`
   * defaults to their number. An id that cannot be replayed is counted in
   * `unusable` and logged.
   */
  ids?: readonly string[];
  /** Only trajectories written (or given feedback) at or after this time. */
  since?: Date | number;
  /** Only trajectories written (or given feedback) before this time. */
  until?: Date | number;
}

/**
 * Options of {@link replayGroups}.
 *
 * @example
 * const options: ReplayOptions = { store, model, n: 4, reward: (t) => score(t), select: { limit: 16 } };
 */
export interface ReplayOptions {
  /** The production store to read states from (a `TrajectoryStore`). */
  store: ReplayStoreReader;
  /** The model whose latest checkpoint samples the answers (through `model.openai()`). */
  model: TrainableModel;
  /** Answers sampled per state, the group's size. Default 4; at least 2. */
  n?: number;
  /** Scores each answer on its own. With `judge` too, the judge's score is added to it. */
  reward?: ReplayReward;
  /** A relative judge (RULER-style) that sees the whole group; see `judgeGroup`. */
  judge?: JudgeOptions;
  /** Which states; see {@link ReplaySelect}. */
  select?: ReplaySelect;
  /**
   * Runs the tools an answer calls, so the replay goes on for more turns.
   * Without it the replay stops at the replayed turn (one answer per sample).
   */
  toolRunner?: ToolRunner;
  /** With a tool runner, the most answers one sample may take. Default 8. */
  maxTurns?: number;
  /** Extra fields of every chat request (`temperature`, `max_tokens`, ...). */
  requestOptions?: Record<string, unknown>;
  /** The recorder the samples are recorded with. Default: a new `Recorder`. */
  recorder?: Recorder;
  /** Where the lines about skipped groups and samples go. Default: stderr. */
  logger?: { info(message: string): void };
}

/** How one state's replay ended. */
export interface ReplayedState {
  state: ReplayState;
  /** The rewards of its samples, in order (those that failed left out). */
  rewards: number[];
  /**
   * `"trainable"`: in `groups`. Otherwise why not: its rewards were all equal,
   * fewer than 2 samples succeeded, or the judge failed (`onError: "skip"`).
   */
  outcome: "trainable" | "no_reward_signal" | "too_few_samples" | "judge_failed";
  /** Samples that threw (the model's server, the tool runner); each logged. */
  failedSamples: number;
}

/**
 * What {@link replayGroups} returns.
 *
 * @example
 * const { groups, noSignalGroups } = await replayGroups(options);
 * console.log(`${groups.length} to train, ${noSignalGroups} scored alike`);
 */
export interface ReplayResult {
  /** The groups whose rewards differ, ready for `model.train`. */
  groups: TrajectoryGroup[];
  /** Every state replayed, in order, with its outcome. */
  states: ReplayedState[];
  /** Groups left out because their rewards were all equal (nothing to learn). */
  noSignalGroups: number;
  /** Stored trajectories chosen but not replayable (no assistant turn, or gone from the store). */
  unusable: number;
}
