// Tool results the model never saw. A tool result that a later call sends back
// is recorded from that call's request, exactly as it went on the wire; only
// the results of tools run after the last model call (a step limit reached, a
// stop condition met) would be lost, and AI SDK's telemetry integrations hand
// them over when the generation ends: `onEnd` in ai 7, `onFinish` in ai 6
// (from 6.0.111, the first 6.x whose generateText and streamText call the
// globally registered integrations).
import type { LanguageModelV4ToolResultOutput } from "@ai-sdk/provider";
import { type ActiveRollout, currentRollout } from "../../recorder/index.js";
import { noteAnswered } from "./ledger.js";
import { toolOutputText } from "./neutral.js";

type Message = RecorderTelemetry.ResponseMessage;
type ToolResultPart = {
  type: string;
  toolCallId: string;
  toolName: string;
  output: LanguageModelV4ToolResultOutput;
};

const MARK = Symbol.for("trajectory-recorder.ai-sdk.telemetry");

// Rollouts by AI SDK call id, taken when the generation starts: a stream's
// end may be dispatched from another async context.
const rollouts = new Map<string, ActiveRollout>();

const finished = new WeakSet<object>();

type Step = RecorderTelemetry.Step;

/**
 * The type of {@link recorderTelemetry}: an AI SDK telemetry integration,
 * with the parts of its events it reads.
 */
export interface RecorderTelemetry {
  /** A generation starts: its rollout is taken by call id. */
  onStart(event: { callId?: string }): void;
  /** ai 7: the generation's end, with its steps and response messages. */
  onEnd(event: {
    callId?: string;
    responseMessages?: RecorderTelemetry.ResponseMessage[];
    steps?: RecorderTelemetry.Step[];
  }): void;
  /** ai 6: the generation's end, with its steps and the last step's response messages. */
  onFinish(event: {
    steps?: RecorderTelemetry.Step[];
    response?: { messages?: RecorderTelemetry.ResponseMessage[] };
  }): void;
  /** The generation failed: its rollout is forgotten. */
  onError(event: unknown): void;
  /** The generation was aborted: its rollout is forgotten. */
  onAbort(event: { callId?: string }): void;
}

/** The parts of AI SDK's telemetry events that {@link recorderTelemetry} reads. */
export declare namespace RecorderTelemetry {
  /** A message of the generation's response (its tool messages carry the tools' results). */
  export interface ResponseMessage {
    /** `"assistant"` or `"tool"`. */
    role: string;
    /** Its parts. */
    content: unknown;
  }
  /** One step of the generation (a model call and the tools it ran). */
  export interface Step {
    /** Its parts; the `"tool-result"` and `"tool-error"` ones name the calls that ran. */
    content?: Array<{ type: string; toolCallId?: string }>;
  }
}

/**
 * Records the tool results of the final step: a model saw every earlier step's
 * results in a later request. The tool messages of `responseMessages` carry the
 * output as the model would have been sent it.
 */
function recordTrailingToolResults(
  rollout: ActiveRollout,
  finalStep: Step | undefined,
  messages: Message[],
): void {
  const ran = new Set(
    (finalStep?.content ?? [])
      .filter((p) => p.type === "tool-result" || p.type === "tool-error")
      .map((p) => p.toolCallId),
  );
  if (ran.size === 0) return;
  // Work left running past the rollout's end is not part of the trajectory it returned.
  if ((rollout as { ended?: boolean }).ended) return;
  const recorded: string[] = [];
  for (const message of messages) {
    if (message.role !== "tool" || !Array.isArray(message.content)) continue;
    for (const part of message.content as ToolResultPart[]) {
      if (part.type !== "tool-result" || !ran.has(part.toolCallId)) continue;
      rollout.recordToolResult({
        tool_call_id: part.toolCallId,
        name: part.toolName,
        content: toolOutputText(part.output),
      });
      recorded.push(part.toolCallId);
    }
  }
  noteAnswered(rollout, recorded);
}

// Marked, so that registering it twice (or a second copy of this module) adds it once.
const integration: RecorderTelemetry & { readonly [MARK]: true } = {
  [MARK]: true,
  onStart(event): void {
    const rollout = currentRollout();
    if (rollout && event.callId) rollouts.set(event.callId, rollout);
  },
  onEnd(event): void {
    const rollout = (event.callId && rollouts.get(event.callId)) || currentRollout();
    if (event.callId) rollouts.delete(event.callId);
    if (rollout && Array.isArray(event.responseMessages) && Array.isArray(event.steps))
      recordTrailingToolResults(rollout, event.steps.at(-1), event.responseMessages);
  },
  onFinish(event): void {
    // ai 6 calls the global integrations and the call's own: once is enough.
    if (finished.has(event)) return;
    finished.add(event);
    const rollout = currentRollout();
    const messages = event.response?.messages;
    if (rollout && Array.isArray(messages) && Array.isArray(event.steps))
      recordTrailingToolResults(rollout, event.steps.at(-1), messages);
  },
  onError(event): void {
    const callId = (event as { callId?: string } | undefined)?.callId;
    if (callId) rollouts.delete(callId);
  },
  onAbort(event): void {
    if (event.callId) rollouts.delete(event.callId);
  },
};

/**
 * An AI SDK telemetry integration (ai 7, and ai 6 from 6.0.111) that records
 * the results of tools run after the last model call of a
 * `generateText`/`streamText`/agent call. {@link recorderMiddleware} registers
 * it globally; with ai 7, pass it yourself when a call sets its own
 * `telemetry.integrations` (they replace the global ones there).
 *
 * @example
 * await generateText({
 *   model,
 *   tools,
 *   prompt,
 *   telemetry: { integrations: [myTracing, recorderTelemetry] },
 * });
 */
export const recorderTelemetry: RecorderTelemetry = integration;

/**
 * Adds {@link recorderTelemetry} to AI SDK's global telemetry integrations
 * (once per process). AI SDK 7 and 6.0.111+ read that list on every call;
 * older versions never look at it, so there this does nothing.
 */
export function registerRecorderTelemetry(): void {
  // The same global list `registerTelemetry` from "ai" pushes onto; written
  // directly so that this module never loads "ai" (ai 5 and 6 lack that export).
  const g = globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: Array<{ [MARK]?: unknown }> };
  g.AI_SDK_TELEMETRY_INTEGRATIONS ??= [];
  if (g.AI_SDK_TELEMETRY_INTEGRATIONS.some((i) => i?.[MARK])) return;
  g.AI_SDK_TELEMETRY_INTEGRATIONS.push(integration);
}
