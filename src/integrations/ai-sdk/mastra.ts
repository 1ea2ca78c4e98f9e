// Recording a Mastra agent whatever model form it was given. Mastra resolves
// every form (a "provider/model" string, an `{ id, url }` config, its model
// router, an AI SDK model, a function of the request, a fallback list) through
// the agent's `resolveModelConfig`, into a model object of its own whose
// `doStream`/`doGenerate` reach the provider. Those two are where the calls
// are recorded: a middleware given to the AI SDK model alone never sees a
// model Mastra builds from a string.
import type { LanguageModelV4CallOptions, LanguageModelV4StreamResult } from "@ai-sdk/provider";
import { type ActiveRollout, currentRollout, InvalidArgumentError } from "../../recorder/index.js";
import { errorMessage } from "../../util/index.js";
import { recordGenerate } from "./generate.js";
import { noteAnswered } from "./ledger.js";
import { warnIfUntrainableMastra } from "./mastra-version.js";
import { callState, prepareParams } from "./params.js";
import { recordStream } from "./stream.js";

type Options = LanguageModelV4CallOptions;
type Call = (options: Options) => PromiseLike<Record<string, unknown>>;

interface MastraModel {
  provider: string;
  modelId: string;
  doGenerate: Call;
  doStream: Call;
  /** Set on Mastra's model router: `url` makes it an OpenAI-compatible Chat Completions model. */
  config?: { url?: string; api?: string };
}

/** The part of a Mastra `Agent` this module relies on. */
interface MastraAgentLike {
  name?: string;
  resolveModelConfig?: (config: unknown, requestContext: unknown) => Promise<unknown>;
  generate?: (...args: unknown[]) => Promise<{ toolResults?: unknown }>;
  stream?: (...args: unknown[]) => unknown;
}

/** A tool result of Mastra's output: `{ type: "tool-result", payload: { toolCallId, toolName, result } }`. */
type MastraToolResult = {
  type?: string;
  payload?: { toolCallId?: string; toolName?: string; result?: unknown };
};

/**
 * Reports the tool results Mastra hands back with its output. Mastra runs
 * tools in its own loop, so the results of tools run after the last model
 * call reach the recorder only here; a result a later request carried is
 * reported again harmlessly (the wire's copy wins). Content as Mastra sends
 * it: a string as is, anything else as JSON.
 */
function reportToolResults(rollout: ActiveRollout, results: unknown): void {
  if (!Array.isArray(results)) return;
  const reported: string[] = [];
  for (const r of results as MastraToolResult[]) {
    const p = r?.payload;
    if (r?.type !== "tool-result" || !p?.toolCallId || p.result === undefined) continue;
    const content = typeof p.result === "string" ? p.result : JSON.stringify(p.result);
    rollout.recordToolResult({ tool_call_id: p.toolCallId, content, name: p.toolName });
    reported.push(p.toolCallId);
  }
  noteAnswered(rollout, reported);
}

/**
 * Wraps `agent.generate` so the tool results of its output are reported to
 * the calling rollout. Not `agent.stream`: its output's `toolResults` starts
 * reading the stream when asked, which would change what the caller's
 * stream does (a stream the caller stops reading would run to its end).
 */
function reportResultsOfGenerate(agent: MastraAgentLike): void {
  const generate = agent.generate;
  if (typeof generate !== "function") return;
  agent.generate = async (...args: unknown[]) => {
    const rollout = currentRollout();
    const out = await generate.apply(agent, args);
    if (rollout && out && typeof out === "object") reportToolResults(rollout, out.toolResults);
    return out;
  };
}

/**
 * Wraps `agent.stream` so each step's tool results reach the calling rollout
 * through Mastra's own `onStepFinish` (the caller's hook, if any, still runs
 * after ours). The hook fires as the caller reads the stream, so nothing is
 * read on the caller's behalf; reading the output's `toolResults` would.
 */
function reportResultsOfStream(agent: MastraAgentLike): void {
  const stream = agent.stream;
  if (typeof stream !== "function") return;
  agent.stream = (messages: unknown, options?: unknown, ...rest: unknown[]) => {
    const rollout = currentRollout();
    if (!rollout || (options !== undefined && (options === null || typeof options !== "object")))
      return stream.call(agent, messages, options, ...rest);
    const own = (options ?? {}) as { onStepFinish?: (event: unknown) => unknown };
    const theirs = own.onStepFinish;
    const onStepFinish = (event: unknown) => {
      try {
        reportToolResults(rollout, (event as { toolResults?: unknown } | null)?.toolResults);
      } catch (error) {
        rollout.logOnce(`a step's tool results could not be recorded: ${errorMessage(error)}`);
      }
      return typeof theirs === "function" ? theirs(event) : undefined;
    };
    return stream.call(agent, messages, { ...own, onStepFinish }, ...rest);
  };
}

const INSTRUMENTED = Symbol.for("trajectory-recorder.mastra.model");
const ATTACHED = Symbol.for("trajectory-recorder.mastra.agent");

function isModel(x: unknown): x is MastraModel {
  const m = x as MastraModel | null;
  return (
    typeof m === "object" &&
    m !== null &&
    typeof m.doStream === "function" &&
    typeof m.doGenerate === "function" &&
    typeof m.provider === "string"
  );
}

/**
 * The provider name the recording options are written for. The router built
 * from `{ id, url }` calls `createOpenAICompatible({ name: provider })`, a
 * Chat Completions model that carries logprobs and token ids.
 */
function providerOf(model: MastraModel): string {
  const config = model.config;
  if (config?.url && config.api !== "responses" && !model.provider.includes("."))
    return `${model.provider}.chat`;
  return model.provider;
}

function instrument(model: MastraModel): void {
  const own = model as MastraModel & { [INSTRUMENTED]?: true };
  if (own[INSTRUMENTED]) return;
  own[INSTRUMENTED] = true;
  const doGenerate = model.doGenerate.bind(model);
  const doStream = model.doStream.bind(model);
  const info = () => ({ provider: providerOf(model), modelId: model.modelId });
  model.doStream = async (options) => {
    const rollout = currentRollout();
    if (!rollout) return doStream(options);
    const params = prepareParams("stream", options, info(), rollout);
    const state = callState(params);
    const startTime = Date.now();
    const result = (await doStream(params)) as unknown as LanguageModelV4StreamResult;
    return recordStream(result, params, info(), state!, startTime) as never;
  };
  // Mastra's models answer doGenerate with the result and a stream of it.
  model.doGenerate = async (options) => {
    const rollout = currentRollout();
    if (!rollout) return doGenerate(options);
    const params = prepareParams("generate", options, info(), rollout);
    const state = callState(params);
    const startTime = Date.now();
    const result = await doGenerate(params);
    if (!Array.isArray(result.content))
      return recordStream(result as never, params, info(), state!, startTime) as never;
    return recordGenerate(async () => result as never, params, info(), state!) as never;
  };
}

/** Options of {@link recordMastraAgent}. */
export interface RecordMastraAgentOptions {
  /**
   * Where it warns, once per process, when the application's `@mastra/core`
   * is older than 1.0 (its models forward neither logprobs nor token ids, so
   * its rollouts cannot be trained on). Default `console`.
   */
  logger?: { warn(message: string): void };
}

/**
 * Makes a Mastra `Agent` record every model call it makes inside
 * `recorder.rollout()`, whatever model form it was given: a
 * `"provider/model"` string, an `{ id, url, apiKey }` config, a
 * `ModelRouterLanguageModel`, an AI SDK model, a function of the request
 * context, or a fallback list. Returns the same agent. Throws when the agent
 * does not resolve its models the way this relies on (a Mastra version this
 * was not built for), rather than recording nothing.
 *
 * It can be combined with {@link recorderMiddleware} on the agent's model (a
 * call is recorded once). Mastra runs tools in its own loop: the results of
 * tools run after the last model call are taken from the output of
 * `agent.generate()`, and for `agent.stream()` from Mastra's `onStepFinish`
 * (a hook the caller passes still runs), as the caller reads the stream.
 *
 * @example
 * import { Agent } from "@mastra/core/agent";
 * import { recordMastraAgent } from "trajectory-recorder/ai-sdk";
 *
 * const agent = recordMastraAgent(
 *   new Agent({ id: "weather", name: "weather", instructions, model: { id: "vllm/my-model", url: baseURL }, tools }),
 * );
 * const t = await recorder.rollout(async () => {
 *   await agent.generate("What is the weather in Paris?");
 * });
 */
export function recordMastraAgent<A extends object>(
  agent: A,
  options: RecordMastraAgentOptions = {},
): A {
  const a = agent as A & MastraAgentLike & { [ATTACHED]?: true };
  if (a === null || typeof a !== "object" || typeof a.resolveModelConfig !== "function")
    throw new InvalidArgumentError(
      "recordMastraAgent(agent)",
      "agent",
      "a Mastra Agent (@mastra/core 1.x) with a resolveModelConfig method, through which its model calls are recorded",
      agent,
    );
  if (a[ATTACHED]) return agent;
  warnIfUntrainableMastra(options.logger ?? console);
  const resolve = a.resolveModelConfig;
  const name = a.name ?? "agent";
  a.resolveModelConfig = async (config, requestContext) => {
    const model = await resolve.call(agent, config, requestContext);
    if (
      !isModel(model) ||
      (model as { specificationVersion?: string }).specificationVersion === "v1"
    )
      throw new InvalidArgumentError(
        "recordMastraAgent",
        "agent.model",
        "",
        undefined,
        `agent ${name} resolved its model to ${isModel(model) ? "an AI SDK v1 (legacy) model" : "an object without doStream/doGenerate"}; its calls cannot be recorded. Give it an AI SDK 5+ model, a "provider/model" string or an { id, url } config`,
      );
    instrument(model);
    return model;
  };
  reportResultsOfGenerate(a);
  reportResultsOfStream(a);
  a[ATTACHED] = true;
  return agent;
}
