// A call the process died in: its trajectory keeps it as far as it got, as
// context (a plain assistant message, never a Choice, so never trained on).
import type { MessageOrChoiceWire, TrajectoryWire } from "../wire/index.js";
import type { CallRecord, ProgressRecord, PutRecord } from "./records.js";

/** A trajectory with nothing in it yet, with ART's defaults. */
export function emptyTrajectory(): TrajectoryWire {
  return {
    messages_and_choices: [],
    tools: null,
    additional_histories: [],
    reward: 0,
    initial_policy_version: null,
    final_policy_version: null,
    metrics: {},
    metadata: {},
    logs: [],
  };
}

/**
 * `trajectory` with the interrupted call added: the request's messages
 * beyond those the trajectory already holds (counted, as one conversation
 * grows), the answer as far as it arrived, and a line in `logs`.
 */
export function keepInterruptedCall(
  trajectory: TrajectoryWire | undefined,
  call: CallRecord,
  progress: ProgressRecord | undefined,
): TrajectoryWire {
  const base = trajectory ?? emptyTrajectory();
  const held = base.messages_and_choices.length;
  const added = call.request.messages.slice(
    Math.max(0, held - (call.skipped ?? 0)),
  ) as MessageOrChoiceWire[];
  const partial = progress?.partial;
  const answer: Record<string, unknown> | undefined =
    partial && (partial.content || partial.reasoning || partial.tool_calls?.length)
      ? {
          role: "assistant",
          content: partial.content,
          ...(partial.reasoning ? { reasoning_content: partial.reasoning } : {}),
          ...(partial.tool_calls?.length ? { tool_calls: partial.tool_calls } : {}),
        }
      : undefined;
  const got = answer
    ? `its answer as far as it arrived (${partial?.content.length ?? 0} characters) is kept as a plain assistant message, not trained on`
    : "no answer had arrived";
  return {
    ...base,
    tools: base.tools ?? ((call.request.tools as TrajectoryWire["tools"]) || null),
    messages_and_choices: [
      ...base.messages_and_choices,
      ...added,
      ...(answer ? [answer as MessageOrChoiceWire] : []),
    ],
    logs: [
      ...base.logs,
      `call ${call.call} was interrupted: the process stopped mid-call; it is kept as far as it got (${got}).`,
    ],
  };
}

/**
 * The state a store writes for trajectory `id` when its call `call` was cut:
 * `prior` (the latest state, if any) with the call kept as far as it got.
 * Both stores write it on recovery, so both name the cut the same way.
 */
export function interruptedRecord(
  id: string,
  prior: PutRecord | undefined,
  call: CallRecord,
  progress: ProgressRecord | undefined,
): PutRecord {
  return {
    k: "put",
    id,
    session: prior?.session ?? call.session,
    status: prior?.status ?? "open",
    calls: call.call,
    model: prior?.model ?? call.request.model ?? null,
    ...(prior?.metadata ? { metadata: prior.metadata } : {}),
    interrupted: true,
    created_at: prior?.created_at ?? call.at,
    updated_at: Math.max(prior?.updated_at ?? 0, progress?.at ?? call.at),
    trajectory: keepInterruptedCall(prior?.trajectory, call, progress),
  };
}
