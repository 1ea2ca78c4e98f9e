// What the Agents SDK sends the model for a tool's output over Chat
// Completions. The `agent_tool_end` hook hands over the SDK's string form of
// the output (JSON for an object); the request carries something else when
// the tool returned output items: the SDK turns `{ type: "text" }` items into
// their text and an output with no text (an image, a file) into a
// placeholder. A result no later request carries (the run's last step) is
// recorded as the next request would have carried it.

/** The SDK's placeholder for a tool output Chat Completions cannot carry. */
export const OMITTED_TOOL_OUTPUT = "[tool output omitted]";

type Item = Record<string, unknown>;

function outputItem(value: unknown): Item | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const item = value as Item;
  if (item.type === "text" && typeof item.text === "string") return item;
  if (item.type === "image" || item.type === "file") return item;
  return undefined;
}

/** The output items `value` is made of, or undefined when it is not output items. */
function outputItems(value: unknown): Item[] | undefined {
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    const items = value.map(outputItem);
    return items.every(Boolean) ? (items as Item[]) : undefined;
  }
  const one = outputItem(value);
  return one ? [one] : undefined;
}

/**
 * The tool message content the SDK's Chat Completions model sends for the
 * output reported by `agent_tool_end` (`result`: the SDK's string form).
 *
 * @example
 * chatToolContent('{"type":"text","text":"sunny"}'); // "sunny"
 * chatToolContent('{"type":"image","image":"data:..."}'); // "[tool output omitted]"
 */
export function chatToolContent(result: unknown): string {
  if (typeof result !== "string") return JSON.stringify(result ?? null);
  const first = result.trimStart()[0];
  if (first !== "{" && first !== "[") return result;
  let parsed: unknown;
  try {
    parsed = JSON.parse(result);
  } catch {
    return result;
  }
  const items = outputItems(parsed);
  if (!items) return result;
  const texts = items.filter((i) => i.type === "text").map((i) => i.text as string);
  return texts.length ? texts.join("") : OMITTED_TOOL_OUTPUT;
}
