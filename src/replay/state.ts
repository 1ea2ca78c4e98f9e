// A stored trajectory as a state to replay: its conversation before its last
// assistant turn (the answer the feedback judged), with its tools.
import type { StoredTrajectory } from "../store/index.js";
import { isChoice, type MessageOrChoice, toChatMessages } from "../trajectory/index.js";
import type { ReplayState } from "./types.js";

/** The state, or undefined when the trajectory holds no assistant turn to replay. */
export function stateOf(stored: StoredTrajectory, negative: boolean): ReplayState | undefined {
  const items = stored.trajectory.messages_and_choices as unknown as MessageOrChoice[];
  let turn = -1;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as MessageOrChoice;
    if (isChoice(item) || (item as { role?: unknown }).role === "assistant") {
      turn = i;
      break;
    }
  }
  // A turn with nothing before it has no request to send again.
  if (turn < 1) return undefined;
  const tools = stored.trajectory.tools;
  return {
    trajectoryId: stored.id,
    session: stored.session,
    turn,
    messages: toChatMessages(items.slice(0, turn)),
    tools: Array.isArray(tools) && tools.length > 0 ? [...tools] : null,
    reward: stored.reward,
    negative,
  };
}
