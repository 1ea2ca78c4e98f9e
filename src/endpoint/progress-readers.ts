// Each API's stream events, read for the answer so far (see sse-progress.ts):
// chat completion chunks, Responses API events, Anthropic Messages events.
// Best effort: an event of another shape adds nothing.
/** What the first choice of a streamed answer said so far. */
export interface PartialAnswer {
  content: string;
  reasoning?: string;
  tool_calls?: unknown[];
}

type Event = Record<string, unknown>;

/** Reads one API's stream events into the answer so far. */
export interface ProgressReader {
  take(event: Event): void;
  partial(): PartialAnswer;
}

interface ToolCallSoFar {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

/** Text, reasoning and tool calls so far, as every reader keeps them. */
abstract class SoFar implements ProgressReader {
  protected content = "";
  protected reasoning = "";
  protected tools: ToolCallSoFar[] = [];

  abstract take(event: Event): void;

  partial(): PartialAnswer {
    const partial: PartialAnswer = { content: this.content };
    if (this.reasoning) partial.reasoning = this.reasoning;
    const tools = this.tools.filter(Boolean);
    if (tools.length)
      partial.tool_calls = tools.map((t) => ({ ...t, function: { ...t.function } }));
    return partial;
  }

  protected slot(index: number): ToolCallSoFar {
    this.tools[index] ??= { function: { name: "", arguments: "" } };
    return this.tools[index];
  }
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** Chat completion chunks: the first choice's deltas. */
export class ChatProgress extends SoFar {
  take(event: Event): void {
    const choices = event.choices as Array<{ index?: number; delta?: Event }> | undefined;
    const delta = Array.isArray(choices)
      ? choices.find((c) => (c?.index ?? 0) === 0)?.delta
      : undefined;
    if (!delta) return;
    this.content += str(delta.content);
    this.reasoning += str(delta.reasoning_content ?? delta.reasoning);
    const calls = delta.tool_calls;
    if (!Array.isArray(calls)) return;
    for (const c of calls as Event[]) {
      const slot = this.slot(typeof c.index === "number" ? c.index : 0);
      const fn = (c.function ?? {}) as Event;
      if (typeof c.id === "string") slot.id = c.id;
      if (typeof c.type === "string") slot.type = c.type;
      slot.function.name += str(fn.name);
      slot.function.arguments += str(fn.arguments);
    }
  }
}

/** Responses API events: output text, reasoning summaries, function calls by output index. */
export class ResponsesProgress extends SoFar {
  take(event: Event): void {
    const type = event.type;
    if (type === "response.output_text.delta") this.content += str(event.delta);
    else if (
      type === "response.reasoning_summary_text.delta" ||
      type === "response.reasoning_text.delta"
    )
      this.reasoning += str(event.delta);
    else if (type === "response.output_item.added") {
      const item = event.item as Event | undefined;
      if (item?.type !== "function_call") return;
      const slot = this.slot(Number(event.output_index) || 0);
      slot.id = str(item.call_id);
      slot.type = "function";
      slot.function.name = str(item.name);
      slot.function.arguments = str(item.arguments);
    } else if (type === "response.function_call_arguments.delta")
      this.slot(Number(event.output_index) || 0).function.arguments += str(event.delta);
  }
}

/** Anthropic Messages events: text, thinking and tool_use blocks by index. */
export class MessagesProgress extends SoFar {
  take(event: Event): void {
    const index = Number(event.index) || 0;
    if (event.type === "content_block_start") {
      const block = event.content_block as Event | undefined;
      if (block?.type !== "tool_use") return;
      const slot = this.slot(index);
      slot.id = str(block.id);
      slot.type = "function";
      slot.function.name = str(block.name);
    } else if (event.type === "content_block_delta") {
      const delta = (event.delta ?? {}) as Event;
      if (delta.type === "text_delta") this.content += str(delta.text);
      else if (delta.type === "thinking_delta") this.reasoning += str(delta.thinking);
      else if (delta.type === "input_json_delta")
        this.slot(index).function.arguments += str(delta.partial_json);
    }
  }
}
