// Trajectories as OpenPipe ART dumps them with `model_dump(mode="json")`: the
// messages a model saw and the tools it was offered. Parsing is lenient (unknown
// keys are kept, missing keys take ART's defaults) so that JSON written by any
// ART version survives a round-trip through us. Choices (what the model
// sampled) are in choice.ts, trajectories and their groups in trajectory.ts.
//
// Each shape is declared once here, as an interface beside its schema (so the
// published declarations and the docs name it, not `z.infer<...>`), and a
// `sameType` check holds it to what the schema returns or accepts. The classes
// that own a shape re-list it in their namespace (`Trajectory.TrajectoryWire`).
import { z } from "zod";
import { sameType } from "./same-type.js";

const json = z.unknown();

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
