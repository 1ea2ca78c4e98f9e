// OpenAI's fine-tuning file lines as its documentation describes them: chat
// examples (with tools, the legacy functions form, per-message weights) and
// preference (DPO) examples. Unknown top-level keys pass, and are reported.
import { z } from "zod";

const Content = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]);

const FunctionCall = z.object({ name: z.string().min(1), arguments: z.string() });

const ToolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal("function"),
  function: FunctionCall,
});

const FunctionDef = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});

const Tool = z.looseObject({ type: z.literal("function"), function: FunctionDef });

const AssistantMessage = z.looseObject({
  role: z.literal("assistant"),
  content: Content.nullish(),
  tool_calls: z.array(ToolCall).min(1).optional(),
  function_call: FunctionCall.optional(),
  // OpenAI trains an assistant message unless its weight is 0.
  weight: z.union([z.literal(0), z.literal(1)], { error: "expected 0 or 1" }).optional(),
  name: z.string().optional(),
});

const Message = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: Content, name: z.string().optional() }),
  z.looseObject({ role: z.literal("developer"), content: Content, name: z.string().optional() }),
  z.looseObject({ role: z.literal("user"), content: Content, name: z.string().optional() }),
  AssistantMessage,
  z.looseObject({ role: z.literal("tool"), content: Content, tool_call_id: z.string().min(1) }),
  z.looseObject({
    role: z.literal("function"),
    name: z.string().min(1),
    content: Content.nullable(),
  }),
]);

/** One chat example of an OpenAI supervised fine-tuning file. */
export const OpenAiChatLineSchema = z.looseObject({
  messages: z.array(Message).min(1, { error: "expected at least one message" }),
  tools: z.array(Tool).optional(),
  functions: z.array(FunctionDef).optional(),
  parallel_tool_calls: z.boolean().optional(),
});
/** One chat example of an OpenAI supervised fine-tuning file. */
export type OpenAiChatLine = z.infer<typeof OpenAiChatLineSchema>;
/** One message of an OpenAI fine-tuning example. */
export type OpenAiMessage = z.infer<typeof Message>;

/** One example of an OpenAI preference (DPO) file. */
export const OpenAiPreferenceLineSchema = z.looseObject({
  input: z.looseObject({
    messages: z.array(Message).min(1, { error: "expected at least one message" }),
    tools: z.array(Tool).optional(),
    parallel_tool_calls: z.boolean().optional(),
  }),
  preferred_output: z.array(AssistantMessage).min(1),
  non_preferred_output: z.array(AssistantMessage).min(1),
});
/** One example of an OpenAI preference (DPO) file. */
export type OpenAiPreferenceLine = z.infer<typeof OpenAiPreferenceLineSchema>;

/**
 * One item of an OpenAI reinforcement fine-tuning dataset (or of a chat
 * validation file): the prompt's `messages`, optional `tools`, and any other
 * fields, which graders read as `{{ item.field }}`.
 */
export const OpenAiDatasetItemSchema = z.looseObject({
  messages: z.array(Message).min(1, { error: "expected at least one message" }),
  tools: z.array(Tool).optional(),
  parallel_tool_calls: z.boolean().optional(),
});

/** The keys each line kind knows; any other top-level key is reported as dropped. */
export const CHAT_KEYS = new Set(["messages", "tools", "functions", "parallel_tool_calls"]);
export const PREFERENCE_KEYS = new Set(["input", "preferred_output", "non_preferred_output"]);
