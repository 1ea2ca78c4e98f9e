// What a rollout is to the code that records into it (the wrapped client,
// framework plugins, the recording endpoint): the ActiveRollout contract and
// the shapes of the calls it records.
import type {
  ChatCompletion,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import type { LineageMode, Trajectory } from "../trajectory/index.js";

/** The rollout running in the current async context. */
export interface ActiveRollout {
  /** The trajectory this rollout records into. */
  readonly trajectory: Trajectory;
  /** What the recorder records for this rollout (logprobs, token ids, content, lineage). */
  readonly options: ActiveRollout.RolloutOptions;
  /** The single path every recorded call goes through. */
  recordCompletion(call: ActiveRollout.RecordedCompletion): void;
  /**
   * Records a tool's result for the conversation (main or additional) whose
   * assistant turn issued `tool_call_id`. It is held until a later request of
   * that conversation carries it (then that request's content and order win);
   * a result no request carries (a last step) is appended to that
   * conversation, in call order, when the rollout ends. A result whose call
   * no recorded turn issued is logged, not recorded.
   */
  recordToolResult(result: {
    tool_call_id: string;
    content: string | unknown[];
    name?: string;
  }): void;
  /**
   * Whether `model` (a response's model, else the request's) is the policy
   * being trained: the recorder's `policy`, every model when none was given.
   * Other models' completions are recorded as plain assistant messages.
   */
  isPolicy(model: string | undefined): boolean;
  /** Adds a line to the trajectory's `logs` (ignored once the rollout has ended). */
  log(message: string): void;
  /** Appends `message` to the trajectory's logs unless this rollout already logged it. */
  logOnce(message: string): void;
  /**
   * Runs `callback` when the rollout's function has returned or thrown, before
   * the trajectory is handed back: a plugin records there what the framework
   * never finished (a stream the caller stopped reading). A callback given
   * after the end never runs. Optional: a rollout of an older copy of this
   * module may lack it.
   */
  onEnd?(callback: () => void): void;
}

/** The types {@link ActiveRollout} uses, declared in this file and listed here. */
export declare namespace ActiveRollout {
  export type { LineageMode, RecordedChoice, RecordedCompletion, RolloutOptions };
}

/** Options a rollout records with. */
export interface RolloutOptions {
  /** Ask for `logprobs: true` on every call inside the rollout. Default `true`. */
  logprobs: boolean;
  /**
   * Ask for `return_token_ids: true` and `return_tokens_as_token_ids: true` on
   * every call inside the rollout, as ART does. Default `true`.
   */
  tokenIds: boolean;
  /** Put message content on telemetry spans. Default `false`. */
  recordContent?: boolean;
  /** Whether a model (undefined: unnamed) is the policy being trained; absent: every model is. */
  isPolicy?: (model: string | undefined) => boolean;
  /** How histories follow the token ids (see {@link LineageMode}). Default `"tokens"`. */
  lineage?: ActiveRollout.LineageMode;
  /**
   * The training step of the checkpoint a model name (a response's model,
   * else the request's) serves, `undefined` when unknown; stamped as the
   * trajectory's policy versions. Absent: the step a name pins (`:step3`).
   */
  policyVersion?: (model: string | undefined) => number | undefined;
  /**
   * Mark the rollout as an infrastructure failure when a recorded call fails
   * for reasons outside the policy (an upstream 5xx, a transport error, a
   * timeout, a cut stream). Default `true`.
   */
  markInfraFailures?: boolean;
}

/** A recorded Choice, with the token ids a vLLM-style server returns. */
export type RecordedChoice = ChatCompletion.Choice & {
  /** The sampled tokens' ids. */
  token_ids?: number[];
  /** The prompt's token ids. */
  prompt_token_ids?: number[];
};

/** One completion as the recorder saw it: the request snapshot and the sampled choices. */
export interface RecordedCompletion {
  /** The request as sent (a snapshot: later changes of the caller's objects do not reach it). */
  request: {
    /** The model asked for. */
    model?: string;
    /** The messages sent. */
    messages: ChatCompletionMessageParam[];
    /** The tools offered. */
    tools?: ChatCompletionTool[];
    /** The request's other parameters. */
    [k: string]: unknown;
  };
  /** The choices the call sampled. */
  choices: RecordedChoice[];
  /** What the response said besides its choices. */
  response?: {
    /** The completion's id. */
    id?: string;
    /** The model that answered. */
    model?: string;
    /** Its token usage. */
    usage?: CompletionUsage;
    /** The prompt's token ids, when the server returns them. */
    prompt_token_ids?: number[];
  };
  /** How the call ended. Default `"complete"`. */
  status?: "complete" | "incomplete" | "aborted" | "error";
  /** The error it ended with, when it failed. */
  error?: unknown;
  /**
   * An `"incomplete"` stream ended before its last chunk without the caller
   * stopping it (the server or the network cut it off): the rollout is
   * marked as an infrastructure failure. A plugin sets it when it can tell.
   */
  cut?: boolean;
  /** The response was streamed. */
  streamed?: boolean;
  /**
   * When the call started (ms since the epoch). Framework plugins set it: the
   * rollout then emits the call's GenAI `chat` span from this time to now.
   */
  startTime?: number;
  /** The call already has its span (the wrapped client traces its own calls). */
  traced?: boolean;
  /** Sampled by the policy, whatever the model's name (a client wrapped as the policy's). */
  policy?: boolean;
  /**
   * Keep the answers as the plain assistant messages given (every field,
   * reasoning included), never as Choices, whichever model sampled them: an
   * API that returns no token ids (the Responses API) gives context or a
   * teacher trace for SFT, nothing the trainer could align tokens with.
   */
  plain?: boolean;
}
