// The items of a conversation the recorder built itself: the copies it made
// of the messages a call sent and the Choices it recorded from the answers.
// A RolloutWorker writes them without checking them again (the wire check
// before training still does); anything a rollout added or replaced is
// checked. One set for every copy of the module (ESM and CommonJS builds).

const KEY = Symbol.for("trajectory-recorder.recorded-items");
const registry = globalThis as { [KEY]?: WeakSet<object> };
registry[KEY] ??= new WeakSet();
const recorded: WeakSet<object> = registry[KEY];

/** Notes `item` as built by the recorder. */
export function markRecorded(item: object): void {
  recorded.add(item);
}

/** Whether the recorder built `item` (see {@link markRecorded}). */
export function isRecorded(item: unknown): boolean {
  return typeof item === "object" && item !== null && recorded.has(item);
}
