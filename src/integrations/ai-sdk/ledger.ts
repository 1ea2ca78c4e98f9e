// Which tool calls of a rollout got their result recorded. A result reaches
// the recorder through a later request (the model was sent it) or through the
// telemetry hook or ai 7's tracing channel (tools run after the last model
// call). Where none exists (ai 5, a Mastra agent.stream(), a tool without
// `execute`, telemetry turned off), the rollout's end says so instead of
// losing it silently.
import type { ActiveRollout, RecordedChoice, RecordedCompletion } from "../../recorder/index.js";

interface Ledger {
  /** Call id → tool name, for calls no result was recorded for yet. */
  open: Map<string, string>;
  /** Ids whose result came before (or without) the call's record. */
  answered: Set<string>;
}

const ledgers = new WeakMap<ActiveRollout, Ledger>();

function ledgerOf(rollout: ActiveRollout): Ledger {
  let ledger = ledgers.get(rollout);
  if (!ledger) {
    const made: Ledger = { open: new Map(), answered: new Set() };
    ledger = made;
    ledgers.set(rollout, made);
    rollout.onEnd?.(() => reportUnanswered(rollout, made));
  }
  return ledger;
}

function reportUnanswered(rollout: ActiveRollout, ledger: Ledger): void {
  if (ledger.open.size === 0) return;
  const calls = [...ledger.open].map(([id, name]) => `${name} (${id})`).join(", ");
  rollout.log(
    `ai-sdk: no result was recorded for tool call(s) ${calls}: the tools ran after the last model call (or never ran) and nothing reported them. A Mastra agent.stream(), ai 5, a tool without execute, or recorderMiddleware({ registerTelemetry: false }) leaves them unreported.`,
  );
}

/** Notes the tool calls of recorded Choices (or plain assistant turns). */
export function noteIssued(
  rollout: ActiveRollout,
  choices: ReadonlyArray<Pick<RecordedChoice, "message">>,
): void {
  for (const choice of choices) {
    const calls = choice.message?.tool_calls;
    if (!calls?.length) continue;
    const ledger = ledgerOf(rollout);
    for (const call of calls) {
      if (ledger.answered.has(call.id)) continue;
      const name = (call as { function?: { name?: string } }).function?.name ?? "tool";
      ledger.open.set(call.id, name);
    }
  }
}

/** Notes tool call ids whose result was recorded. */
export function noteAnswered(rollout: ActiveRollout, ids: Iterable<string>): void {
  const ledger = ledgers.get(rollout);
  for (const id of ids) {
    if (ledger?.open.delete(id)) continue;
    ledgerOf(rollout).answered.add(id);
  }
}

/** The tool call ids a request's messages answer. */
export function answeredIn(messages: ReadonlyArray<unknown>): string[] {
  const ids: string[] = [];
  for (const m of messages) {
    const msg = m as { role?: string; tool_call_id?: unknown };
    if (msg?.role === "tool" && typeof msg.tool_call_id === "string") ids.push(msg.tool_call_id);
  }
  return ids;
}

/** Notes what a recorded call answered (its request's tool messages) and issued (its tool calls). */
export function noteCall(rollout: ActiveRollout, call: RecordedCompletion): void {
  noteAnswered(rollout, answeredIn(call.request.messages));
  noteIssued(rollout, call.choices);
}
