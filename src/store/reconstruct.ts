// Reading a trajectory's state back: its latest put, with the appends
// written after it applied in order. The same function serves `get`, the
// recovery of an interrupted call and compaction (which writes the result as
// one put).
import type { HistoryWire, MessageOrChoiceWire } from "../wire/index.js";
import type { AppendRecord, PutRecord } from "./records.js";

/** How many items the state's main history and each additional history hold. */
export type Lengths = { main: number; histories: number[] };

/** The lengths of a put's trajectory. */
export function lengthsOf(put: PutRecord): Lengths {
  const t = put.trajectory;
  return {
    main: t.messages_and_choices?.length ?? 0,
    histories: (t.additional_histories ?? []).map((h) => h.messages_and_choices?.length ?? 0),
  };
}

/** Whether an append continues a state of lengths `at` (it was written on top of it). */
export function continues(at: Lengths, from: Lengths): boolean {
  if (at.main !== from.main || at.histories.length !== from.histories.length) return false;
  return at.histories.every((n, i) => n === from.histories[i]);
}

/** The lengths after `append` is applied to a state of lengths `at`. */
export function lengthsAfter(at: Lengths, append: AppendRecord): Lengths {
  const histories = [...at.histories];
  for (const h of append.histories) histories[h.index] = (histories[h.index] ?? 0) + h.items.length;
  return { main: at.main + append.main.length, histories };
}

/**
 * `put` (freshly parsed: it is changed in place) with `append` applied: the
 * state as the recorder held it when it wrote the append.
 */
export function applyAppend(put: PutRecord, append: AppendRecord): PutRecord {
  const t = put.trajectory;
  t.messages_and_choices.push(...(append.main as MessageOrChoiceWire[]));
  for (const h of append.histories) {
    let history = t.additional_histories[h.index];
    if (!history) {
      history = { messages_and_choices: [], tools: null } as HistoryWire;
      t.additional_histories[h.index] = history;
    }
    history.messages_and_choices.push(...(h.items as MessageOrChoiceWire[]));
    if (h.tools !== undefined) history.tools = h.tools as HistoryWire["tools"];
  }
  // Assigned over the put's keys: the order stays the put's (ART's).
  Object.assign(t, append.fields);
  put.session = append.session;
  put.status = append.status;
  put.calls = append.calls;
  put.model = append.model;
  if (append.metadata) put.metadata = append.metadata;
  else delete put.metadata;
  put.updated_at = Math.max(put.updated_at, append.updated_at);
  return put;
}
