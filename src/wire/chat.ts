// The chat completions request the service takes: the OpenAI fields plus the
// serving engine's own. Loose on purpose: the service accepts extra keys, and
// so do we, but every field it documents is typed.
import { z } from "zod";
import { sameType } from "./same-type.js";

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
/** Guided decoding options of the serving engine. */
export interface ChatStructuredOutputs {
  /** A JSON schema (or its text) the output follows. */
  json?: string | Record<string, unknown> | null | undefined;
  /** A regular expression the output matches. */
  regex?: string | null | undefined;
  /** The output is one of these strings. */
  choice?: string[] | null | undefined;
  /** A grammar the output follows. */
  grammar?: string | null | undefined;
  /** The output is a JSON object. */
  json_object?: boolean | null | undefined;
  /** Fails rather than falling back to another guided decoding backend. */
  disable_fallback?: boolean | undefined;
  /** No whitespace in the JSON output. */
  disable_any_whitespace?: boolean | undefined;
  /** No properties beyond the schema's in the JSON output. */
  disable_additional_properties?: boolean | undefined;
  /** The whitespace allowed in the JSON output. */
  whitespace_pattern?: string | null | undefined;
  /** A structural tag the output follows. */
  structural_tag?: string | null | undefined;
  /** The guided decoding backend. */
  _backend?: string | null | undefined;
  /** Whether the backend was chosen automatically. */
  _backend_was_auto?: boolean | undefined;
  /** Keys the engine adds later, passed through. */
  [key: string]: unknown;
}
sameType<ChatStructuredOutputs, z.input<typeof ChatStructuredOutputsSchema>>(true);

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
 * The serving engine's (vLLM's) own chat request fields, beyond OpenAI's, all
 * optional.
 */
export interface ChatEngineParams {
  /** Beam search instead of sampling. */
  use_beam_search?: boolean | undefined;
  /** Samples among the k likeliest tokens only (-1 or none: all). */
  top_k?: number | null | undefined;
  /** Drops tokens less likely than this fraction of the likeliest one. */
  min_p?: number | null | undefined;
  /** Penalizes tokens already in the prompt or the output (1: none). */
  repetition_penalty?: number | null | undefined;
  /** The length penalty of beam search. */
  length_penalty?: number | undefined;
  /** Token ids that end sampling. */
  stop_token_ids?: number[] | null | undefined;
  /** Keeps the stop string in the output. */
  include_stop_str_in_output?: boolean | undefined;
  /** Goes on past the end-of-sequence token. */
  ignore_eos?: boolean | undefined;
  /** The fewest tokens to sample before a stop may end it. */
  min_tokens?: number | undefined;
  /** Leaves special tokens out of the text. */
  skip_special_tokens?: boolean | undefined;
  /** Puts spaces between special tokens in the text. */
  spaces_between_special_tokens?: boolean | undefined;
  /** Keeps only the last this many prompt tokens (-1: the model's limit). */
  truncate_prompt_tokens?: number | null | undefined;
  /** Returns this many logprobs for each prompt token. */
  prompt_logprobs?: number | null | undefined;
  /** The only token ids that may be sampled. */
  allowed_token_ids?: number[] | null | undefined;
  /** Words that may not be sampled. */
  bad_words?: string[] | undefined;
  /** Puts the last message of the prompt in front of the answer. */
  echo?: boolean | undefined;
  /** Adds the chat template's generation prompt. */
  add_generation_prompt?: boolean | undefined;
  /** Continues the last (assistant) message instead of starting a new one. */
  continue_final_message?: boolean | undefined;
  /** Adds the tokenizer's special tokens to the prompt. */
  add_special_tokens?: boolean | undefined;
  /** Documents for a retrieval-augmented chat template. */
  documents?: Record<string, unknown>[] | null | undefined;
  /** A chat template to use instead of the model's. */
  chat_template?: string | null | undefined;
  /** Extra arguments of the chat template (e.g. `enable_thinking`). */
  chat_template_kwargs?: Record<string, unknown> | null | undefined;
  /** Extra arguments of a multi-modal processor. */
  mm_processor_kwargs?: Record<string, unknown> | null | undefined;
  /** Guided decoding: output held to a JSON schema, a regex, a choice or a grammar. */
  structured_outputs?: ChatStructuredOutputs | null | undefined;
  /** The request's priority in the engine's queue. */
  priority?: number | undefined;
  /** An id of the request, for the engine's logs. */
  request_id?: string | undefined;
  /** Writes sampled tokens as `token_id:<n>` (what the trainer reads). */
  return_tokens_as_token_ids?: boolean | null | undefined;
  /** Returns the prompt's and the choices' token ids. */
  return_token_ids?: boolean | null | undefined;
  /** A salt that keeps this request's prefix cache apart from others'. */
  cache_salt?: string | null | undefined;
  /** Parameters of a disaggregated prefill's KV transfer. */
  kv_transfer_params?: Record<string, unknown> | null | undefined;
  /** Extra engine arguments, passed through. */
  vllm_xargs?: Record<string, string | number | (string | number)[]> | null | undefined;
  /** Stops a repeating output. */
  repetition_detection?:
    | {
        /** The longest pattern looked for, in tokens. */
        max_pattern_size?: number | undefined;
        /** The shortest pattern looked for, in tokens. */
        min_pattern_size?: number | undefined;
        /** How many repeats end sampling. */
        min_count?: number | undefined;
        /** Keys the engine adds later, passed through. */
        [key: string]: unknown;
      }
    | null
    | undefined;
  /** Fields the engine adds later, passed through. */
  [key: string]: unknown;
}
sameType<ChatEngineParams, z.input<typeof ChatEngineParamsSchema>>(true);

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
