// Trajectories as OpenPipe ART dumps them with `model_dump(mode="json")`.
// Parsing is lenient (unknown keys are kept, missing keys take ART's defaults)
// so that JSON written by any ART version survives a round-trip through us.
//
// Each shape is declared once here, as an interface beside its schema (so the
// published declarations and the docs name it, not `z.infer<...>`), and a
// `sameType` check holds it to what the schema returns or accepts. The classes
// that own a shape re-list it in their namespace (`Trajectory.TrajectoryWire`).
import { z } from "zod";
import { sameType } from "./same-type.js";

const json = z.unknown();
const int = z.number().int();

/**
 * A function tool offered to the model, as in OpenAI's `ChatCompletionToolParam`.
 *
 * @example
 * ToolWireSchema.parse({ type: "function", function: { name: "search", parameters: { type: "object" } } });
 */
export const ToolWireSchema = z.looseObject({
  type: z.string().default("function"),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), json).optional(),
    strict: z.boolean().nullish(),
  }),
});
/** A function tool offered to the model (OpenAI's `ChatCompletionTool`). */
export interface ToolWire {
  /** `"function"`. */
  type: string;
  /** The function. */
  function: {
    /** Its name. */
    name: string;
    /** What it does. */
    description?: string | undefined;
    /** Its parameters' JSON schema. */
    parameters?: Record<string, unknown> | undefined;
    /** Whether calls must follow the schema exactly. */
    strict?: boolean | null | undefined;
    /** Other keys, kept. */
    [key: string]: unknown;
  };
  /** Other keys, kept. */
  [key: string]: unknown;
}
sameType<ToolWire, z.infer<typeof ToolWireSchema>>(true);

/** A tool as a request takes it ({@link ToolWire}; `type` optional). */
export interface ToolWireInput {
  /** `"function"`. Default `"function"`. */
  type?: string | undefined;
  /** The function, as in {@link ToolWire}. */
  function: ToolWire["function"];
  /** Other keys, kept. */
  [key: string]: unknown;
}
sameType<ToolWireInput, z.input<typeof ToolWireSchema>>(true);

const content = z.union([z.string(), z.array(json)]).nullish();

/** A tool call made by an assistant message or a Choice. */
export const ToolCallWireSchema = z.looseObject({
  id: z.string(),
  type: z.string().default("function"),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
/** A tool call made by an assistant message or a Choice. */
export interface ToolCallWire {
  /** The call's id. */
  id: string;
  /** `"function"`. */
  type: string;
  /** The function called. */
  function: {
    /** Its name. */
    name: string;
    /** Its arguments, as JSON text. */
    arguments: string;
    /** Keys the engine adds, kept. */
    [key: string]: unknown;
  };
  /** Keys the engine adds, kept. */
  [key: string]: unknown;
}
sameType<ToolCallWire, z.infer<typeof ToolCallWireSchema>>(true);

/** A tool call as a request takes it ({@link ToolCallWire}; `type` optional). */
export interface ToolCallWireInput {
  /** The call's id. */
  id: string;
  /** `"function"`. Default `"function"`. */
  type?: string | undefined;
  /** The function called, as in {@link ToolCallWire}. */
  function: ToolCallWire["function"];
  /** Keys the engine adds, kept. */
  [key: string]: unknown;
}
sameType<ToolCallWireInput, z.input<typeof ToolCallWireSchema>>(true);

const SystemMessage = z.looseObject({
  role: z.literal("system"),
  content,
  name: z.string().optional(),
});
const DeveloperMessage = z.looseObject({
  role: z.literal("developer"),
  content,
  name: z.string().optional(),
});
const UserMessage = z.looseObject({
  role: z.literal("user"),
  content,
  name: z.string().optional(),
});
const AssistantMessage = z.looseObject({
  role: z.literal("assistant"),
  content,
  name: z.string().optional(),
  refusal: z.string().nullish(),
  tool_calls: z.array(ToolCallWireSchema).optional(),
});
const ToolMessage = z.looseObject({ role: z.literal("tool"), content, tool_call_id: z.string() });
const FunctionMessage = z.looseObject({ role: z.literal("function"), content, name: z.string() });

/**
 * A chat message param of any role (`system`, `developer`, `user`, `assistant`,
 * `tool`, `function`): context the model saw, never trained on. Extra keys such
 * as `reasoning_content` are kept.
 *
 * @example
 * MessageWireSchema.parse({ role: "tool", tool_call_id: "call_1", content: "42" });
 */
export const MessageWireSchema = z.discriminatedUnion("role", [
  SystemMessage,
  DeveloperMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  FunctionMessage,
]);
/** A system message. */
export interface SystemMessageWire {
  /** Always `"system"`. */
  role: "system";
  /** Its text, or content parts. */
  content?: string | unknown[] | null | undefined;
  /** The speaker's name. */
  name?: string | undefined;
  /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
  [key: string]: unknown;
}
/** A developer message. */
export interface DeveloperMessageWire {
  /** Always `"developer"`. */
  role: "developer";
  /** Its text, or content parts. */
  content?: string | unknown[] | null | undefined;
  /** The speaker's name. */
  name?: string | undefined;
  /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
  [key: string]: unknown;
}
/** A user message. */
export interface UserMessageWire {
  /** Always `"user"`. */
  role: "user";
  /** Its text, or content parts. */
  content?: string | unknown[] | null | undefined;
  /** The speaker's name. */
  name?: string | undefined;
  /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
  [key: string]: unknown;
}
/** An assistant message given as context (not a sampled Choice). */
export interface AssistantMessageWire {
  /** Always `"assistant"`. */
  role: "assistant";
  /** Its text, or content parts. */
  content?: string | unknown[] | null | undefined;
  /** The speaker's name. */
  name?: string | undefined;
  /** The model's refusal, when it refused. */
  refusal?: string | null | undefined;
  /** The tool calls it made. */
  tool_calls?: ToolCallWire[] | undefined;
  /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
  [key: string]: unknown;
}
/** A tool's result. */
export interface ToolMessageWire {
  /** Always `"tool"`. */
  role: "tool";
  /** Its text, or content parts. */
  content?: string | unknown[] | null | undefined;
  /** The id of the tool call it answers. */
  tool_call_id: string;
  /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
  [key: string]: unknown;
}
/** A function's result (the older form of a tool's). */
export interface FunctionMessageWire {
  /** Always `"function"`. */
  role: "function";
  /** Its text, or content parts. */
  content?: string | unknown[] | null | undefined;
  /** The function's name. */
  name: string;
  /** Keys a message may carry besides (`reasoning_content`, ...), kept. */
  [key: string]: unknown;
}
/** A chat message of any role: context the model saw, never trained on. */
export type MessageWire =
  | SystemMessageWire
  | DeveloperMessageWire
  | UserMessageWire
  | AssistantMessageWire
  | ToolMessageWire
  | FunctionMessageWire;
sameType<MessageWire, z.infer<typeof MessageWireSchema>>(true);

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

/**
 * A message as a request takes it: any `role` (each role's fields are checked
 * at run time, so objects built without `as const` type-check).
 */
export interface MessageWireInput {
  /** `"system"`, `"developer"`, `"user"`, `"assistant"`, `"tool"` or `"function"`. */
  role: string;
  /** Its other fields (`content`, `name`, `tool_call_id`, ...). */
  [key: string]: unknown;
}
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

/**
 * An extra conversation of a trajectory (a sub-agent, a judge), trained with
 * the trajectory's reward. ART calls it `History` (later `LegacyHistory`).
 *
 * @example
 * HistoryWireSchema.parse({ messages_and_choices: [{ role: "user", content: "hi" }] });
 */
export const HistoryWireSchema = z.looseObject({
  messages_and_choices: z.array(MessageOrChoiceWireSchema),
  tools: z.array(ToolWireSchema).nullable().default(null),
});
/** An extra conversation of a trajectory (ART's `History`). */
export interface HistoryWire {
  /** Its messages and Choices. */
  messages_and_choices: MessageOrChoiceWire[];
  /** The tools offered in it, or `null`. */
  tools: ToolWire[] | null;
  /** Keys ART adds later, kept as read. */
  [key: string]: unknown;
}
sameType<HistoryWire, z.infer<typeof HistoryWireSchema>>(true);

/** An extra conversation as a request takes it ({@link HistoryWire}, `tools` optional). */
export interface HistoryWireInput {
  /** Its messages and Choices. */
  messages_and_choices: MessageOrChoiceWireInput[];
  /** The tools offered in it. Default `null`. */
  tools?: ToolWireInput[] | null | undefined;
  /** Keys ART adds later, kept. */
  [key: string]: unknown;
}
sameType<HistoryWireInput, z.input<typeof HistoryWireSchema>>(true);

/** A metric value: ART accepts numbers and booleans only. */
export const MetricValueWireSchema = z.union([z.number(), z.boolean()]);
/** A metric value: ART accepts numbers and booleans only. */
export type MetricValue = number | boolean;
sameType<MetricValue, z.infer<typeof MetricValueWireSchema>>(true);

/**
 * A trajectory as ART serializes it. Every key has ART's default, so `{}` is a
 * valid (empty) trajectory. `start_time` is never dumped by ART; when present
 * in input (older service schemas list it) it is kept as a string.
 *
 * @example
 * const t = TrajectoryWireSchema.parse({ messages_and_choices: [], reward: 1 });
 * t.metrics; // {}
 */
export const TrajectoryWireSchema = z.looseObject({
  messages_and_choices: z.array(MessageOrChoiceWireSchema).default([]),
  tools: z.array(ToolWireSchema).nullable().default(null),
  additional_histories: z.array(HistoryWireSchema).default([]),
  reward: z.number().default(0),
  initial_policy_version: int.nullable().default(null),
  final_policy_version: int.nullable().default(null),
  metrics: z.record(z.string(), MetricValueWireSchema).default({}),
  metadata: z.record(z.string(), json).default({}),
  logs: z.array(z.string()).default([]),
  start_time: z.string().optional(),
});
/** A trajectory as ART serializes it. */
export interface TrajectoryWire {
  /** The conversation: messages the model saw, and the Choices it sampled. */
  messages_and_choices: MessageOrChoiceWire[];
  /** The tools offered to the model, or `null`. */
  tools: ToolWire[] | null;
  /** Extra conversations (a sub-agent, a judge), trained with this reward. */
  additional_histories: HistoryWire[];
  /** The trajectory's reward. */
  reward: number;
  /** The policy version (checkpoint step) the rollout started with, or `null`. */
  initial_policy_version: number | null;
  /** The policy version it ended with, or `null`. */
  final_policy_version: number | null;
  /** Numbers and flags about the rollout. */
  metrics: Record<string, number | boolean>;
  /** Facts about the rollout. */
  metadata: Record<string, unknown>;
  /** Free-form log lines. */
  logs: string[];
  /** When the rollout started (ISO 8601), when the JSON read had it. */
  start_time?: string | undefined;
  /** Keys ART adds later, kept as read. */
  [key: string]: unknown;
}
sameType<TrajectoryWire, z.infer<typeof TrajectoryWireSchema>>(true);

// What a request takes: the same JSON with every key that has ART's default
// left optional, and a Choice's role any string (checked at run time).
/**
 * A trajectory's JSON as `trainingJobs.create` and `models.log` take it: a
 * {@link TrajectoryWire} in which every key with ART's default may be left out.
 */
export interface TrajectoryWireInput {
  /** The conversation. Default `[]`. */
  messages_and_choices?: MessageOrChoiceWireInput[] | undefined;
  /** The tools offered to the model. Default `null`. */
  tools?: ToolWireInput[] | null | undefined;
  /** Extra conversations, trained with this reward. Default `[]`. */
  additional_histories?: HistoryWireInput[] | undefined;
  /** The trajectory's reward. Default `0`. */
  reward?: number | undefined;
  /** The policy version the rollout started with. Default `null`. */
  initial_policy_version?: number | null | undefined;
  /** The policy version it ended with. Default `null`. */
  final_policy_version?: number | null | undefined;
  /** Numbers and flags about the rollout. Default `{}`. */
  metrics?: Record<string, number | boolean> | undefined;
  /** Facts about the rollout. Default `{}`. */
  metadata?: Record<string, unknown> | undefined;
  /** Free-form log lines. Default `[]`. */
  logs?: string[] | undefined;
  /** When the rollout started (ISO 8601); older service schemas list it. */
  start_time?: string | undefined;
  /** Keys ART adds later, kept. */
  [key: string]: unknown;
}
sameType<TrajectoryWireInput, z.input<typeof TrajectoryWireSchema>>(true);

/**
 * A failed rollout as ART records it on its group (`PydanticException`):
 * `type` is `"<class 'Name'>"`, `traceback` the formatted stack.
 */
export const ExceptionWireSchema = z.looseObject({
  type: z.string(),
  message: z.string(),
  traceback: z.string().default(""),
});
/**
 * A failed rollout as ART records it on its group (`PydanticException`):
 * `type` is `"<class 'Name'>"`, `traceback` the formatted stack.
 */
export interface ExceptionWire {
  /** The error's class, as Python writes it: `"<class 'TimeoutError'>"`. */
  type: string;
  /** The error's message. */
  message: string;
  /** The formatted stack (`""` when there is none). */
  traceback: string;
  /** Keys ART adds later, kept as read. */
  [key: string]: unknown;
}
sameType<ExceptionWire, z.infer<typeof ExceptionWireSchema>>(true);

/** A failed rollout as a request takes it ({@link ExceptionWire}; `traceback` optional). */
export interface ExceptionWireInput {
  /** The error's class, as Python writes it: `"<class 'TimeoutError'>"`. */
  type: string;
  /** The error's message. */
  message: string;
  /** The formatted stack. Default `""`. */
  traceback?: string | undefined;
  /** Keys ART adds later, kept. */
  [key: string]: unknown;
}
sameType<ExceptionWireInput, z.input<typeof ExceptionWireSchema>>(true);

/**
 * A group of trajectories for the same scenario, as ART serializes it; the
 * rewards inside a group are compared against each other in training.
 *
 * @example
 * TrajectoryGroupWireSchema.parse({ trajectories: [{ reward: 1 }, { reward: 0 }] });
 */
export const TrajectoryGroupWireSchema = z.looseObject({
  // Required, as in ART 0.5 (a positional argument) and the service's schema.
  trajectories: z.array(TrajectoryWireSchema),
  exceptions: z.array(ExceptionWireSchema).default([]),
  metadata: z.record(z.string(), json).default({}),
  metrics: z.record(z.string(), MetricValueWireSchema).default({}),
  logs: z.array(z.string()).default([]),
});
/**
 * A group of trajectories for the same scenario, as ART serializes it and
 * `toJSON()` returns it.
 */
export interface TrajectoryGroupWire {
  /** Its trajectories' JSON. */
  trajectories: TrajectoryWire[];
  /** Its failed rollouts. */
  exceptions: ExceptionWire[];
  /** Facts about the scenario. */
  metadata: Record<string, unknown>;
  /** Numbers about the group. */
  metrics: Record<string, MetricValue>;
  /** Free-form log lines. */
  logs: string[];
  /** Keys ART adds later, kept as read. */
  [key: string]: unknown;
}
sameType<TrajectoryGroupWire, z.infer<typeof TrajectoryGroupWireSchema>>(true);

/**
 * A group's JSON as `trainingJobs.create`, `models.log` and `train()` take it:
 * a {@link TrajectoryGroupWire} in which every key with ART's default may be left out.
 *
 * @example
 * const group: TrajectoryGroup.TrajectoryGroupWireInput = { trajectories: [{ reward: 1 }, { reward: 0 }] };
 */
export interface TrajectoryGroupWireInput {
  /** Its trajectories' JSON. */
  trajectories: TrajectoryWireInput[];
  /** Its failed rollouts. Default `[]`. */
  exceptions?: ExceptionWireInput[] | undefined;
  /** Facts about the scenario. Default `{}`. */
  metadata?: Record<string, unknown> | undefined;
  /** Numbers about the group. Default `{}`. */
  metrics?: Record<string, MetricValue> | undefined;
  /** Free-form log lines. Default `[]`. */
  logs?: string[] | undefined;
  /** Keys ART adds later, kept. */
  [key: string]: unknown;
}
sameType<TrajectoryGroupWireInput, z.input<typeof TrajectoryGroupWireSchema>>(true);
/**
 * One group in a request: a `TrajectoryGroup` (anything whose `toJSON()`
 * gives a group's JSON) or that JSON.
 *
 * @example
 * await client.trainingJobs.create({ model_id, trajectory_groups: [group, group.toJSON()] });
 */
export type TrajectoryGroupParam =
  | TrajectoryGroupWireInput
  | { toJSON(): TrajectoryGroupWireInput };

/**
 * A group as newer ART dumps it (its models omit every default-valued field,
 * recursively): the same as {@link TrajectoryGroupWireSchema}, except that a
 * group dumped without `trajectories` (every rollout failed) reads as `[]`.
 * For reading files; the service's request bodies keep `trajectories` required.
 *
 * @example
 * TrajectoryGroupJsonSchema.parse({ exceptions: [{ type: "<class 'TimeoutError'>", message: "", traceback: "" }] }).trajectories; // []
 */
export const TrajectoryGroupJsonSchema = TrajectoryGroupWireSchema.extend({
  trajectories: z.array(TrajectoryWireSchema).default([]),
});
