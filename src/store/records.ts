// The records of the store's log: one JSON object per line, told apart by
// `k`. Times are ms since the epoch. Replaying them in order (segment number,
// then position) rebuilds the store; every kind may appear twice (a
// compaction killed before it deleted its source), which replay absorbs.
import type { TrajectoryWire } from "../wire/index.js";
import type { FeedbackRecord } from "./feedback.js";

/** A trajectory's full state: the latest one wins. */
export type PutRecord = {
  k: "put";
  id: string;
  session: string | null;
  status: "open" | "finished";
  calls: number;
  model: string | null;
  metadata?: Record<string, unknown>;
  interrupted?: true;
  created_at: number;
  updated_at: number;
  trajectory: TrajectoryWire;
};

/**
 * What a trajectory gained since its latest put or append (written while it
 * is open, so a call costs its own bytes, not the whole state's). Applies only
 * on top of a state whose lengths are `from`: `main` is pushed onto
 * `messages_and_choices`, each `histories[i].items` onto additional history
 * `index` (a new one, at the end, when `index` is past `from.histories`),
 * with its `tools` when given; `fields` replace every other key.
 */
export type AppendRecord = {
  k: "append";
  id: string;
  session: string | null;
  status: "open";
  calls: number;
  model: string | null;
  metadata?: Record<string, unknown>;
  updated_at: number;
  from: { main: number; histories: number[] };
  main: unknown[];
  histories: { index: number; items: unknown[]; tools?: unknown[] | null }[];
  fields: Record<string, unknown>;
};

/** A call begun: its request, kept until a put with `calls >= call` covers it. */
export type CallRecord = {
  k: "call";
  id: string;
  call: number;
  session: string | null;
  at: number;
  /** How many of the request's first messages were left out: the trajectory held them. */
  skipped?: number;
  request: { model?: string; messages: unknown[]; tools?: unknown[] | null };
};

/** How far a begun call's answer got: the latest one for the call wins. */
export type ProgressRecord = {
  k: "progress";
  id: string;
  call: number;
  at: number;
  partial: { content: string; reasoning?: string; tool_calls?: unknown[] };
};

/** One feedback; replay keeps each `feedback_id` once. */
export type FeedbackLogRecord = { k: "feedback"; id: string; at: number; feedback: FeedbackRecord };

/** A trajectory dropped by the bounds: what came before it for this id is gone. */
export type DropRecord = { k: "drop"; id: string; at: number; reason: "age" | "size" };

/** How many trajectories the bounds dropped, ever (the largest value read wins). */
export type MetaRecord = { k: "meta"; dropped: number };

export type LogRecord =
  | PutRecord
  | AppendRecord
  | CallRecord
  | ProgressRecord
  | FeedbackLogRecord
  | DropRecord
  | MetaRecord;

/** Where a record lies: its segment's number, byte offset and length (newline included). */
export type Location = { seg: number; off: number; len: number };
