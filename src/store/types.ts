// The store's public shapes: its options, what it takes and what it returns.
import type { MessageOrChoiceWire, TrajectoryWire } from "../wire/index.js";
import type { FeedbackInput, FeedbackRecord } from "./feedback.js";

/** Where the store reports what it drops and what it recovered. */
export type StoreLogger = { warn(message: string): void; info?(message: string): void };

/** The options of {@link TrajectoryStore.open}. */
export type TrajectoryStoreOptions = {
  /** The store's directory, created when missing. One process writes it at a time (a `LOCK` file). */
  dir: string;
  /**
   * The most bytes its segment files may take together; past it, old records
   * are compacted and, when that is not enough, trajectories dropped (oldest
   * unrewarded first, then oldest). Default 1 GiB.
   */
  maxBytes?: number;
  /** How long a trajectory is kept after its last write or feedback, in ms. Default 30 days. */
  maxAgeMs?: number;
  /** The size at which a new segment file is started. Default 64 MiB. */
  segmentBytes?: number;
  /**
   * `"never"` (default): a write that returned survives the death of the
   * process (it is in the kernel's page cache), not a power cut until
   * `flush()` or `close()` (which fsync). `"always"`: every write is fsynced
   * before it returns (survives a power cut; costs a disk flush per write).
   */
  fsync?: "always" | "never";
  /** Receives a line for every drop and every recovery. Default: `console.warn`. */
  logger?: StoreLogger;
};

/** What `put` records: a trajectory's full current state. */
export type StoreEntry = {
  /** The trajectory's id (what receipts and feedback name). */
  id: string;
  /** The session it belongs to, or null. */
  session: string | null;
  status: "open" | "finished";
  /** The trajectory as ART dumps it. */
  trajectory: TrajectoryWire;
  /** How many calls it holds; a begun call with a number up to this is complete. */
  calls: number;
  model?: string | null;
  /** The caller's own data, kept with this state (not merged with earlier puts'). */
  metadata?: Record<string, unknown>;
};

/**
 * What `append` records: only what an open trajectory gained since the
 * latest `put` or `append` of it. Its histories grew by pushing: `main` holds
 * the items pushed onto `messages_and_choices`, each of `histories` those
 * pushed onto additional history `index` (one past the last: a new history),
 * with its `tools` when they were set; `fields` holds every other key of the
 * trajectory (`tools`, `reward`, `metrics`, `metadata`, `logs`, ...), which
 * replace the stored ones. `from` is the lengths the writer saw written.
 */
export type StoreAppend = {
  id: string;
  session: string | null;
  status: "open";
  calls: number;
  model?: string | null;
  metadata?: Record<string, unknown>;
  /** How many items the histories held after the write this one continues. */
  from: { main: number; histories: number[] };
  main: MessageOrChoiceWire[];
  histories: { index: number; items: MessageOrChoiceWire[]; tools?: unknown[] | null }[];
  fields: Omit<TrajectoryWire, "messages_and_choices" | "additional_histories">;
};

/** A begun call's request, as `beginCall` takes it. */
export type CallRequest = { model?: string; messages: unknown[]; tools?: unknown[] | null };
/** How far a call's answer has arrived, as `progressCall` takes it. */
export type CallProgress = { content: string; reasoning?: string; tool_calls?: unknown[] };

/** A stored trajectory's summary, as `list` returns it. */
export type TrajectorySummary = {
  id: string;
  session: string | null;
  status: "open" | "finished";
  /** When it was first stored, ISO 8601. */
  created_at: string;
  /** When it was last stored or given feedback, ISO 8601. */
  updated_at: string;
  calls: number;
  model: string | null;
  /** The reward its feedback gives (see `aggregateFeedback`), or null before any. */
  reward: number | null;
  /** Whether it may be trained on; null until it has a reward or a feedback says. */
  eligible: boolean | null;
  /** True when a call was cut by the process stopping (kept as far as it got; see its `logs`). */
  interrupted: boolean;
  /** How many feedbacks it has. */
  feedback: number;
  /** The size of its latest stored state, in bytes. */
  bytes: number;
};

/** A stored trajectory with its feedback, as `get` returns it. */
export type StoredTrajectory = Omit<TrajectorySummary, "feedback" | "bytes"> & {
  /** The trajectory with its feedback applied: `reward` and `metrics`. */
  trajectory: TrajectoryWire;
  /** Its feedback, oldest first. */
  feedback: FeedbackRecord[];
  metadata: Record<string, unknown> | null;
};

/** Which trajectories `list` returns; every condition must hold. */
export type ListFilter = {
  session?: string;
  /** Last written (or given feedback) at or after this time. */
  since?: Date | number;
  /** Last written (or given feedback) before this time. */
  until?: Date | number;
  eligible?: boolean;
  /** True: only those with a reward from feedback; false: only those without. */
  rewarded?: boolean;
  /** At most this many, newest first. */
  limit?: number;
};

/** The store's size and what its bounds dropped. */
export type StoreStats = {
  trajectories: number;
  /** The bytes of its segment files. */
  bytes: number;
  segments: number;
  /** Trajectories dropped by the size and age bounds since the store was created. */
  dropped: number;
};

/** A value, or a promise of it: what a store that may live across the network returns. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * What the proxy and the recorder need of a store of production trajectories,
 * met by the embedded {@link TrajectoryStore} on disk (whose methods return at
 * once) and by `RedisTrajectoryStore` of `trajectory-recorder/bullmq` (whose
 * methods return promises). Callers `await` every method, so either fits; a
 * store of your own fits too when it keeps the same rules (feedback
 * idempotency, 404 for an unknown id, bounds that log and count what they drop).
 *
 * @example
 * async function rewardLatest(store: ProductionStore) {
 *   const [latest] = await store.list({ rewarded: false, limit: 1 });
 *   if (latest) await store.addFeedback({ trajectory_id: latest.id, reward: 1 });
 * }
 */
export interface ProductionStore {
  /** Records a trajectory's full current state. */
  put(entry: StoreEntry): MaybePromise<void>;
  /** Records what an open trajectory gained; false when it does not continue the stored state (then `put`). */
  append(entry: StoreAppend): MaybePromise<boolean>;
  /** Records that a call began, so that a process stopped mid-call keeps it as far as it got. */
  beginCall(
    id: string,
    call: number,
    request: CallRequest,
    options?: { session?: string | null },
  ): MaybePromise<void>;
  /** Records how far a begun call's answer has arrived. */
  progressCall(id: string, call: number, partial: CallProgress): MaybePromise<void>;
  /** Adds feedback (idempotent by `idempotency_key`; 404 and 409 errors as `TrajectoryStore.addFeedback`). */
  addFeedback(input: FeedbackInput): MaybePromise<{ feedback: FeedbackRecord; created: boolean }>;
  /** The stored trajectory with its feedback applied, or undefined. */
  get(id: string): MaybePromise<StoredTrajectory | undefined>;
  /** Whether a trajectory is stored under `id`. */
  has(id: string): MaybePromise<boolean>;
  /** Summaries of the stored trajectories that match, the most recently written first. */
  list(filter?: ListFilter): MaybePromise<TrajectorySummary[]>;
  /** The sessions of the stored trajectories, the most recently written first. */
  sessions(): MaybePromise<{ session: string; trajectories: string[]; updated_at: string }[]>;
  /** How many trajectories it holds and how many its bounds dropped. */
  stats(): MaybePromise<StoreStats>;
  /** Releases what the store holds (files, connections). */
  close(): Promise<void>;
  /**
   * The secret signed feedback URLs are made with, kept by the store so that
   * URLs outlive a restart and work on every proxy sharing it. Optional: the
   * proxy keeps it in the store's `dir` when there is one.
   */
  feedbackSecret?(): MaybePromise<string>;
  /** The store's directory, for a store on disk. */
  readonly dir?: string;
}
