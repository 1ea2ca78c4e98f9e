// The rollout running in the current async context: one AsyncLocalStorage per
// process, switched on only while some rollout runs.
import { AsyncLocalStorage } from "node:async_hooks";
import type { ActiveRollout } from "./active-rollout.js";

// One store per process, shared through a global symbol: the CommonJS builds of
// the root and of each integration subpath carry their own copy of this module
// (and an app may load both the ESM and the CommonJS build), and all of them
// must see the same current rollout and the same count of running rollouts.
const CONTEXT_KEY = Symbol.for("trajectory-recorder.rollout-context");
interface SharedContext {
  storage: AsyncLocalStorage<ActiveRollout>;
  /** Rollouts whose function has not settled yet, across every copy of this module. */
  running: number;
}
const globals = globalThis as { [CONTEXT_KEY]?: SharedContext };
globals[CONTEXT_KEY] ??= { storage: new AsyncLocalStorage<ActiveRollout>(), running: 0 };
const shared: SharedContext = globals[CONTEXT_KEY];

/**
 * The rollout running in the current async context, if any. Work a rollout
 * left running after it ended finds none: what it does next is not part of
 * the trajectory the rollout already returned.
 *
 * @example
 * const r = currentRollout();
 * r?.log("tool failed, retrying");
 */
export function currentRollout(): ActiveRollout | undefined {
  const rollout = shared.storage.getStore();
  return (rollout as { ended?: boolean } | undefined)?.ended ? undefined : rollout;
}

/**
 * Rollouts whose function returned a promise that was garbage-collected
 * before it settled: nothing could settle it any more (an `await` on a
 * promise nobody resolves, say). Such a rollout stops counting as running,
 * so the store can be switched off again; what it recorded is then already
 * unreachable, and collected with it.
 */
const abandoned = new FinalizationRegistry<{ counted: boolean }>((slot) => release(slot));

function release(slot: { counted: boolean }): void {
  if (!slot.counted) return;
  slot.counted = false;
  if (--shared.running === 0) shared.storage.disable();
}

/** How many rollouts are running (their function has not settled, and still can), across every copy of this module. */
export function runningRollouts(): number {
  return shared.running;
}

/**
 * Runs `fn` with `rollout` as the current rollout until what it returns
 * settles.
 *
 * The store is switched off again when the last running rollout settles, or
 * can no longer settle (its promise was garbage-collected unsettled).
 * Where AsyncLocalStorage works through async_hooks (Node 20, and Node 22
 * without `--experimental-async-context-frame`), an enabled store makes every
 * promise in the process run a hook: 45–50 µs per `openai` call on our
 * bench machine. Switched off, code outside rollouts pays none of it.
 */
export async function runInRollout<T>(
  rollout: ActiveRollout,
  fn: () => T,
  signal?: AbortSignal,
): Promise<Awaited<T>> {
  shared.running++;
  const slot = { counted: true };
  // An aborted rollout has ended: work it left running no longer counts.
  const onAbort = () => release(slot);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const result = shared.storage.run(rollout, fn);
    // Only the result's own promise is watched, never the rollout: promises
    // made inside the rollout (a library's lazily made, process-long one)
    // carry the rollout as their store and may outlive it.
    if (isThenable(result)) abandoned.register(result, slot, slot);
    return await result;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    abandoned.unregister(slot);
    release(slot);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> & object {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
