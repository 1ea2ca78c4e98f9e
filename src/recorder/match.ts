// How a request is matched against what a history already holds. The wire is
// the truth: a recorded message is the sent one only when the model saw the
// same thing, tool messages included.
import { isChoice, type MessageOrChoice } from "../trajectory/index.js";

type Msg = Record<string, unknown>;
type ToolCalls = Array<{ id: string }> | null | undefined;

/** Same content, with `null`, `undefined` and `""` all meaning none. */
export function sameContent(a: unknown, b: unknown): boolean {
  if (a === b || (!a && !b)) return true;
  if (typeof a === "string" || typeof b === "string") return false;
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * Whether the recorded `item` is the sent message `b`: the role, then the
 * tool call id(s) where there are some, else the content. A tool message must
 * also carry the same content: a history never holds tool text the model did
 * not see. A recorded Choice is compared through its message.
 */
export function sameMessage(item: MessageOrChoice, b: Msg): boolean {
  const choice = isChoice(item);
  const a = (choice ? item.message : item) as unknown as Msg;
  if ((choice ? "assistant" : a.role) !== b.role) return false;
  if (b.role === "tool")
    return a.tool_call_id === b.tool_call_id && sameContent(a.content, b.content);
  if (b.role === "assistant") {
    const at = a.tool_calls as ToolCalls;
    const bt = b.tool_calls as ToolCalls;
    const n = at?.length ?? 0;
    if (n !== (bt?.length ?? 0)) return false;
    if (n > 0) {
      for (let i = 0; i < n; i++) if (at?.[i]?.id !== bt?.[i]?.id) return false;
      return true;
    }
  }
  return sameContent(a.content, b.content);
}

/** Whether the recorded items (messages and Choices) are the start of `full`. */
export function isPrefix(items: readonly MessageOrChoice[], full: readonly Msg[]): boolean {
  if (items.length > full.length) return false;
  for (let i = 0; i < items.length; i++)
    if (!sameMessage(items[i] as MessageOrChoice, full[i] as Msg)) return false;
  return true;
}

/**
 * Whether two tool lists offer the same tools (no list and an empty one are
 * the same offer). Elements the same object are not serialized.
 */
export function sameTools(
  a: readonly unknown[] | null | undefined,
  b: readonly unknown[] | null | undefined,
): boolean {
  const n = a?.length ?? 0;
  if (n !== (b?.length ?? 0)) return false;
  for (let i = 0; i < n; i++) {
    const x = a?.[i];
    const y = b?.[i];
    if (x !== y && JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}
