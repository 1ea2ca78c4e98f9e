// Trajectories and their groups as OpenPipe ART dumps them with
// `model_dump(mode="json")`, with the extra conversations and failed rollouts
// they carry. Lenient and declared as in messages.ts (an interface beside each
// schema, held to it by `sameType`); their messages and Choices are in
// messages.ts and choice.ts.
import { z } from "zod";
import {
  type MessageOrChoiceWire,
  type MessageOrChoiceWireInput,
  MessageOrChoiceWireSchema,
} from "./choice.js";
import { type ToolWire, type ToolWireInput, ToolWireSchema } from "./messages.js";
import { sameType } from "./same-type.js";

const json = z.unknown();
const int = z.number().int();

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
