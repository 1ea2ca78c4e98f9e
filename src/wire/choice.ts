// The Choices of a trajectory as OpenPipe ART dumps them: what the model
// sampled, with its tokens' logprobs (what the trainer learns from), and the
// union of a Choice and a message that `messages_and_choices` holds. Lenient
// and declared as in messages.ts (an interface beside each schema, held to it
// by `sameType`).
import { z } from "zod";
import {
  type MessageWire,
  type MessageWireInput,
  MessageWireSchema,
  type ToolCallWire,
  type ToolCallWireInput,
  ToolCallWireSchema,
} from "./messages.js";
import { sameType } from "./same-type.js";

const int = z.number().int();

const TopLogprob = z.looseObject({
  token: z.string(),
  bytes: z.array(int).nullable().default(null),
  logprob: z.number(),
});
/** One sampled token with its logprob, as in OpenAI's `ChatCompletionTokenLogprob`. */
export const TokenLogprobWireSchema = z.looseObject({
  token: z.string(),
  bytes: z.array(int).nullable().default(null),
  logprob: z.number(),
  top_logprobs: z.array(TopLogprob).default([]),
});
/** One sampled token with its logprob (OpenAI's `ChatCompletionTokenLogprob`). */
export interface TokenLogprobWire {
  /** The token's text. */
  token: string;
  /** Its UTF-8 bytes, or `null`. */
  bytes: number[] | null;
  /** Its log probability. */
  logprob: number;
  /** The likeliest tokens at this position. */
  top_logprobs: {
    /** The token's text. */
    token: string;
    /** Its UTF-8 bytes, or `null`. */
    bytes: number[] | null;
    /** Its log probability. */
    logprob: number;
    /** Keys the engine adds, kept. */
    [key: string]: unknown;
  }[];
  /** Keys the engine adds, kept. */
  [key: string]: unknown;
}
sameType<TokenLogprobWire, z.infer<typeof TokenLogprobWireSchema>>(true);

/** One sampled token as a request takes it ({@link TokenLogprobWire}; defaulted keys optional). */
export interface TokenLogprobWireInput {
  /** The token's text. */
  token: string;
  /** Its UTF-8 bytes. Default `null`. */
  bytes?: number[] | null | undefined;
  /** Its log probability. */
  logprob: number;
  /** The likeliest tokens at this position. Default `[]`. */
  top_logprobs?:
    | {
        /** The token's text. */
        token: string;
        /** Its UTF-8 bytes. Default `null`. */
        bytes?: number[] | null | undefined;
        /** Its log probability. */
        logprob: number;
        /** Keys the engine adds, kept. */
        [key: string]: unknown;
      }[]
    | undefined;
  /** Keys the engine adds, kept. */
  [key: string]: unknown;
}
sameType<TokenLogprobWireInput, z.input<typeof TokenLogprobWireSchema>>(true);

/**
 * A model-sampled assistant turn: OpenAI's chat completion `Choice` with its
 * `logprobs` and the engine's extras (`token_ids`, `prompt_token_ids`), which
 * are what the trainer learns from.
 *
 * @example
 * ChoiceWireSchema.parse({
 *   finish_reason: "stop", index: 0, logprobs: null,
 *   message: { role: "assistant", content: "Paris" },
 * });
 */
export const ChoiceWireSchema = z.looseObject({
  finish_reason: z.string().nullable(),
  index: int,
  logprobs: z
    .looseObject({
      content: z.array(TokenLogprobWireSchema).nullable().default(null),
      refusal: z.array(TokenLogprobWireSchema).nullable().default(null),
    })
    .nullable()
    .default(null),
  message: z.looseObject({
    content: z.string().nullable().default(null),
    refusal: z.string().nullable().default(null),
    role: z.literal("assistant"),
    tool_calls: z.array(ToolCallWireSchema).nullish(),
  }),
});
/** A model-sampled assistant turn: OpenAI's `Choice` with its logprobs (what the trainer learns from). */
export interface ChoiceWire {
  /** Why sampling stopped, or `null`. */
  finish_reason: string | null;
  /** Its index among the completion's choices. */
  index: number;
  /** The sampled tokens' logprobs, or `null`. */
  logprobs: {
    /** One entry per sampled token of the content. */
    content: TokenLogprobWire[] | null;
    /** One entry per sampled token of a refusal. */
    refusal: TokenLogprobWire[] | null;
    /** Keys the engine adds, kept. */
    [key: string]: unknown;
  } | null;
  /** The message it produced. */
  message: {
    /** Its text, or `null`. */
    content: string | null;
    /** The refusal, or `null`. */
    refusal: string | null;
    /** Always `"assistant"`. */
    role: "assistant";
    /** The tool calls it made. */
    tool_calls?: ToolCallWire[] | null | undefined;
    /** Keys the engine adds (`reasoning_content`, ...), kept. */
    [key: string]: unknown;
  };
  /** Keys the engine adds (`token_ids`, `prompt_token_ids`, ...), kept. */
  [key: string]: unknown;
}
sameType<ChoiceWire, z.infer<typeof ChoiceWireSchema>>(true);

const MessageOrChoiceUnion = z.union([ChoiceWireSchema, MessageWireSchema]);
/** One item of `messages_and_choices`: a Choice the model sampled, or a message. */
export type MessageOrChoiceWire = ChoiceWire | MessageWire;

/** One item of `messages_and_choices` as a request takes it: a Choice, or a message. */
export type MessageOrChoiceWireInput = ChoiceWireInput | MessageWireInput;

/** A Choice as a request takes it ({@link ChoiceWire}; defaulted keys optional, any `role`). */
export interface ChoiceWireInput {
  /** Why sampling stopped, or `null`. */
  finish_reason: string | null;
  /** Its index among the completion's choices. */
  index: number;
  /** The sampled tokens' logprobs. Default `null`. */
  logprobs?:
    | {
        /** One entry per sampled token of the content. Default `null`. */
        content?: TokenLogprobWireInput[] | null | undefined;
        /** One entry per sampled token of a refusal. Default `null`. */
        refusal?: TokenLogprobWireInput[] | null | undefined;
        /** Keys the engine adds, kept. */
        [key: string]: unknown;
      }
    | null
    | undefined;
  /** The message it produced. */
  message: {
    /** Its text. Default `null`. */
    content?: string | null | undefined;
    /** The refusal. Default `null`. */
    refusal?: string | null | undefined;
    /** `"assistant"` (checked at run time). */
    role: string;
    /** The tool calls it made. */
    tool_calls?: ToolCallWireInput[] | null | undefined;
    /** Keys the engine adds (`reasoning_content`, ...), kept. */
    [key: string]: unknown;
  };
  /** Keys the engine adds (`token_ids`, `prompt_token_ids`, ...), kept. */
  [key: string]: unknown;
}
// A Choice's input as its schema has it, with `message.role` widened to any string.
type ChoiceSchemaInput = {
  [K in keyof z.input<typeof ChoiceWireSchema>]: K extends "message"
    ? {
        [M in keyof z.input<typeof ChoiceWireSchema>["message"]]: M extends "role"
          ? string
          : z.input<typeof ChoiceWireSchema>["message"][M];
      }
    : z.input<typeof ChoiceWireSchema>[K];
};
sameType<ChoiceWireInput, ChoiceSchemaInput>(true);

/**
 * One element of `messages_and_choices`: a Choice (it has a `message` key) or a
 * plain message param (it has a `role`). Every role is checked at run time; the
 * static input type takes any `role: string` (on a message and on a Choice's
 * `message`), so that objects built in user code without `as const` are
 * accepted by the type checker too.
 */
export const MessageOrChoiceWireSchema = MessageOrChoiceUnion as unknown as z.ZodType<
  MessageOrChoiceWire,
  MessageOrChoiceWireInput
>;
