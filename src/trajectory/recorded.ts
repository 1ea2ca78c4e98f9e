// The items of a conversation the recorder built itself: the copies it made
// of the messages a call sent and the Choices it recorded from the answers.
// A RolloutWorker writes them without checking them again (the wire check
// before training still does); anything a rollout added or replaced is
// checked. One set for every copy of the module (ESM and CommonJS builds).

// Kept per trajectory (a Set for each, found through one WeakMap entry): a
// WeakSet of every item ever recorded cost an ephemeron per item, on the call
// path and in every garbage collection.
const KEY = Symbol.for("trajectory-recorder.recorded-items-by-trajectory");
const registry = globalThis as { [KEY]?: WeakMap<object, Set<object>> };
registry[KEY] ??= new WeakMap();
const byOwner: WeakMap<object, Set<object>> = registry[KEY];

/** The set of items the recorder built for `owner` (a rollout's trajectory). */
export function recordedItems(owner: object): Set<object> {
  let items = byOwner.get(owner);
  if (!items) {
    items = new Set();
    byOwner.set(owner, items);
  }
  return items;
}

/** Whether the recorder built `item` for `owner` (see {@link recordedItems}). */
export function isRecorded(owner: object, item: unknown): boolean {
  return typeof item === "object" && item !== null && byOwner.get(owner)?.has(item) === true;
}
