// What a Recorder is made with: the options, declared once, with the types
// they use listed in the RecorderOptions namespace.
import type {
  EndpointOptions,
  RecordingUpstream,
  TrainableModelLike,
  UrlUpstream,
} from "../endpoint/index.js";
import type { GroupSink, LineageMode } from "../trajectory/index.js";
import type { RolloutStore } from "./handle.js";
import type { SessionOptions } from "./sessions.js";

/** Options of {@link Recorder}. */
export interface RecorderOptions {
  /** Ask for logprobs inside rollouts. Default `true`. */
  logprobs?: boolean;
  /**
   * Ask for the engine's token ids inside rollouts (`return_token_ids` and
   * `return_tokens_as_token_ids`, vLLM extensions the Training Service accepts;
   * turn off for servers that reject unknown parameters). Default `true`.
   */
  tokenIds?: boolean;
  /** Put message content on telemetry spans. Default `false`. */
  recordContent?: boolean;
  /** Where {@link Recorder.gatherTrajectoryGroups} sends finished groups (e.g. a shipper). */
  shipper?: GroupSink;
  /**
   * The models being trained: a list of model names, or a predicate on a
   * model name. A completion is the policy's when its response's model (else
   * its request's) is; any other model's completion is recorded as a plain
   * assistant message (context, never trained on) and the trajectory's logs
   * name that model once. Default: every model is the policy.
   * `model.openai({ recorder })` adds its own model.
   */
  policy?: readonly string[] | ((model: string) => boolean);
  /**
   * The training step of the checkpoint a model name serves (`undefined`
   * when unknown), recorded per turn as the trajectory's
   * `initial_policy_version` (its first policy turn) and
   * `final_policy_version` (its last). Default: the step a name pins
   * (`wandb-artifact:///me/demo/agent:step3` is 3), and for
   * `model.openai({ recorder })` the newest step that `TrainableModel` knows.
   */
  policyVersion?: (model: string) => number | undefined;
  /** Where the recorder warns (once per process, e.g. a rollout that recorded no call). Default `console`. */
  logger?: { warn(message: string): void };
  /**
   * How histories follow the token ids the server returns. `"tokens"`
   * (default): a turn whose `prompt_token_ids` do not start with the previous
   * Choice's `prompt_token_ids` and `token_ids` (a chat template that strips
   * earlier reasoning, re-serializes tool call arguments, ...) goes on in a
   * new additional history, and `logs` say where the tokens diverged.
   * `"text"`: such turns stay in their history when the messages match as
   * text (ART's text-equivalent reconciliation), still said in `logs`.
   * `"off"`: no token check. A rollout may override it.
   */
  lineage?: RecorderOptions.LineageMode;
  /**
   * What `t.baseURL` forwards to (see {@link RolloutTrajectory}): a
   * `TrainableModel` (its latest checkpoint fills in `model: ""`, every
   * completion is the policy's, as `model.openai({ recorder })`), or any
   * OpenAI-compatible server `{ baseURL, apiKey?, model?, policy? }`. The
   * endpoint starts with the first rollout, on loopback; `recorder.close()` stops it.
   */
  upstream?: RecorderOptions.RecordingUpstream;
  /** Where and how the endpoint behind `t.baseURL` listens (loopback, a free port by default). */
  endpoint?: RecorderOptions.EndpointOptions;
  /**
   * Where rollouts and sessions are written as they record: after each call,
   * and when they end (a `TrajectoryStore` from `trajectory-recorder/store`,
   * or a `RedisTrajectoryStore` from `trajectory-recorder/bullmq`).
   * A process killed mid-call then keeps every call before it. Default: none.
   */
  store?: RecorderOptions.RolloutStore;
  /**
   * Mark a rollout or session as an infrastructure failure
   * (`metadata.infra_failure`, with a line in `logs`) when one of its
   * recorded calls got an upstream 5xx, a transport error or a timeout, or
   * had its stream cut off, even when the agent caught the error and went
   * on: such a rollout is left out of its group's statistics and of
   * training instead of being scored as a zero. `false` only logs them. A
   * rollout opts out with `t.clearInfraFailure()` (or `metadata: {
   * infra_failure: false }`). Default `true`.
   */
  markInfraFailures?: boolean;
  /** How sessions end (see {@link Recorder.session}). */
  sessions?: RecorderOptions.SessionOptions;
}

/** The types {@link RecorderOptions} uses, declared where they are used and listed here. */
export declare namespace RecorderOptions {
  export type {
    EndpointOptions,
    LineageMode,
    RecordingUpstream,
    RolloutStore,
    SessionOptions,
    TrainableModelLike,
    UrlUpstream,
  };
}
