// What a streamed answer holds so far, for the store: so that a process
// killed mid-stream keeps the call as far as it got. The SSE bytes are parsed
// here only when a write is due (a few times a second), each event once; what
// an event adds is read by the API's own reader (progress-readers.ts).
import { ChatProgress, type PartialAnswer, type ProgressReader } from "./progress-readers.js";

export type { PartialAnswer } from "./progress-readers.js";

/** How often progress is written, at most (ms). */
export const PROGRESS_EVERY_MS = 250;

/**
 * Collects a stream's bytes and, at most every {@link PROGRESS_EVERY_MS},
 * hands `write` the answer so far (the first choice's content, reasoning and
 * tool calls). `reader` reads the API's events (chat completion chunks by default).
 */
export class SseProgress {
  readonly #write: (partial: PartialAnswer) => void;
  readonly #reader: ProgressReader;
  #pending: Buffer[] = [];
  #rest = "";
  #last = Date.now();

  constructor(
    write: (partial: PartialAnswer) => void,
    reader: ProgressReader = new ChatProgress(),
  ) {
    this.#write = write;
    this.#reader = reader;
  }

  /** A chunk of the stream, as it arrived. */
  add(chunk: Uint8Array): void {
    this.#pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    const now = Date.now();
    if (now - this.#last < PROGRESS_EVERY_MS) return;
    this.#last = now;
    this.#read();
    this.#write(this.#reader.partial());
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
      if (event && typeof event === "object") this.#reader.take(event as Record<string, unknown>);
    }
  }
}
