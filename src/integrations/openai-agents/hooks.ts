import type { Agent, Runner } from "@openai/agents";
import { type ActiveRollout, currentRollout, InvalidArgumentError } from "../../recorder/index.js";
import { reportModel } from "./model-check.js";
import { chatToolContent } from "./tool-output.js";

type Listener = (...args: unknown[]) => void;
interface Emitter {
  on(type: string, listener: Listener): unknown;
  off(type: string, listener: Listener): unknown;
}

// Tool calls already recorded per rollout, so that hooks attached to both a
// runner and its agents record each result once.
const recordedCalls = new WeakMap<ActiveRollout, Set<string>>();

function firstTime(rollout: ActiveRollout, callId: string): boolean {
  let ids = recordedCalls.get(rollout);
  if (!ids) {
    ids = new Set();
    recordedCalls.set(rollout, ids);
  }
  if (ids.has(callId)) return false;
  ids.add(callId);
  return true;
}

// Runner and Agent emit agent_tool_end with different leading arguments
// (the runner adds the agent), but both end with (..., tool, result, { toolCall }).
function onToolEnd(...args: unknown[]): void {
  const rollout = currentRollout();
  if (!rollout) return;
  const details = args.at(-1) as { toolCall?: { callId?: unknown } } | undefined;
  const result = args.at(-2);
  const tool = args.at(-3) as { name?: unknown } | undefined;
  const callId = details?.toolCall?.callId;
  if (typeof callId !== "string" || !firstTime(rollout, callId)) return;
  // The core gives it to the history whose turn issued the call; a later
  // request of that history that carries it wins over this copy.
  rollout.recordToolResult({
    tool_call_id: callId,
    content: chatToolContent(result),
    ...(typeof tool?.name === "string" ? { name: tool.name } : {}),
  });
}

/**
 * Records tool results from a `Runner` or an `Agent` into the current rollout:
 * each goes to the history (main, a handoff's or an `asTool` agent's) whose
 * turn called the tool. A request that carries the result later wins (its
 * content and order, as the model saw them); a result no request carries
 * (a tool that ends the run) is recorded as Chat Completions would send it
 * (output items as their text, or the SDK's placeholder). It also logs on the
 * trajectory when an agent runs on a model whose calls the recorder will not
 * see (a custom model, or a Responses API model over an unwrapped client).
 * Returns a function that detaches the hooks.
 *
 * A `Runner` covers every agent it runs; attach to agents when you use the
 * SDK's `run()`, whose runner is not reachable.
 *
 * @example
 * const runner = new Runner({ modelProvider: recordingModelProvider({ client }) });
 * attachRecorder(runner);
 * const t = await recorder.rollout(() => runner.run(agent, "What is the weather in Paris?"));
 */
export function attachRecorder(target: Runner | Agent<any, any>): () => void {
  const emitter = target as unknown as Emitter;
  if (typeof emitter?.on !== "function" || typeof emitter.off !== "function")
    throw new InvalidArgumentError(
      "attachRecorder(target)",
      "target",
      "an Agents SDK Runner or Agent (with on and off)",
      target,
    );
  const runnerModel = (target as { config?: { model?: unknown } }).config?.model;
  const onStart = (...args: unknown[]) => {
    const rollout = currentRollout();
    const agent = args[1] as Parameters<typeof reportModel>[1] | undefined;
    if (rollout && agent) reportModel(rollout, agent, runnerModel);
  };
  const onEnd = (...args: unknown[]) => onToolEnd(...args);
  emitter.on("agent_tool_end", onEnd);
  emitter.on("agent_start", onStart);
  return () => {
    emitter.off("agent_tool_end", onEnd);
    emitter.off("agent_start", onStart);
  };
}
