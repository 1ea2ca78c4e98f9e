// Logprobs waiting to be compacted (the SDK's objects until their rollout's
// end, copies until first written), counted: past a cap, the oldest are
// compacted in slices so that a long rollout, many at once, or trajectories
// kept unwritten, keep a bounded number of tokens in a larger form than the
// compact one.

/** What is held: something that compacts itself (a CompactLogprobs). */
export interface Compactable {
  compact(): void;
}

/** How long one slice of compacting may hold the event loop, in ms. */
const SLICE_MS = 1;
/**
 * Tokens (alternatives included) that may wait to be compacted: as the SDK's
 * objects until their rollout's end, as copies until first written or read.
 * Past this, the oldest are compacted in slices: a rollout that runs long,
 * many at once, or trajectories kept unwritten, keep at most this many in a
 * larger form than the compact one.
 */
export const MAX_WAITING_TOKENS = 1 << 18;
/**
 * While fewer tokens than this wait, a recorded answer's lists are kept as
 * the SDK made them and read at the rollout's end: nothing is read on the
 * call path. Past it (many rollouts at once), they are copied on the call
 * path instead (a cheap pass, about 16 bytes a token against about 180 for
 * the SDK's objects), so that a crowd of open rollouts does not keep every
 * answer's objects alive for the garbage collector to walk.
 */
export const MAX_REFERENCED_TOKENS = 1 << 16;
/**
 * Captured logprobs held for compaction, oldest first (a Set keeps insertion
 * order). Held weakly: logprobs of a rollout that can never end (its promise
 * was collected unsettled) are garbage with it, and leave the count then.
 */
const held = new Set<WeakRef<Compactable>>();
let heldTokens = 0;
/** How one holder was counted (see {@link holdForCompaction}). */
export interface HeldSlot {
  ref: WeakRef<Compactable>;
  tokens: number;
}
const collected = new FinalizationRegistry<HeldSlot>((slot) => {
  if (held.delete(slot.ref)) heldTokens -= slot.tokens;
});
let scheduled = false;

function scheduleSlices(): void {
  if (scheduled) return;
  scheduled = true;
  // Unref'd: compacting is worth no wait at exit.
  setImmediate(compactOldest).unref();
}

/** Compacts held logprobs, oldest first, for about {@link SLICE_MS}, until under the cap. */
function compactOldest(): void {
  scheduled = false;
  const until = performance.now() + SLICE_MS;
  for (const ref of held) {
    if (heldTokens <= MAX_WAITING_TOKENS) return;
    const next = ref.deref();
    if (next) next.compact();
    else held.delete(ref);
    if (performance.now() >= until) break;
  }
  if (heldTokens > MAX_WAITING_TOKENS) scheduleSlices();
}

/** Whether answers may still be kept as the SDK's objects (see {@link MAX_REFERENCED_TOKENS}). */
export function mayReference(): boolean {
  return heldTokens < MAX_REFERENCED_TOKENS;
}

/**
 * Counts `tokens` waiting in `owner` until {@link releaseHeld}. Past
 * {@link MAX_WAITING_TOKENS} held tokens in all, the oldest holders are
 * compacted in slices after the current turn of the event loop.
 */
export function holdForCompaction(owner: Compactable, tokens: number): HeldSlot {
  const slot: HeldSlot = { ref: new WeakRef(owner), tokens };
  held.add(slot.ref);
  collected.register(owner, slot, slot);
  heldTokens += tokens;
  if (heldTokens > MAX_WAITING_TOKENS) scheduleSlices();
  return slot;
}

/** Stops counting a holder (compacted, or its lists replaced). */
export function releaseHeld(slot: HeldSlot): void {
  collected.unregister(slot);
  if (held.delete(slot.ref)) heldTokens -= slot.tokens;
}
