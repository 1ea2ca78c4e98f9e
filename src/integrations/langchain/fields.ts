import { InvalidArgumentError } from "../../recorder/index.js";

/** Options of {@link chatOpenAIFields}. */
export interface ChatOpenAIFieldsOptions {
  /**
   * Ask for token ids (`return_token_ids` and `return_tokens_as_token_ids`, vLLM extensions the Training
   * Service and the emulator accept) and keep ChatOpenAI's raw response, the
   * only place token ids survive. Turn off for servers that reject unknown
   * parameters, such as api.openai.com. Default `true`.
   */
  tokenIds?: boolean;
}

/** The fields {@link chatOpenAIFields} adds. */
export type RecordingFields = {
  logprobs: true;
  modelKwargs?: Record<string, unknown>;
  __includeRawResponse?: boolean;
};

/**
 * `ChatOpenAI` constructor fields with what a trainable trajectory needs:
 * `logprobs: true`, and unless `tokenIds: false`, `return_token_ids` in
 * `modelKwargs` plus `__includeRawResponse`, so the recorded Choices carry the
 * exact wire objects (token ids, `null` contents, refusals). The raw response
 * then also sits in each AIMessage's `additional_kwargs.__raw_response`.
 *
 * @example
 * const model = new ChatOpenAI(chatOpenAIFields({ model: "my-model", configuration: { baseURL } }));
 */
export function chatOpenAIFields<T extends object = Record<never, never>>(
  fields: T = {} as T,
  options: ChatOpenAIFieldsOptions = {},
): NoInfer<T> & RecordingFields {
  const call = "chatOpenAIFields(fields, options)";
  if (fields === null || typeof fields !== "object")
    throw new InvalidArgumentError(call, "fields", "an object of ChatOpenAI fields", fields);
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError(call, "options", "an object", options);
  const kwargs = (fields as { modelKwargs?: unknown }).modelKwargs;
  if (kwargs !== undefined && (kwargs === null || typeof kwargs !== "object"))
    throw new InvalidArgumentError(call, "fields.modelKwargs", "an object", kwargs);
  if (options.tokenIds === false) return { ...fields, logprobs: true };
  const { modelKwargs } = fields as { modelKwargs?: Record<string, unknown> };
  return {
    ...fields,
    logprobs: true,
    modelKwargs: { return_token_ids: true, return_tokens_as_token_ids: true, ...modelKwargs },
    __includeRawResponse: true,
  };
}
