// Which recorded states are replayed: negative feedback first (newest first,
// as the store lists them), then a seeded sample of the rest.
import type { TrajectorySummary } from "../store/index.js";
import type { ReplaySelect, ReplayStoreReader } from "./types.js";

/**
 * The defaults of {@link ReplaySelect}: how many states, the reward at or
 * below which feedback is negative, and the sample's seed.
 *
 * @example
 * replayGroups({ store, model, judge, select: { limit: REPLAY_SELECT_DEFAULTS.limit * 4 } });
 */
export const REPLAY_SELECT_DEFAULTS = { limit: 8, negativeAtMost: 0, seed: 1 } as const;

/** A chosen trajectory, and whether negative feedback chose it. */
export type Chosen = { summary: TrajectorySummary; negative: boolean };

/**
 * The trajectories to replay, in order. Trajectories marked not eligible for
 * training (`eligible: false` from feedback) are never chosen: that is the
 * application saying "do not learn from this conversation".
 */
export function chooseStates(
  store: ReplayStoreReader,
  select: ReplaySelect = {},
): { chosen: Chosen[]; missing: string[] } {
  const limit = select.limit ?? select.ids?.length ?? REPLAY_SELECT_DEFAULTS.limit;
  const atMost = select.negativeAtMost ?? REPLAY_SELECT_DEFAULTS.negativeAtMost;
  const all = store
    .list({ since: select.since, until: select.until })
    .filter((s) => s.eligible !== false && s.calls > 0);
  const isNegative = (s: TrajectorySummary) => s.reward !== null && s.reward <= atMost;
  if (select.ids !== undefined) {
    const byId = new Map(all.map((s) => [s.id, s]));
    const ids = select.ids.slice(0, limit);
    return {
      chosen: ids.flatMap((id) => {
        const s = byId.get(id);
        return s ? [{ summary: s, negative: isNegative(s) }] : [];
      }),
      missing: ids.filter((id) => !byId.has(id)),
    };
  }
  const negative = all.filter(isNegative);
  const rest = shuffled(
    all.filter((s) => !isNegative(s)),
    select.seed ?? REPLAY_SELECT_DEFAULTS.seed,
  );
  const chosen = [
    ...negative.map((summary) => ({ summary, negative: true })),
    ...rest.map((summary) => ({ summary, negative: false })),
  ].slice(0, limit);
  return { chosen, missing: [] };
}

/** Fisher-Yates with a seeded generator: the same seed and list give the same order. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const next = mulberry32(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
