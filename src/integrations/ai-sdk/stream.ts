// Recording a streamed call while handing the caller the parts they would
// have seen without the recorder.
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import { type RecordedCompletion, StreamAccumulator } from "../../recorder/index.js";
import { noteCall } from "./ledger.js";
import { NeutralChoice, requestFromParams } from "./neutral.js";
import { noteGaps } from "./notes.js";
import { type CallState, callerWarnings } from "./params.js";
import { chatRequest, hasChoices } from "./wire.js";

type Model = { provider: string; modelId: string };
type Status = NonNullable<RecordedCompletion["status"]>;

/** Collects one streamed call from its raw chunks (Chat Completions) or its parts (anything else). */
class StreamRecord {
  readonly chunks = new StreamAccumulator();
  readonly parts = new NeutralChoice();
  sawRaw = false;
  sawFinish = false;
  error: unknown;
  id?: string;
  model?: string;

  observe(part: LanguageModelV4StreamPart): void {
    switch (part.type) {
      case "raw":
        if (hasChoices(part.rawValue)) {
          this.sawRaw = true;
          this.chunks.add(part.rawValue as never);
        }
        break;
      case "text-delta":
        this.parts.addText(part.delta);
        break;
      case "reasoning-delta":
        this.parts.addReasoning(part.delta);
        break;
      case "tool-call":
        if (!part.providerExecuted) this.parts.addToolCall(part);
        break;
      case "response-metadata":
        this.id ??= part.id;
        this.model ??= part.modelId;
        break;
      case "finish":
        this.sawFinish = true;
        this.parts.finishReason = part.finishReason;
        break;
      case "error":
        this.error ??= part.error;
        break;
    }
  }

  status(): Status {
    if (this.error !== undefined) return "error";
    const done = this.sawRaw ? this.chunks.finished() : this.sawFinish;
    return done ? "complete" : "incomplete";
  }
}

function isAbort(error: unknown): boolean {
  return ((error as { name?: string } | undefined)?.name ?? "").includes("Abort");
}

/**
 * Returns `result` with a stream that records the call into `state.rollout`
 * once it ends, errors or is cancelled.
 */
export function recordStream(
  result: LanguageModelV4StreamResult,
  params: LanguageModelV4CallOptions,
  model: Model,
  state: CallState,
  startTime = Date.now(),
): LanguageModelV4StreamResult {
  const { rollout } = state;
  const wire = chatRequest(result.request?.body);
  const request = wire ?? requestFromParams(params, model.modelId);
  const record = new StreamRecord();
  let recorded = false;
  const finish = (status: Status, error?: unknown) => {
    if (recorded) return;
    recorded = true;
    const fromChunks = wire !== undefined && record.sawRaw;
    noteGaps(rollout, model, wire, wire === undefined || record.sawRaw);
    const c = record.chunks;
    const call: RecordedCompletion = {
      request,
      choices: fromChunks ? c.choices() : [record.parts.choice()],
      response: fromChunks
        ? { id: c.id, model: c.model, usage: c.usage, prompt_token_ids: c.promptTokenIds }
        : { id: record.id, model: record.model ?? model.modelId },
      status,
      ...(error !== undefined ? { error } : {}),
      streamed: true,
      startTime,
    };
    rollout.recordCompletion(call);
    noteCall(rollout, call);
  };
  // A stream still running when the rollout returns (not awaited, or read
  // after the rollout) is recorded then, with what it got so far and a line
  // in the logs: the trajectory is handed back at that point.
  rollout.onEnd?.(() =>
    finish("incomplete", new Error("the rollout ended before this stream finished")),
  );
  const reader = result.stream.getReader();
  const stream = new ReadableStream<LanguageModelV4StreamPart>({
    async pull(controller) {
      // Read until there is a part to hand on: dropped raw parts hand on nothing.
      for (;;) {
        let next: ReadableStreamReadResult<LanguageModelV4StreamPart>;
        try {
          next = await reader.read();
        } catch (error) {
          finish(isAbort(error) ? "aborted" : "error", error);
          controller.error(error);
          return;
        }
        if (next.done) {
          finish(record.status(), record.error);
          controller.close();
          return;
        }
        const part = next.value;
        record.observe(part);
        if (part.type === "raw" && !state.callerWantsRaw) continue;
        if (part.type === "stream-start")
          controller.enqueue({ ...part, warnings: callerWarnings(part.warnings, state) ?? [] });
        else controller.enqueue(part);
        return;
      }
    },
    cancel(reason) {
      finish(params.abortSignal?.aborted ? "aborted" : "incomplete");
      return reader.cancel(reason);
    },
  });
  return { ...result, stream };
}
