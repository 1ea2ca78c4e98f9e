// Recording a non-streamed call from the provider's raw request and response bodies.
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import {
  type RecordedCompletion,
  recordedChoices,
  recordedResponse,
} from "../../recorder/index.js";
import { noteCall } from "./ledger.js";
import { NeutralChoice, requestFromParams } from "./neutral.js";
import { noteGaps } from "./notes.js";
import { type CallState, callerWarnings } from "./params.js";
import { chatRequest, hasChoices, parseBody } from "./wire.js";

type Model = { provider: string; modelId: string };

function neutralCall(
  result: LanguageModelV4GenerateResult,
  request: RecordedCompletion["request"],
  modelId: string,
): RecordedCompletion {
  const choice = new NeutralChoice();
  choice.addContent(result.content);
  choice.finishReason = result.finishReason;
  return {
    request,
    choices: [choice.choice()],
    response: { id: result.response?.id, model: result.response?.modelId ?? modelId },
    status: "complete",
  };
}

/** Runs the call and records it into `state.rollout`; errors are recorded and re-thrown. */
export async function recordGenerate(
  doGenerate: () => PromiseLike<LanguageModelV4GenerateResult>,
  params: LanguageModelV4CallOptions,
  model: Model,
  state: CallState,
): Promise<LanguageModelV4GenerateResult> {
  const { rollout } = state;
  const startTime = Date.now();
  let result: LanguageModelV4GenerateResult;
  try {
    result = await doGenerate();
  } catch (error) {
    rollout.recordCompletion({
      request: requestFromParams(params, model.modelId),
      choices: [],
      status: "error",
      error,
      startTime,
    });
    throw error;
  }
  const wire = chatRequest(result.request?.body);
  const body = parseBody(result.response?.body);
  noteGaps(rollout, model, wire, hasChoices(body));
  const call: RecordedCompletion =
    wire && hasChoices(body)
      ? {
          request: wire,
          choices: recordedChoices(body),
          response: recordedResponse(body),
          status: "complete",
          startTime,
        }
      : {
          ...neutralCall(result, wire ?? requestFromParams(params, model.modelId), model.modelId),
          startTime,
        };
  rollout.recordCompletion(call);
  noteCall(rollout, call);
  const warnings = callerWarnings(result.warnings, state);
  return warnings === result.warnings ? result : { ...result, warnings: warnings ?? [] };
}
