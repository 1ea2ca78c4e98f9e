// What a streamed answer holds so far, for the store: so that a process
// killed mid-stream keeps the call as far as it got. The SSE bytes are parsed
// here only when a write is due (a few times a second), each event once.

/** What the first choice of a streamed answer said so far. */
export interface PartialAnswer {
  content: string;
  reasoning?: string;
  tool_calls?: unknown[];
}

/** How often progress is written, at most (ms). */
export const PROGRESS_EVERY_MS = 250;

interface ToolCallSoFar {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

/**
 * Collects a stream's bytes and, at most every {@link PROGRESS_EVERY_MS},
 * hands `write` the answer so far (the first choice's content, reasoning and
 * tool calls).
 */
export class SseProgress {
  readonly #write: (partial: PartialAnswer) => void;
  #pending: Buffer[] = [];
  #rest = "";
  #last = Date.now();
  #content = "";
  #reasoning = "";
  #tools: ToolCallSoFar[] = [];

  constructor(write: (partial: PartialAnswer) => void) {
    this.#write = write;
  }

  /** A chunk of the stream, as it arrived. */
  add(chunk: Uint8Array): void {
    this.#pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    const now = Date.now();
    if (now - this.#last < PROGRESS_EVERY_MS) return;
    this.#last = now;
    this.#read();
    const partial: PartialAnswer = { content: this.#content };
    if (this.#reasoning) partial.reasoning = this.#reasoning;
    if (this.#tools.length)
      partial.tool_calls = this.#tools.map((t) => ({ ...t, function: { ...t.function } }));
    this.#write(partial);
  }

  /** Parses the events that arrived since the last write. */
  #read(): void {
    const text = this.#rest + Buffer.concat(this.#pending).toString("utf8");
    this.#pending = [];
    const end = text.lastIndexOf("\n");
    this.#rest = end === -1 ? text : text.slice(end + 1);
    if (end === -1) return;
    for (const line of text.slice(0, end).split("\n")) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "" || data === "[DONE]") continue;
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        continue;
      }
      this.#take(event);
    }
  }

  #take(event: unknown): void {
    const choice = (
      event as { choices?: Array<{ index?: number; delta?: Record<string, unknown> }> }
    )?.choices?.find((c) => (c.index ?? 0) === 0);
    const delta = choice?.delta;
    if (!delta) return;
    if (typeof delta.content === "string") this.#content += delta.content;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string") this.#reasoning += reasoning;
    const calls = delta.tool_calls;
    if (!Array.isArray(calls)) return;
    for (const c of calls as Array<Record<string, unknown>>) {
      const index = typeof c.index === "number" ? c.index : 0;
      const fn = (c.function ?? {}) as { name?: string; arguments?: string };
      this.#tools[index] ??= { function: { name: "", arguments: "" } };
      const soFar = this.#tools[index];
      if (typeof c.id === "string") soFar.id = c.id;
      if (typeof c.type === "string") soFar.type = c.type;
      if (typeof fn.name === "string") soFar.function.name += fn.name;
      if (typeof fn.arguments === "string") soFar.function.arguments += fn.arguments;
    }
  }
}
