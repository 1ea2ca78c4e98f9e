import { type Model, OpenAIChatCompletionsModel, OpenAIResponsesModel } from "@openai/agents";
import type { ActiveRollout } from "../../recorder/index.js";

/** Why the calls of `model` will lack logprobs, or undefined when it records them. */
export function missingLogprobsReason(model: unknown): string | undefined {
  if (!model || typeof model !== "object") return undefined; // a name: the runner's provider decides
  if (model instanceof OpenAIChatCompletionsModel) return undefined;
  if (model instanceof OpenAIResponsesModel)
    return "uses the Responses API (OpenAIResponsesModel), which the recorder does not record and which gives no logprobs for tool calls";
  const kind = (model as { constructor?: { name?: string } }).constructor?.name || "a custom model";
  return `uses ${kind}, not a Chat Completions model, so its calls are not recorded`;
}

/**
 * Logs on the rollout, once per agent, when the model the agent runs with
 * cannot give logprobs and token ids.
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
  rollout.logOnce(
    `logprobs missing: agent "${agent.name ?? "?"}" ${why}; ` +
      "use recordingModelProvider() or an OpenAIChatCompletionsModel over a recorded client (Chat Completions mode).",
  );
}
