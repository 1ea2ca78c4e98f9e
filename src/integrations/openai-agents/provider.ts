import {
  getDefaultModel,
  type Model,
  type ModelProvider,
  OpenAIChatCompletionsModel,
  type OpenAIClient,
} from "@openai/agents";
import { InvalidArgumentError, type Recorder, wrapClient } from "../../recorder/index.js";
import { isObjectLike } from "../../util/index.js";

/**
 * The part of an `openai` client the Agents SDK's Chat Completions model uses.
 * Typed by shape so that any installed `openai` (4.x to 7.x) fits, not only the
 * copy nested under `@openai/agents-openai`.
 */
export interface ChatCompletionsClient {
  chat: { completions: object };
}

/** Options of {@link recordingModelProvider}. */
export interface RecordingModelProviderOptions {
  /** The `openai` client the models call. It is wrapped for recording in place (see `recorder.wrap`). */
  client: ChatCompletionsClient;
  /** The recorder that wraps `client`. Optional: any rollout running around a call records it. */
  recorder?: Recorder;
  /** Model name for agents that name none. Default: the Agents SDK's `getDefaultModel()`. */
  defaultModel?: string;
}

/**
 * A `ModelProvider` whose models always speak Chat Completions over a recording
 * client: it never returns a Responses API model, because only Chat Completions
 * gives logprobs and token ids for every sampled token, tool calls included.
 */
export class RecordingModelProvider implements ModelProvider {
  readonly #client: OpenAIClient;
  readonly #defaultModel: string | undefined;
  readonly #models = new Map<string, Model>();

  constructor(options: RecordingModelProviderOptions) {
    checkProviderOptions("new RecordingModelProvider(options)", options);
    const client = options.recorder
      ? options.recorder.wrap(options.client)
      : wrapClient(options.client);
    // The SDK's client type names its own nested `openai`; the model only calls
    // chat.completions.create and reads baseURL, which every version has.
    this.#client = client as unknown as OpenAIClient;
    this.#defaultModel = options.defaultModel;
  }

  getModel(modelName?: string): Model {
    const name = modelName || this.#defaultModel || getDefaultModel();
    let model = this.#models.get(name);
    if (!model) {
      model = new OpenAIChatCompletionsModel(this.#client, name);
      this.#models.set(name, model);
    }
    return model;
  }
}

/**
 * Makes every model call of the OpenAI Agents SDK a recorded chat completion:
 * inside `recorder.rollout()` the exact request (messages, tools) and the
 * sampled Choice (with logprobs and token ids) land on the trajectory, streamed
 * or not. Outside a rollout calls pass through untouched.
 *
 * @example
 * import OpenAI from "openai";
 * import { Runner, setDefaultModelProvider } from "@openai/agents";
 * import { recordingModelProvider } from "trajectory-recorder/openai-agents";
 *
 * const modelProvider = recordingModelProvider({ client: new OpenAI({ baseURL, apiKey }) });
 * setDefaultModelProvider(modelProvider); // for run(); or: new Runner({ modelProvider })
 */
export function recordingModelProvider(
  options: RecordingModelProviderOptions,
): RecordingModelProvider {
  return new RecordingModelProvider(options);
}

/** Checks the provider's options, naming the bad one; `client` is checked by the wrap. */
export function checkProviderOptions(call: string, options: unknown): void {
  if (!isObjectLike(options))
    throw new InvalidArgumentError(
      call,
      "options",
      "an object { client, recorder?, defaultModel? }",
      options,
    );
  const { recorder, defaultModel } = options;
  if (recorder !== undefined && typeof (recorder as { wrap?: unknown } | null)?.wrap !== "function")
    throw new InvalidArgumentError(call, "options.recorder", "a Recorder", recorder);
  if (defaultModel !== undefined && typeof defaultModel !== "string")
    throw new InvalidArgumentError(call, "options.defaultModel", "a model name", defaultModel);
}
