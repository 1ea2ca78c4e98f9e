// What a rollout could not get from the provider is said once in its logs,
// not once per call.
import type { ActiveRollout, RecordedCompletion } from "../../recorder/index.js";

/** The model as AI SDK names it, e.g. `openai.chat/gpt-4.1`. */
export function modelName(model: { provider: string; modelId: string }): string {
  return `${model.provider}/${model.modelId}`;
}

/** Logs why this call's choice has no logprobs or token ids, when the rollout wanted them. */
export function noteGaps(
  rollout: ActiveRollout,
  model: { provider: string; modelId: string },
  wire: RecordedCompletion["request"] | undefined,
  gotRaw = true,
): void {
  const name = modelName(model);
  if (!wire) {
    if (rollout.options.logprobs || rollout.options.tokenIds)
      rollout.logOnce(
        `ai-sdk: ${name} does not use the Chat Completions API, so its calls are recorded without logprobs or token ids; use a chat model such as openai.chat(id) or createOpenAICompatible(...)(id).`,
      );
    return;
  }
  if (!gotRaw) {
    rollout.logOnce(
      `ai-sdk: ${name} did not hand back its raw response (body or chunks), so its calls are recorded without logprobs or token ids.`,
    );
    return;
  }
  if (rollout.options.logprobs && wire.logprobs !== true)
    rollout.logOnce(
      `ai-sdk: ${name} did not send logprobs: true (the provider drops it, e.g. for reasoning models), so its calls are recorded without logprobs.`,
    );
  if (rollout.options.tokenIds && wire.return_token_ids === undefined)
    rollout.logOnce(
      `ai-sdk: ${name} does not forward return_token_ids (@ai-sdk/openai validates its provider options and drops unknown keys), so token ids are not recorded; createOpenAICompatible forwards it.`,
    );
}
