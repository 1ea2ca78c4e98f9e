// A tool run's output as the tool message the model will be sent next.
import type { BaseMessage } from "@langchain/core/messages";
import { toOpenAIMessages } from "./messages.js";

/** A tool result as the model is sent it. */
export interface ToolResult {
  tool_call_id: string;
  /** A string, or the content parts ChatOpenAI sends as they are. */
  content: string | unknown[];
  name?: string;
}

function isMessage(x: unknown): x is BaseMessage {
  return typeof (x as BaseMessage)?.getType === "function";
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content) && content.every((b) => b?.type === "text"))
    return content.map((b) => b.text).join("");
  return JSON.stringify(content);
}

/**
 * The result a tool run produced: a ToolMessage (a tool invoked with a tool
 * call, as ToolNode and agents do) or a plain value for `toolCallId`.
 */
export function toolResultOf(output: unknown, toolCallId?: string): ToolResult | undefined {
  if (isMessage(output)) {
    if (output.getType() !== "tool") return undefined;
    const id = (output as { tool_call_id?: string }).tool_call_id ?? toolCallId;
    if (!id) return undefined;
    // The content exactly as ChatOpenAI puts the tool message on the wire.
    const [param] = toOpenAIMessages([output]) as Array<{ content: string | unknown[] }>;
    return { tool_call_id: id, content: param?.content ?? "", name: output.name };
  }
  // A LangGraph Command carries its messages into the state; the next request shows them.
  if ((output as { lg_name?: string } | null)?.lg_name === "Command") return undefined;
  if (!toolCallId || output === undefined) return undefined;
  return { tool_call_id: toolCallId, content: text(output) };
}
