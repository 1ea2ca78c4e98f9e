// Tool results from AI SDK 7's tracing channel. A call that sets its own
// `telemetry.integrations` replaces the global ones, so the telemetry hook
// never hears of it; ai 7 also publishes every tool execution on the Node
// tracing channel "ai:telemetry", whatever the call's integrations. Each
// result is reported as the model would be sent it (text as is, anything else
// as JSON); a later request that carries it wins, and the telemetry hook's
// exact copy (when it runs) replaces it.
import * as diagnostics from "node:diagnostics_channel";
import { currentRollout } from "../../recorder/index.js";
import { noteAnswered } from "./ledger.js";

type ToolOutput = { type?: string; toolCallId?: string; toolName?: string; output?: unknown };
type Message = { type?: string; result?: { output?: ToolOutput } };

const MARK = Symbol.for("trajectory-recorder.ai-sdk.channel");

function onToolEnd(message: unknown): void {
  const m = message as Message;
  if (m?.type !== "executeTool") return;
  const r = m.result?.output;
  if (r?.type !== "tool-result" || !r.toolCallId || r.output === undefined) return;
  const rollout = currentRollout();
  if (!rollout) return;
  const content = typeof r.output === "string" ? r.output : JSON.stringify(r.output);
  rollout.recordToolResult({ tool_call_id: r.toolCallId, content, name: r.toolName });
  noteAnswered(rollout, [r.toolCallId]);
}

/**
 * Subscribes to ai 7's "ai:telemetry" tracing channel once per process (every
 * copy of this module shares the mark). Older `ai` versions publish nothing
 * there; runtimes without tracing channels are skipped.
 */
export function subscribeToolChannel(): void {
  const g = globalThis as { [MARK]?: true };
  if (g[MARK] || typeof diagnostics.tracingChannel !== "function") return;
  g[MARK] = true;
  const noop = () => {};
  diagnostics.tracingChannel("ai:telemetry").subscribe({
    start: noop,
    end: noop,
    asyncStart: noop,
    asyncEnd: onToolEnd,
    error: noop,
  });
}
