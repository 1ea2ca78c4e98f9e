// What the recording endpoint needs of a call's body before it sends anything
// upstream: the fields the recorder reads to record the call, one schema per
// API. A body that lacks them would reach the model and go missing from the
// trajectory, so it is refused, naming the field. Everything else passes
// through as the agent sent it (the upstream judges the rest).
import { z } from "zod";

const Message = z.looseObject({ role: z.string() });

/** The fields of `POST /v1/chat/completions` the recorder reads. */
export const RecordableChatBody = z.looseObject({
  model: z.string().optional(),
  messages: z.array(Message),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  n: z.int().min(1).nullish(),
  tools: z.array(z.looseObject({})).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.int().min(0).nullish(),
});

/**
 * The fields of `POST /v1/responses` the recorder reads: `input` as a string
 * or a list of items (objects), `instructions`, `tools`, and the id of the
 * response a call continues.
 */
export const RecordableResponsesBody = z.looseObject({
  model: z.string().optional(),
  input: z.union([z.string(), z.array(z.looseObject({}))]).optional(),
  instructions: z.string().nullish(),
  previous_response_id: z.string().nullish(),
  stream: z.boolean().nullish(),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
});

const ContentBlocks = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]);

/** The fields of Anthropic's `POST /v1/messages` the recorder reads. */
export const RecordableMessagesBody = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: ContentBlocks })),
  system: ContentBlocks.nullish(),
  stream: z.boolean().nullish(),
  tools: z.array(z.looseObject({})).nullish(),
});

/** The first field of `body` the recorder cannot record, as a dotted path and what was wrong. */
export function unrecordable(
  body: unknown,
  schema: z.ZodType = RecordableChatBody,
): { param: string; message: string } | undefined {
  const parsed = schema.safeParse(body);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  const param = issue.path.map(String).join(".") || "body";
  return { param, message: `${param}: ${issue.message}` };
}
