// The request a LangChain chat model call sent, in Chat Completions form:
// ChatOpenAI's invocation params are its request body without `messages`.
import type { BaseMessage } from "@langchain/core/messages";
import type { RecordedCompletion } from "../../recorder/index.js";
import { toOpenAIMessages } from "./messages.js";

type Params = Record<string, unknown>;

/** True when ChatOpenAI used the Responses API (its params carry Responses-only keys). */
export function usedResponsesApi(params: Params): boolean {
  return "previous_response_id" in params || "truncation" in params;
}

// Responses function tools are flat ({ type, name, parameters }); the
// trajectory keeps tools in Chat Completions form.
function chatTool(tool: Params): Params {
  if (tool.type !== "function" || "function" in tool) return tool;
  const { type, ...fn } = tool;
  return { type, function: fn };
}

/** Builds the recorded request from the prompt and `extraParams.invocation_params`. */
export function requestOf(
  messages: BaseMessage[],
  invocationParams: Params | undefined,
): RecordedCompletion["request"] {
  const params = Object.fromEntries(
    Object.entries(invocationParams ?? {}).filter(([, v]) => v !== undefined),
  );
  const model = (params.model ?? params.model_name) as string | undefined;
  const request: RecordedCompletion["request"] = {
    ...structuredClone(params),
    model,
    messages: toOpenAIMessages(messages, model),
  };
  if (Array.isArray(params.tools) && params.tools.length > 0)
    request.tools = structuredClone(params.tools as Params[]).map(chatTool) as never;
  else delete request.tools;
  return request;
}
