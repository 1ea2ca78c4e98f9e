// SFT from the best: the trajectories of a store (or of logged groups) that
// feedback rated well, as deduplicated SFT rows ready for `trainSft`.
import type { TrajectoryStore } from "../store/index.js";
import { InvalidArgumentError } from "../util/index.js";
import { type SftRow, type SftSource, sftRowsOfTrajectory } from "./sft-rows.js";

/** A metadata value a filter compares with. */
export type SftMetadataValue = string | number | boolean | null;

/** Which trajectories become SFT rows; every condition given must hold. */
export type SftFilter = {
  /** Keep those whose reward (from feedback, else as recorded) is at least this. */
  minReward?: number;
  /**
   * True: only trajectories eligible for training (rewarded, or a feedback
   * said `eligible: true`). Those a feedback marked `eligible: false` are
   * always left out. Store only.
   */
  eligible?: boolean;
  /** Last written or given feedback at or after this time. Store only. */
  since?: Date | number;
  /** Last written or given feedback before this time. Store only. */
  until?: Date | number;
  /**
   * The model that served the trajectory: this exact name, or, given without
   * a `:stepN` suffix, any checkpoint of it (`…/agent` matches `…/agent:step5`). Store only.
   */
  model?: string;
  /**
   * Metadata each selected trajectory must hold: every key with the value
   * given (a string also matches a number or boolean written the same way,
   * so `"3"` matches `3`).
   */
  metadata?: Record<string, SftMetadataValue>;
};

/** How many trajectories and rows each step kept or left out. */
export type SftSelectionCounts = {
  /** Trajectories looked at (in the store: all of them). */
  considered: number;
  /** Trajectories every filter kept. */
  selected: number;
  /** Rows returned (after deduplication). */
  rows: number;
  /** Identical rows left out (the first is kept). */
  duplicates: number;
  /** What was left out, by reason: trajectories by filter, histories by what cut them. */
  dropped: {
    /** Trajectories outside `since`/`until`. */
    window: number;
    /** Trajectories a feedback marked not eligible, or (with `eligible: true`) not yet eligible. */
    ineligible: number;
    /** Trajectories with a reward below `minReward`. */
    reward: number;
    /** Trajectories of another model. */
    model: number;
    /** Trajectories whose metadata did not match. */
    metadata: number;
    /** Histories cut before a generation that errored, was cut off or interrupted (shortened or lost). */
    failedGeneration: number;
    /** Histories without any assistant turn (nothing to learn). */
    noAssistantTurn: number;
  };
};

/** The rows and what became of everything else. */
export type SftSelection = {
  /** `{messages, tools?}` rows, as `trainSft` takes them. */
  rows: SftRow[];
  /** The ids of the selected trajectories (store only; empty for logged trajectories). */
  ids: string[];
  counts: SftSelectionCounts;
};

const STORE_ONLY = ["eligible", "since", "until", "model"] as const;

/**
 * SFT rows from the trajectories of a store that `filter` selects: one row
 * per history branch, each cut before a generation that errored, was cut off
 * or interrupted (the turns before it still make a row), tools kept,
 * identical rows once. Oldest first. See docs/production.md, "SFT from the best".
 *
 * @example
 * const store = await TrajectoryStore.open({ dir: "./trajectories" });
 * const { rows, counts } = sftRowsFromStore(store, { minReward: 1, eligible: true });
 * await model.trainSft(rows);
 */
export function sftRowsFromStore(store: TrajectoryStore, filter: SftFilter = {}): SftSelection {
  const call = "sftRowsFromStore";
  checkFilter(call, filter, true);
  const total = store.stats().trajectories;
  const listed = store.list({ since: filter.since, until: filter.until }).reverse();
  const acc = new Accumulator(total);
  acc.counts.dropped.window = total - listed.length;
  for (const summary of listed) {
    if (summary.eligible === false || (filter.eligible === true && summary.eligible !== true)) {
      acc.counts.dropped.ineligible += 1;
      continue;
    }
    if (filter.model !== undefined && !sameModel(summary.model, filter.model)) {
      acc.counts.dropped.model += 1;
      continue;
    }
    const stored = store.get(summary.id);
    if (!stored) continue;
    const metadata = { ...stored.trajectory.metadata, ...(stored.metadata ?? {}) };
    if (acc.take(stored.trajectory, stored.trajectory.reward, metadata, filter))
      acc.ids.push(summary.id);
  }
  return acc.result();
}

/**
 * SFT rows from logged trajectories (`Trajectory` objects or their JSON, as
 * the groups of a JSONL file hold them), by `minReward` and `metadata`: the
 * same rows as {@link sftRowsFromStore} makes.
 *
 * @example
 * const trajectories = groups.flatMap((g) => g.trajectories);
 * const { rows } = sftRowsFromTrajectories(trajectories, { minReward: 0.8 });
 */
export function sftRowsFromTrajectories(
  trajectories: readonly (SftSource & { reward?: number; metadata?: Record<string, unknown> })[],
  filter: Pick<SftFilter, "minReward" | "metadata"> = {},
): SftSelection {
  const call = "sftRowsFromTrajectories";
  if (!Array.isArray(trajectories))
    throw new InvalidArgumentError(call, "trajectories", "an array of trajectories", trajectories);
  checkFilter(call, filter, false);
  const acc = new Accumulator(trajectories.length);
  trajectories.forEach((t, i) => {
    if (!t || typeof t !== "object" || !Array.isArray(t.messages_and_choices))
      throw new InvalidArgumentError(call, `trajectories[${i}]`, "a trajectory", t);
    acc.take(t, t.reward ?? 0, t.metadata ?? {}, filter);
  });
  return acc.result();
}

/** Rows and counts as trajectories are taken, identical rows once. */
class Accumulator {
  readonly rows: SftRow[] = [];
  readonly ids: string[] = [];
  readonly seen = new Set<string>();
  readonly counts: SftSelectionCounts;

  constructor(considered: number) {
    this.counts = {
      considered,
      selected: 0,
      rows: 0,
      duplicates: 0,
      dropped: {
        window: 0,
        ineligible: 0,
        reward: 0,
        model: 0,
        metadata: 0,
        failedGeneration: 0,
        noAssistantTurn: 0,
      },
    };
  }

  /** Adds the trajectory's rows when the reward and metadata filters keep it; says whether they did. */
  take(
    t: SftSource,
    reward: number,
    metadata: Record<string, unknown>,
    filter: SftFilter,
  ): boolean {
    const dropped = this.counts.dropped;
    if (filter.minReward !== undefined && !(reward >= filter.minReward)) {
      dropped.reward += 1;
      return false;
    }
    if (filter.metadata && !matches(metadata, filter.metadata)) {
      dropped.metadata += 1;
      return false;
    }
    this.counts.selected += 1;
    const made = sftRowsOfTrajectory(t);
    dropped.failedGeneration += made.failedGenerations;
    dropped.noAssistantTurn += made.noAssistantTurn;
    for (const row of made.rows) {
      const key = canonical(row);
      if (this.seen.has(key)) {
        this.counts.duplicates += 1;
        continue;
      }
      this.seen.add(key);
      this.rows.push(row);
    }
    return true;
  }

  result(): SftSelection {
    this.counts.rows = this.rows.length;
    return { rows: this.rows, ids: this.ids, counts: this.counts };
  }
}

function sameModel(model: string | null, wanted: string): boolean {
  if (model === null) return false;
  if (model === wanted) return true;
  return !/:step\d+$/.test(wanted) && model.startsWith(`${wanted}:step`);
}

function matches(metadata: Record<string, unknown>, wanted: Record<string, SftMetadataValue>) {
  return Object.entries(wanted).every(([key, value]) => {
    if (!Object.hasOwn(metadata, key)) return false;
    const actual = metadata[key];
    if (actual === value) return true;
    return (
      typeof value === "string" &&
      (typeof actual === "number" || typeof actual === "boolean") &&
      String(actual) === value
    );
  });
}

/** JSON with object keys sorted: rows that differ only in key order are the same row. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

function checkFilter(call: string, filter: SftFilter, store: boolean): void {
  if (filter === null || typeof filter !== "object")
    throw new InvalidArgumentError(call, "filter", "an object", filter);
  if (filter.minReward !== undefined && !Number.isFinite(filter.minReward))
    throw new InvalidArgumentError(call, "filter.minReward", "a finite number", filter.minReward);
  if (filter.eligible !== undefined && typeof filter.eligible !== "boolean")
    throw new InvalidArgumentError(call, "filter.eligible", "a boolean", filter.eligible);
  for (const name of ["since", "until"] as const) {
    const v = filter[name];
    const ms = v instanceof Date ? v.getTime() : v;
    if (v !== undefined && !(typeof ms === "number" && Number.isFinite(ms)))
      throw new InvalidArgumentError(
        call,
        `filter.${name}`,
        "a valid Date or epoch milliseconds",
        v,
      );
  }
  if (filter.model !== undefined && (typeof filter.model !== "string" || filter.model === ""))
    throw new InvalidArgumentError(call, "filter.model", "a non-empty string", filter.model);
  if (filter.metadata !== undefined) {
    if (filter.metadata === null || typeof filter.metadata !== "object")
      throw new InvalidArgumentError(call, "filter.metadata", "an object", filter.metadata);
    for (const [key, value] of Object.entries(filter.metadata))
      if (value !== null && !["string", "number", "boolean"].includes(typeof value))
        throw new InvalidArgumentError(
          call,
          `filter.metadata.${key}`,
          "a string, number, boolean or null",
          value,
        );
  }
  if (!store)
    for (const name of STORE_ONLY)
      if (filter[name] !== undefined)
        throw new InvalidArgumentError(
          call,
          `filter.${name}`,
          "nothing: logged trajectories carry no store record to filter by (use sftRowsFromStore)",
          filter[name],
        );
}
