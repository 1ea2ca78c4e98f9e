// One SFT row per history branch of a trajectory, each cut before the first
// generation that did not finish: a cut answer, and what the conversation
// built on it, are not what the model should learn to say.
import {
  isChoice,
  type MessageOrChoice,
  type MessageParam,
  toChatMessage,
  toChatMessages,
} from "../trajectory/index.js";

/** One SFT line: a conversation ending with an assistant turn, and the tools it was offered. */
export type SftRow = { messages: MessageParam[]; tools?: unknown[] };

/** The parts of a trajectory (a `Trajectory` or its wire JSON) rows are made from. */
export type SftSource = {
  messages_and_choices: readonly unknown[];
  tools?: readonly unknown[] | null;
  additional_histories?: readonly {
    messages_and_choices: readonly unknown[];
    tools?: readonly unknown[] | null;
  }[];
  logs?: readonly string[];
};

/** What one trajectory gave: its rows, and how many histories were cut or gave none. */
export type TrajectoryRows = {
  rows: SftRow[];
  /** Histories cut before a generation that errored, was cut off or was interrupted. */
  failedGenerations: number;
  /** Histories with no assistant turn at all (so no row), apart from those cut. */
  noAssistantTurn: number;
};

// The recorder's and the store's words for a generation kept as a plain
// message because it did not finish (src/recorder/rollout-state.ts,
// src/store/interrupted.ts).
const FAILED_KEPT = /^completion .*\b(incomplete|aborted|error)\b.*kept as a plain message/;
const INTERRUPTED_KEPT = /^call \d+ was interrupted: .*as far as it arrived/;

/** Whether the logs say a generation that did not finish was kept as a plain message. */
export function logsNameFailedGeneration(logs: readonly string[] | undefined): boolean {
  return (logs ?? []).some((line) => FAILED_KEPT.test(line) || INTERRUPTED_KEPT.test(line));
}

const textOf = (m: { content?: unknown; tool_calls?: unknown }) =>
  JSON.stringify([m.content ?? "", m.tool_calls ?? []]);

const isAssistant = (item: unknown): item is { role: string } =>
  typeof item === "object" &&
  item !== null &&
  !isChoice(item as MessageOrChoice) &&
  (item as { role?: unknown }).role === "assistant";

/**
 * Which plain assistant messages stand for a generation that did not finish.
 * A Choice cut at the token limit is one; so is a copy of it (a later branch
 * carries earlier turns as plain context). When the logs say a failed or
 * interrupted call was kept, every plain assistant message that is no
 * finished Choice's copy is taken as one: the record does not say which.
 */
function unfinishedTest(t: SftSource): (item: unknown) => boolean {
  const finished = new Set<string>();
  const cut = new Set<string>();
  const histories = [
    t.messages_and_choices,
    ...(t.additional_histories ?? []).map((h) => h.messages_and_choices),
  ];
  for (const items of histories)
    for (const item of items) {
      if (!isChoice(item as MessageOrChoice)) continue;
      const choice = item as { finish_reason?: string | null };
      const key = textOf(toChatMessage(item as MessageOrChoice) as { content?: unknown });
      (choice.finish_reason === "length" ? cut : finished).add(key);
    }
  const failed = logsNameFailedGeneration(t.logs);
  return (item) => {
    if (isChoice(item as MessageOrChoice))
      return (item as { finish_reason?: string | null }).finish_reason === "length";
    if (!isAssistant(item)) return false;
    const key = textOf(item as { content?: unknown });
    return cut.has(key) || (failed && !finished.has(key));
  };
}

/**
 * The SFT rows of one trajectory: one per history (the main one, then each
 * additional history, with its own tools), cut before the first generation
 * that did not finish and ending at the last assistant turn before it.
 *
 * @example
 * const { rows } = sftRowsOfTrajectory(stored.trajectory);
 */
export function sftRowsOfTrajectory(t: SftSource): TrajectoryRows {
  const unfinished = unfinishedTest(t);
  const out: TrajectoryRows = { rows: [], failedGenerations: 0, noAssistantTurn: 0 };
  const histories = [
    { items: t.messages_and_choices, tools: t.tools },
    ...(t.additional_histories ?? []).map((h) => ({
      items: h.messages_and_choices,
      tools: h.tools,
    })),
  ];
  for (const { items, tools } of histories) {
    const at = items.findIndex(unfinished);
    if (at !== -1) out.failedGenerations += 1;
    const kept = (at === -1 ? items : items.slice(0, at)) as MessageOrChoice[];
    const messages = toChatMessages(kept);
    let end = messages.length;
    while (end > 0 && messages[end - 1]?.role !== "assistant") end--;
    if (end === 0) {
      // A history cut to nothing is counted once, as cut.
      if (at === -1) out.noAssistantTurn += 1;
      continue;
    }
    const row: SftRow = { messages: messages.slice(0, end) };
    if (tools && tools.length > 0) row.tools = [...tools];
    out.rows.push(row);
  }
  return out;
}
