import { type Model, OpenAIChatCompletionsModel, OpenAIResponsesModel } from "@openai/agents";
import type { ActiveRollout } from "../../recorder/index.js";

const WRAPPED = Symbol.for("trajectory-recorder.wrapped");

/** Whether the SDK's Responses model calls a client the recorder wrapped. */
function overWrappedClient(model: OpenAIResponsesModel): boolean {
  const client = (model as unknown as { _client?: { responses?: object } })._client;
  const responses = client?.responses as Record<symbol, unknown> | undefined;
  return responses?.[WRAPPED] === true;
}

/**
 * What the recorder will miss of the calls of `model`, or undefined when it
 * records them: a Chat Completions model is recorded with logprobs, a
 * Responses model over a wrapped client as plain messages (a teacher's trace;
 * the wrapped client itself says so when the trainable model answers there).
 */
export function missingLogprobsReason(model: unknown): string | undefined {
  if (!model || typeof model !== "object") return undefined; // a name: the runner's provider decides
  if (model instanceof OpenAIChatCompletionsModel) return undefined;
  if (model instanceof OpenAIResponsesModel)
    return overWrappedClient(model)
      ? undefined
      : "uses the Responses API (OpenAIResponsesModel) over a client the recorder did not wrap, so its calls are not recorded; give it a wrapped client (recorder.wrap(client), or setDefaultOpenAIClient(model.openai({ recorder })) for the SDK's default model)";
  const kind = (model as { constructor?: { name?: string } }).constructor?.name || "a custom model";
  return `uses ${kind}, not a Chat Completions or Responses model, so its calls are not recorded; use recordingModelProvider() or an OpenAIChatCompletionsModel over a recorded client (Chat Completions mode)`;
}

/**
 * Logs on the rollout, once per agent, when the calls of the model the agent
 * runs with will not be recorded.
 */
export function reportModel(
  rollout: ActiveRollout,
  agent: { name?: string; model?: string | Model },
  runnerModel: unknown,
): void {
  // The agent's own model wins over the runner's, as in the SDK's selectModel().
  const model = agent.model || runnerModel;
  const why = missingLogprobsReason(model);
  if (!why) return;
  rollout.logOnce(`calls not recorded: agent "${agent.name ?? "?"}" ${why}.`);
}
