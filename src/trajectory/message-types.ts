import { sameType } from "../wire/index.js";

// In-memory shapes of `messages_and_choices`. They are structural on purpose,
// so that the `openai` SDK's own message params and `Choice` objects (of any
// major version) can be pushed in as they are.

/** A chat message param of any role: context the model saw. */
export interface MessageParam {
  /** `system`, `user`, `assistant`, `tool`, ... */
  role: string;
  /** Text or content parts, as the OpenAI chat API takes them. */
  content?: unknown;
}

/** A model-sampled turn: an OpenAI chat completion `Choice` (trainable when it has `logprobs`). */
export interface ChoiceLike {
  finish_reason: string | null;
  index: number;
  logprobs?: unknown;
  message: { role: "assistant"; content?: string | null; tool_calls?: readonly unknown[] | null };
}

/** One element of `messages_and_choices`: a message param, or a Choice the model sampled. */
export type MessageOrChoice = MessageParam | MessageOrChoice.ChoiceLike;

/** The types {@link MessageOrChoice} is made of. */
export declare namespace MessageOrChoice {
  /** A model-sampled turn: an OpenAI chat completion `Choice` (trainable when it has `logprobs`). */
  export interface ChoiceLike {
    /** Why sampling stopped (`"stop"`, `"length"`, `"tool_calls"`, ...). */
    finish_reason: string | null;
    /** Its index among the completion's choices. */
    index: number;
    /** The sampled tokens' logprobs (what the trainer learns from). */
    logprobs?: unknown;
    /** The assistant message it produced. */
    message: {
      /** Always `"assistant"`. */
      role: "assistant";
      /** Its text. */
      content?: string | null;
      /** The tool calls it made. */
      tool_calls?: readonly unknown[] | null;
    };
  }
}
// The same type as ChoiceLike above, which `trajectory-recorder/wire` exports.
sameType<MessageOrChoice.ChoiceLike, ChoiceLike>(true);

/** A tool definition as sent to the model (OpenAI `ChatCompletionTool`). */
export interface ToolParam {
  /** `"function"`. */
  type: string;
}
