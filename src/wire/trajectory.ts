// Trajectories as OpenPipe ART dumps them with `model_dump(mode="json")`.
// Parsing is lenient (unknown keys are kept, missing keys take ART's defaults)
// so that JSON written by any ART version survives a round-trip through us.
import { z } from "zod";

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
/**
 * A function tool offered to the model, as in OpenAI's `ChatCompletionToolParam`. Its shape is
 * what `ToolWireSchema` returns.
 */
export type ToolWire = z.infer<typeof ToolWireSchema>;

const content = z.union([z.string(), z.array(json)]).nullish();

/** A tool call made by an assistant message or a Choice. */
export const ToolCallWireSchema = z.looseObject({
  id: z.string(),
  type: z.string().default("function"),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
/**
 * A tool call made by an assistant message or a Choice. Its shape is what `ToolCallWireSchema`
 * returns.
 */
export type ToolCallWire = z.infer<typeof ToolCallWireSchema>;

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
/**
 * A chat message param of any role (`system`, `developer`, `user`, `assistant`, `tool`,
 * `function`): context the model saw, never trained on. Its shape is what `MessageWireSchema`
 * returns.
 */
export type MessageWire = z.infer<typeof MessageWireSchema>;

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
/**
 * One sampled token with its logprob, as in OpenAI's `ChatCompletionTokenLogprob`. Its shape is
 * what `TokenLogprobWireSchema` returns.
 */
export type TokenLogprobWire = z.infer<typeof TokenLogprobWireSchema>;

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
/**
 * A model-sampled assistant turn: OpenAI's chat completion `Choice` with its `logprobs` and the
 * engine's extras (`token_ids`, `prompt_token_ids`), which are what the trainer learns from. Its
 * shape is what `ChoiceWireSchema` returns.
 */
export type ChoiceWire = z.infer<typeof ChoiceWireSchema>;

const MessageOrChoiceUnion = z.union([ChoiceWireSchema, MessageWireSchema]);
/**
 * One item of `messages_and_choices`: a message, or a Choice the model sampled. Its shape is what
 * `MessageOrChoiceWireSchema` returns.
 */
export type MessageOrChoiceWire = ChoiceWire | MessageWire;

/**
 * A Choice as a request takes it: what `ChoiceWireSchema` accepts, with
 * `message.role` any string (it is checked at run time), so that a Choice built
 * without `as const` type-checks.
 */
export type ChoiceWireInput = {
  [K in keyof z.input<typeof ChoiceWireSchema>]: K extends "message"
    ? {
        [M in keyof z.input<typeof ChoiceWireSchema>["message"]]: M extends "role"
          ? string
          : z.input<typeof ChoiceWireSchema>["message"][M];
      }
    : z.input<typeof ChoiceWireSchema>[K];
};

/**
 * One element of `messages_and_choices`: a Choice (it has a `message` key) or a
 * plain message param (it has a `role`). Every role is checked at run time; the
 * static input type takes any `role: string` (on a message and on a Choice's
 * `message`), so that objects built in user code without `as const` are
 * accepted by the type checker too.
 */
export const MessageOrChoiceWireSchema = MessageOrChoiceUnion as unknown as z.ZodType<
  MessageOrChoiceWire,
  ChoiceWireInput | { role: string; [key: string]: unknown }
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
/**
 * An extra conversation of a trajectory (a sub-agent, a judge), trained with the trajectory's
 * reward. Its shape is what `HistoryWireSchema` returns.
 */
export type HistoryWire = z.infer<typeof HistoryWireSchema>;

/** A metric value: ART accepts numbers and booleans only. */
export const MetricValueWireSchema = z.union([z.number(), z.boolean()]);

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
/**
 * A trajectory as ART serializes it. Its shape is what `TrajectoryWireSchema` returns.
 */
export type TrajectoryWire = z.infer<typeof TrajectoryWireSchema>;

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
 * A failed rollout as ART records it on its group (`PydanticException`): `type` is `"<class
 * 'Name'>"`, `traceback` the formatted stack. Its shape is what `ExceptionWireSchema` returns.
 */
export type ExceptionWire = z.infer<typeof ExceptionWireSchema>;

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
 * A group of trajectories for the same scenario, as ART serializes it; the rewards inside a group
 * are compared against each other in training. Its shape is what `TrajectoryGroupWireSchema`
 * returns.
 */
export type TrajectoryGroupWire = z.infer<typeof TrajectoryGroupWireSchema>;

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
