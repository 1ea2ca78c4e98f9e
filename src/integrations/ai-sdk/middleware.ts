import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import type { LanguageModelMiddleware } from "ai";
import { currentRollout, InvalidArgumentError } from "../../recorder/index.js";
import { subscribeToolChannel } from "./channel.js";
import { recordGenerate } from "./generate.js";
import { callState, claimed, prepareParams } from "./params.js";
import { recordStream } from "./stream.js";
import { registerRecorderTelemetry } from "./telemetry.js";

/** Options of {@link recorderMiddleware}. */
export interface RecorderMiddlewareOptions {
  /**
   * Register {@link recorderTelemetry} with AI SDK's global telemetry (ai 7,
   * and ai 6 from 6.0.111), and with ai 7 listen to its "ai:telemetry"
   * tracing channel, so the results of tools run after the last model call
   * are recorded too, also for calls with their own telemetry integrations.
   * Default `true`.
   */
  registerTelemetry?: boolean;
}

type Model = { provider: string; modelId: string };

/**
 * A language model middleware that records every call the wrapped model makes
 * inside `recorder.rollout()` into the rollout's Trajectory: the exact Chat
 * Completions request (messages and tools) and the Choice with its logprobs and
 * token ids. Calls outside a rollout pass through untouched.
 *
 * Inside a rollout it asks for `logprobs` and `return_token_ids` (per the
 * recorder's `logprobs`/`tokenIds` options). Use a Chat Completions model:
 * `createOpenAICompatible(...)(id)` forwards both, `openai.chat(id)` forwards
 * logprobs only (its provider options are validated). `openai(id)` is the
 * Responses API: its calls are recorded without logprobs, and the trajectory's
 * `logs` say so.
 *
 * Works with `generateText`, `streamText`, `ToolLoopAgent` and Mastra agents
 * (any caller of the model). Tool results reach the trajectory through the next
 * request; those of tools run after the last model call through AI SDK 7's
 * telemetry (see {@link RecorderMiddlewareOptions.registerTelemetry}).
 *
 * @example
 * import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
 * import { generateText, wrapLanguageModel } from "ai";
 * import { Recorder } from "trajectory-recorder";
 * import { recorderMiddleware } from "trajectory-recorder/ai-sdk";
 *
 * const provider = createOpenAICompatible({ name: "vllm", baseURL, apiKey });
 * const model = wrapLanguageModel({ model: provider("my-model"), middleware: recorderMiddleware() });
 * const trajectory = await new Recorder().rollout(async (t) => {
 *   const { text } = await generateText({ model, tools, prompt: "What is the weather in Paris?" });
 *   t.reward = text.includes("sunny") ? 1 : 0;
 * });
 */
export function recorderMiddleware(
  options: RecorderMiddlewareOptions = {},
): LanguageModelMiddleware {
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError("recorderMiddleware(options)", "options", "an object", options);
  if (options.registerTelemetry !== false) {
    registerRecorderTelemetry();
    subscribeToolChannel();
  }
  return {
    // ai 6 requires "v3"; ai 7 accepts any version and ai 5 ignores it.
    specificationVersion: "v3",
    async transformParams({ type, params, model }) {
      const rollout = currentRollout();
      if (!rollout || claimed(params)) return params;
      return prepareParams(type, params, model as Model, rollout);
    },
    async wrapGenerate({ doGenerate, params, model }) {
      const state = callState(params);
      if (!state) return doGenerate();
      return recordGenerate(
        doGenerate,
        params as LanguageModelV4CallOptions,
        model as Model,
        state,
      );
    },
    async wrapStream({ doStream, params, model }) {
      const state = callState(params);
      if (!state) return doStream();
      const startTime = Date.now();
      return recordStream(await doStream(), params, model as Model, state, startTime);
    },
  };
}
