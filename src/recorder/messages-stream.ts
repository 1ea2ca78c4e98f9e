// A streamed Anthropic Messages answer, rebuilt from its events:
// `message_start` carries the message (id, model, usage), each content block
// starts with `content_block_start` and grows by `content_block_delta`s (text,
// thinking, a tool's input as JSON text in pieces), `message_delta` brings the
// stop reason, `message_stop` ends it. A stream cut before the end keeps the
// blocks it started, with what they had so far.

type Block = Record<string, unknown>;
type Event = { type?: unknown } & Record<string, unknown>;

/** Collects a Messages stream's events into the message they describe. */
export class MessagesStreamAccumulator {
  /** The message of `message_start`, with the stop reason and usage of `message_delta`. */
  message: Block | undefined;
  #blocks: Block[] = [];
  /** A tool input's JSON text so far, by block index. */
  #json = new Map<number, string>();
  #stopped = false;

  add(event: Event): void {
    switch (event.type) {
      case "message_start":
        if (isBlock(event.message)) this.message = { ...event.message };
        break;
      case "content_block_start":
        if (isBlock(event.content_block))
          this.#blocks[Number(event.index)] = { ...event.content_block };
        break;
      case "content_block_delta":
        this.#delta(Number(event.index), event.delta);
        break;
      case "message_delta":
        this.#messageDelta(event);
        break;
      case "message_stop":
        this.#stopped = true;
        break;
    }
  }

  #delta(index: number, delta: unknown): void {
    const block = this.#blocks[index];
    if (!block || !isBlock(delta)) return;
    if (delta.type === "text_delta") block.text = `${text(block.text)}${text(delta.text)}`;
    else if (delta.type === "thinking_delta")
      block.thinking = `${text(block.thinking)}${text(delta.thinking)}`;
    else if (delta.type === "input_json_delta")
      this.#json.set(index, `${this.#json.get(index) ?? ""}${text(delta.partial_json)}`);
  }

  #messageDelta(event: Event): void {
    if (!this.message) this.message = {};
    const delta = event.delta;
    if (isBlock(delta) && delta.stop_reason !== undefined)
      this.message.stop_reason = delta.stop_reason;
    if (isBlock(event.usage))
      this.message.usage = { ...(this.message.usage as Block | undefined), ...event.usage };
  }

  /** The content blocks so far; a tool's input is its JSON text as streamed (`{}` when none came). */
  content(): Block[] {
    const out: Block[] = [];
    this.#blocks.forEach((block, index) => {
      const json = this.#json.get(index);
      out.push(json === undefined ? block : { ...block, input: json || "{}" });
    });
    return out;
  }

  /** Whether `message_stop` came. */
  finished(): boolean {
    return this.#stopped;
  }
}

function isBlock(x: unknown): x is Block {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function text(x: unknown): string {
  return typeof x === "string" ? x : "";
}
