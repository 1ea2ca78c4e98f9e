// The chat completions request the service takes: the OpenAI fields plus the
// serving engine's own. Loose on purpose: the service accepts extra keys, and
// so do we, but every field it documents is typed.
import { z } from "zod";

const int = z.number().int();

/**
 * One chat message as sent. Content may be a string or a list of parts; other
 * keys (`tool_calls`, `tool_call_id`, `reasoning`...) pass through.
 *
 * @example
 * ChatRequestMessageSchema.parse({ role: "user", content: "hi" });
 */
export const ChatRequestMessageSchema = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(z.unknown())]).nullish(),
  name: z.string().optional(),
});
/**
 * One chat message as sent. Its shape is what `ChatRequestMessageSchema` returns.
 */
export type ChatRequestMessage = z.infer<typeof ChatRequestMessageSchema>;

/** A function tool offered to the model. */
export const ChatRequestToolSchema = z.looseObject({
  type: z.string().default("function"),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});
/**
 * A function tool offered to the model. Its shape is what `ChatRequestToolSchema` accepts.
 */
export type ChatRequestTool = z.input<typeof ChatRequestToolSchema>;

/** Guided decoding options of the serving engine. */
export const ChatStructuredOutputsSchema = z.looseObject({
  json: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  regex: z.string().nullish(),
  choice: z.array(z.string()).nullish(),
  grammar: z.string().nullish(),
  json_object: z.boolean().nullish(),
  disable_fallback: z.boolean().optional(),
  disable_any_whitespace: z.boolean().optional(),
  disable_additional_properties: z.boolean().optional(),
  whitespace_pattern: z.string().nullish(),
  structural_tag: z.string().nullish(),
  _backend: z.string().nullish(),
  _backend_was_auto: z.boolean().optional(),
});

/**
 * The serving engine's own chat request fields (beyond OpenAI's), all optional.
 * `recorder` and `training` add these to an `openai` request body as is.
 *
 * @example
 * const extra: ChatEngineParams = { top_k: 20, return_token_ids: true };
 */
export const ChatEngineParamsSchema = z.looseObject({
  use_beam_search: z.boolean().optional(),
  top_k: int.nullish(),
  min_p: z.number().nullish(),
  repetition_penalty: z.number().nullish(),
  length_penalty: z.number().optional(),
  stop_token_ids: z.array(int).nullish(),
  include_stop_str_in_output: z.boolean().optional(),
  ignore_eos: z.boolean().optional(),
  min_tokens: int.min(0).optional(),
  skip_special_tokens: z.boolean().optional(),
  spaces_between_special_tokens: z.boolean().optional(),
  truncate_prompt_tokens: int.min(-1).nullish(),
  prompt_logprobs: int.nullish(),
  allowed_token_ids: z.array(int).nullish(),
  bad_words: z.array(z.string()).optional(),
  echo: z.boolean().optional(),
  add_generation_prompt: z.boolean().optional(),
  continue_final_message: z.boolean().optional(),
  add_special_tokens: z.boolean().optional(),
  documents: z.array(z.record(z.string(), z.unknown())).nullish(),
  chat_template: z.string().nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  mm_processor_kwargs: z.record(z.string(), z.unknown()).nullish(),
  structured_outputs: ChatStructuredOutputsSchema.nullish(),
  priority: int.optional(),
  request_id: z.string().optional(),
  return_tokens_as_token_ids: z.boolean().nullish(),
  return_token_ids: z.boolean().nullish(),
  cache_salt: z.string().nullish(),
  kv_transfer_params: z.record(z.string(), z.unknown()).nullish(),
  vllm_xargs: z
    .record(
      z.string(),
      z.union([z.string(), z.number(), z.array(z.union([z.string(), z.number()]))]),
    )
    .nullish(),
  repetition_detection: z
    .looseObject({
      max_pattern_size: int.optional(),
      min_pattern_size: int.optional(),
      min_count: int.optional(),
    })
    .nullish(),
});
/**
 * The serving engine's own chat request fields (beyond OpenAI's), all optional. Its shape is what
 * `ChatEngineParamsSchema` accepts.
 */
export type ChatEngineParams = z.input<typeof ChatEngineParamsSchema>;

/**
 * Body of `POST /v1/chat/completions`: the OpenAI fields and every
 * engine-specific field of the service. Unknown keys pass through.
 *
 * @example
 * ChatCompletionCreateParamsSchema.parse({
 *   model: "wandb-artifact:///me/demo/agent-001",
 *   messages: [{ role: "user", content: "hi" }],
 *   logprobs: true,
 *   top_k: 20,
 * });
 */
export const ChatCompletionCreateParamsSchema = z.looseObject({
  // OpenAI fields
  model: z.string().min(1),
  messages: z.array(ChatRequestMessageSchema).min(1),
  frequency_penalty: z.number().nullish(),
  logit_bias: z.record(z.string(), z.number()).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: int.min(0).nullish(),
  max_tokens: int.min(1).nullish(),
  max_completion_tokens: int.min(1).nullish(),
  n: int.min(1).nullish(),
  presence_penalty: z.number().nullish(),
  response_format: z
    .looseObject({
      type: z.string(),
      json_schema: z
        .looseObject({
          name: z.string(),
          description: z.string().optional(),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullish(),
        })
        .optional(),
    })
    .nullish(),
  seed: int.nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z
    .looseObject({
      include_usage: z.boolean().nullish(),
      continuous_usage_stats: z.boolean().nullish(),
    })
    .nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  tools: z.array(ChatRequestToolSchema).nullish(),
  tool_choice: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  reasoning_effort: z.enum(["low", "medium", "high"]).nullish(),
  include_reasoning: z.boolean().optional(),
  parallel_tool_calls: z.boolean().nullish(),
  user: z.string().nullish(),
  ...ChatEngineParamsSchema.shape,
});
/**
 * Body of `POST /v1/chat/completions`: the OpenAI fields and every engine-specific field of the
 * service. Its shape is what `ChatCompletionCreateParamsSchema` accepts.
 */
export type ChatCompletionCreateParams = z.input<typeof ChatCompletionCreateParamsSchema>;
