// Logprobs waiting to be compacted (the SDK's objects until their rollout's
// end, copies until first written), counted: past a cap, the oldest that are
// still in use are compacted in slices so that a long rollout, many at once,
// or trajectories kept unwritten, keep a bounded number of tokens in a larger
// form than the compact one.
//
// Only holders that outlived a full garbage collection are compacted. V8
// clears weak references only in its full collections, and keeps their
// targets through the young generation's: a holder met before one has run may
// belong to a trajectory nobody keeps (a filtered rollout, a benchmark's), and
// compacting it would hash every token of an answer that is about to be freed.

/** What is held: something that compacts itself (a CompactLogprobs). */
export interface Compactable {
  compact(): void;
}

/** How long one slice of compacting may hold the event loop, in ms. */
const SLICE_MS = 1;
/**
 * Tokens (alternatives included) that may wait to be compacted: as the SDK's
 * objects until their rollout's end, as copies until first written or read.
 * Past this, after each full garbage collection, the oldest still in use are
 * compacted in slices: a rollout that runs long, many at once, or
 * trajectories kept unwritten, keep at most this many in a larger form than
 * the compact one.
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

/** How one holder was counted (see {@link holdForCompaction}). */
export interface HeldSlot {
  ref: WeakRef<Compactable>;
  tokens: number;
  /** The count of full collections seen when it was held. */
  epoch: number;
}

/** Holders, oldest first (a Set keeps insertion order), held weakly. */
const held = new Set<HeldSlot>();
let heldTokens = 0;
/** Full garbage collections seen (while something was held). */
let epoch = 0;
let watching = false;
let scheduled = false;

// A fresh object registered here is freed by the next full collection only
// (the young generation's keeps it, as it keeps every weak target): its
// callback counts one. One object per collection, only while holders wait.
const fullCollections = new FinalizationRegistry<undefined>(() => {
  watching = false;
  epoch += 1;
  afterFullCollection();
});

function watch(): void {
  if (watching) return;
  watching = true;
  fullCollections.register({}, undefined);
}

/** Drops the holders the collection freed; compacts if still past the cap. */
function afterFullCollection(): void {
  for (const slot of held) if (slot.ref.deref() === undefined) releaseHeld(slot);
  if (heldTokens > MAX_WAITING_TOKENS) scheduleSlices();
  if (held.size > 0) watch();
}

/**
 * Whether a holder is known to be in use: held two collections back, it was
 * held before the last full collection ran, and that collection kept it.
 */
const outlivedCollection = (slot: HeldSlot) => slot.epoch <= epoch - 2;

function scheduleSlices(): void {
  if (scheduled) return;
  scheduled = true;
  // Unref'd: compacting is worth no wait at exit.
  setImmediate(compactOldest).unref();
}

/**
 * Compacts held logprobs in use, oldest first, for about {@link SLICE_MS},
 * until under the cap; holders younger than the last full collection wait
 * for the next one.
 */
function compactOldest(): void {
  scheduled = false;
  const until = performance.now() + SLICE_MS;
  for (const slot of held) {
    if (heldTokens <= MAX_WAITING_TOKENS || !outlivedCollection(slot)) return;
    const next = slot.ref.deref();
    if (next) next.compact();
    else releaseHeld(slot);
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
 * {@link MAX_WAITING_TOKENS} held tokens in all, the oldest holders still in
 * use after a full garbage collection are compacted in slices.
 */
export function holdForCompaction(owner: Compactable, tokens: number): HeldSlot {
  const slot: HeldSlot = { ref: new WeakRef(owner), tokens, epoch };
  held.add(slot);
  heldTokens += tokens;
  watch();
  return slot;
}

/** Stops counting a holder (compacted, or its lists replaced). */
export function releaseHeld(slot: HeldSlot): void {
  if (held.delete(slot)) heldTokens -= slot.tokens;
}
