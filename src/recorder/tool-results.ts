// Where a tool result belongs: to the history whose assistant turn issued its
// call. A result is held until a later request of that history carries it
// (the wire's content and order then win), or, when none does (the last step
// of a sub-agent, a tool that ends the run), it is appended to that history
// in call order when the rollout ends.
import { isChoice, type MessageOrChoice } from "../trajectory/index.js";

type Msg = Record<string, unknown>;

/** A conversation the recorder appends to: the trajectory's own, or an additional history. */
export interface Conversation {
  messages_and_choices: MessageOrChoice[];
}

/** A tool result as a framework reports it. */
export interface ToolResult {
  tool_call_id: string;
  /** What the model is sent: a string, or content parts. */
  content: string | unknown[];
  /** The tool's name, for log lines only: the wire's tool message has none. */
  name?: string;
}

interface Issued {
  conversation: Conversation;
  /** Rises with every call issued in the rollout: results are appended in call order. */
  order: number;
}

function toolCallIds(turn: MessageOrChoice): string[] {
  const message = (isChoice(turn) ? turn.message : turn) as { tool_calls?: unknown };
  const calls = message.tool_calls;
  if (!Array.isArray(calls) || calls.length === 0) return [];
  const ids: string[] = [];
  for (const c of calls) {
    const id = (c as { id?: unknown } | null)?.id;
    if (typeof id === "string" && id) ids.push(id);
  }
  return ids;
}

/** The tool results of one rollout, routed to the histories that issued their calls. */
export class ToolResults {
  // Made on first use: most rollouts of the hot path never need them.
  #issued: Map<string, Issued> | undefined;
  #pending: Map<Conversation, Map<string, Msg>> | undefined;
  /** Call ids a request of their own history already carried. */
  #answered: Set<string> | undefined;
  /** Results reported before the turn that issued their call was recorded. */
  #early: Map<string, Msg> | undefined;
  #order = 0;

  /** Notes the tool calls of `turn`, just recorded in `conversation`. */
  issued(conversation: Conversation, turn: MessageOrChoice): void {
    const ids = toolCallIds(turn);
    if (ids.length === 0) return;
    this.#issued ??= new Map();
    for (const id of ids) {
      if (this.#issued.has(id)) continue;
      this.#issued.set(id, { conversation, order: this.#order++ });
      const early = this.#early?.get(id);
      if (early) {
        this.#early?.delete(id);
        this.add(early);
      }
    }
  }

  /** Holds `msg` (a tool message) for the history that issued its call. */
  add(msg: Msg): void {
    const id = msg.tool_call_id as string;
    if (this.#answered?.has(id)) return; // a request already carried it: the wire won
    const issued = this.#issued?.get(id);
    if (!issued) {
      this.#early ??= new Map();
      this.#early.set(id, msg);
      return;
    }
    this.#pending ??= new Map();
    let held = this.#pending.get(issued.conversation);
    if (!held) {
      held = new Map();
      this.#pending.set(issued.conversation, held);
    }
    held.set(id, msg);
  }

  /** `msg`, sent in a request of `conversation`, was appended to it. */
  sent(conversation: Conversation, msg: Msg): void {
    if (msg.role !== "tool" || !this.#issued) return;
    const id = msg.tool_call_id as string;
    if (this.#issued.get(id)?.conversation !== conversation) return;
    this.#answered ??= new Set();
    this.#answered.add(id);
    this.#pending?.get(conversation)?.delete(id);
  }

  /**
   * Takes out the results held for `conversation` that the request which just
   * extended it did not carry: the model never saw them there.
   */
  notCarried(conversation: Conversation): Msg[] {
    const held = this.#pending?.get(conversation);
    if (!held || held.size === 0) return [];
    this.#pending?.delete(conversation);
    return [...held.values()];
  }

  /**
   * Appends every result still held to the history that issued its call, in
   * call order; returns the call ids of results no recorded turn issued.
   */
  flush(): string[] {
    if (this.#pending) {
      for (const [conversation, held] of this.#pending) {
        const order = (m: Msg) => this.#issued?.get(m.tool_call_id as string)?.order ?? 0;
        const results = [...held.values()].sort((a, b) => order(a) - order(b));
        for (const r of results) conversation.messages_and_choices.push(r as never);
      }
      this.#pending = undefined;
    }
    const unknown = this.#early ? [...this.#early.keys()] : [];
    this.#early = undefined;
    return unknown;
  }
}
