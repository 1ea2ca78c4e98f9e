// A streamed Responses API answer, rebuilt from its events: the terminal
// event (`response.completed`, `.incomplete`, `.failed`) carries the whole
// response; a stream cut before it leaves the items it finished and the text
// of the message it was writing. `teeEvents` watches the SDK's stream as the
// caller reads it, as the chat wrapper's tee does for chunks.

import { isObjectLike } from "../util/argument-error.js";
import type { RecordedCompletion } from "./active-rollout.js";
import { type IterableStream, watchIterator } from "./watch-iterator.js";

type Item = Record<string, unknown>;
type Event = { type?: unknown } & Record<string, unknown>;

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** Collects a Responses stream's events into the response they describe. */
export class ResponsesStreamAccumulator {
  /** The response of the terminal event, once it came. */
  response: Item | undefined;
  /** The response id and model, from the first event that names them. */
  id: string | undefined;
  model: string | undefined;
  #done: Item[] = [];
  /** Text of message items not finished yet, by item id, with their place in the output. */
  #partial = new Map<string, { index: number; text: string }>();

  add(event: Event): void {
    const type = event.type;
    if (type === "response.output_text.delta") {
      const id = String(event.item_id);
      const slot = this.#partial.get(id) ?? { index: Number(event.output_index), text: "" };
      slot.text += typeof event.delta === "string" ? event.delta : "";
      this.#partial.set(id, slot);
    } else if (type === "response.output_item.done") {
      const item = event.item as Item | undefined;
      if (item) this.#done[Number(event.output_index)] = item;
      if (typeof item?.id === "string") this.#partial.delete(item.id);
    } else if (typeof type === "string" && (type === "response.created" || TERMINAL.has(type))) {
      const response = event.response as Item | undefined;
      if (!this.id && typeof response?.id === "string") this.id = response.id;
      if (!this.model && typeof response?.model === "string") this.model = response.model;
      if (response && TERMINAL.has(type)) this.response = response;
    }
  }

  /** The output items: the response's, else those finished plus the text being written. */
  output(): Item[] {
    const output = this.response?.output;
    if (Array.isArray(output)) return output as Item[];
    const items = [...this.#done];
    for (const [id, { index, text }] of this.#partial)
      items[Number.isInteger(index) ? index : items.length] = {
        type: "message",
        id,
        role: "assistant",
        content: [{ type: "output_text", text }],
      };
    return items.filter(Boolean);
  }

  /** Whether the terminal event came. */
  finished(): boolean {
    return this.response !== undefined;
  }
}

/** An SDK event stream (the part the recorder reads). */
export type EventStream = IterableStream<Item>;

/** What a watched event stream feeds its events to. */
export interface EventAccumulator {
  add(event: Item): void;
  /** Whether the stream's last event came. */
  finished(): boolean;
}

/**
 * Watches an SDK event stream as the caller reads it (a Responses stream into
 * a ResponsesStreamAccumulator, unless `acc` is given); `done` runs once when it ends.
 */
export function teeEvents(
  stream: EventStream,
  done: (
    acc: ResponsesStreamAccumulator,
    status: RecordedCompletion["status"],
    error?: unknown,
    cut?: boolean,
  ) => void,
): void;
export function teeEvents<A extends EventAccumulator>(
  stream: EventStream,
  done: (acc: A, status: RecordedCompletion["status"], error?: unknown, cut?: boolean) => void,
  acc: A,
): void;
export function teeEvents<A extends EventAccumulator>(
  stream: EventStream,
  done: (acc: A, status: RecordedCompletion["status"], error?: unknown, cut?: boolean) => void,
  acc: A = new ResponsesStreamAccumulator() as EventAccumulator as A,
): void {
  let ended = false;
  const finish = (status: RecordedCompletion["status"], error?: unknown, cut?: boolean) => {
    if (ended) return;
    ended = true;
    done(acc, status, error, cut);
  };
  const onStep = (r: IteratorResult<Item>) => {
    if (!r.done) {
      if (isObjectLike(r.value)) acc.add(r.value);
      return;
    }
    const aborted = (stream as { controller?: AbortController }).controller?.signal?.aborted;
    if (aborted) finish("aborted");
    else if (acc.finished()) finish("complete");
    else finish("incomplete", undefined, true);
  };
  const onError = (error: unknown) =>
    finish((error as { name?: string })?.name?.includes("Abort") ? "aborted" : "error", error);
  watchIterator(stream, onStep, onError, () => finish("incomplete"));
}
