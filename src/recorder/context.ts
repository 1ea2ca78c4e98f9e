import { AsyncLocalStorage } from "node:async_hooks";
import type {
  ChatCompletion,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import {
  History,
  isChoice,
  type MessageOrChoice,
  type Trajectory,
  toChatMessage,
} from "../trajectory/index.js";
import { copyJson } from "../util/copy-json.js";
import { errorMessage } from "../util/error-message.js";
import { traceCompletion } from "./spans.js";

/** Options a rollout records with. */
export interface RolloutOptions {
  /** Ask for `logprobs: true` on every call inside the rollout. Default `true`. */
  logprobs: boolean;
  /**
   * Ask for `return_token_ids: true` and `return_tokens_as_token_ids: true` on
   * every call inside the rollout, as ART does. Default `true`.
   */
  tokenIds: boolean;
  /** Put message content on telemetry spans. Default `false`. */
  recordContent?: boolean;
}

/** A recorded Choice, with the token ids a vLLM-style server returns. */
export type RecordedChoice = ChatCompletion.Choice & {
  token_ids?: number[];
  prompt_token_ids?: number[];
};

/** One completion as the recorder saw it: the request snapshot and the sampled choices. */
export interface RecordedCompletion {
  request: {
    model?: string;
    messages: ChatCompletionMessageParam[];
    tools?: ChatCompletionTool[];
    [k: string]: unknown;
  };
  choices: RecordedChoice[];
  response?: { id?: string; model?: string; usage?: CompletionUsage; prompt_token_ids?: number[] };
  status?: "complete" | "incomplete" | "aborted" | "error";
  error?: unknown;
  streamed?: boolean;
  /**
   * When the call started (ms since the epoch). Framework plugins set it: the
   * rollout then emits the call's GenAI `chat` span from this time to now.
   */
  startTime?: number;
  /** The call already has its span (the wrapped client traces its own calls). */
  traced?: boolean;
}

/** The rollout running in the current async context. */
export interface ActiveRollout {
  readonly trajectory: Trajectory;
  readonly options: RolloutOptions;
  /** The single path every recorded call goes through. */
  recordCompletion(call: RecordedCompletion): void;
  /** Appends a tool message to the conversation unless the next request already carries it. */
  recordToolResult(result: { tool_call_id: string; content: string; name?: string }): void;
  log(message: string): void;
  /** Appends `message` to the trajectory's logs unless this rollout already logged it. */
  logOnce(message: string): void;
  /**
   * Runs `callback` when the rollout's function has returned or thrown, before
   * the trajectory is handed back: a plugin records there what the framework
   * never finished (a stream the caller stopped reading). A callback given
   * after the end never runs. Optional: a rollout of an older copy of this
   * module may lack it.
   */
  onEnd?(callback: () => void): void;
}

// One store per process, shared through a global symbol: the CommonJS builds of
// the root and of each integration subpath carry their own copy of this module
// (and an app may load both the ESM and the CommonJS build), and all of them
// must see the same current rollout and the same count of running rollouts.
const CONTEXT_KEY = Symbol.for("trajectory-recorder.rollout-context");
interface SharedContext {
  storage: AsyncLocalStorage<ActiveRollout>;
  /** Rollouts whose function has not settled yet, across every copy of this module. */
  running: number;
}
const globals = globalThis as { [CONTEXT_KEY]?: SharedContext };
globals[CONTEXT_KEY] ??= { storage: new AsyncLocalStorage<ActiveRollout>(), running: 0 };
const shared: SharedContext = globals[CONTEXT_KEY];

/**
 * The rollout running in the current async context, if any. Work a rollout
 * left running after it ended finds none: what it does next is not part of
 * the trajectory the rollout already returned.
 *
 * @example
 * const r = currentRollout();
 * r?.log("tool failed, retrying");
 */
export function currentRollout(): ActiveRollout | undefined {
  const rollout = shared.storage.getStore();
  return (rollout as { ended?: boolean } | undefined)?.ended ? undefined : rollout;
}

/**
 * Runs `fn` with `rollout` as the current rollout until what it returns
 * settles.
 *
 * The store is switched off again when the last running rollout settles.
 * Where AsyncLocalStorage works through async_hooks (Node 20, and Node 22
 * without `--experimental-async-context-frame`), an enabled store makes every
 * promise in the process run a hook: 45–50 µs per `openai` call on our
 * bench machine. Switched off, code outside rollouts pays none of it.
 */
export async function runInRollout<T>(rollout: ActiveRollout, fn: () => T): Promise<Awaited<T>> {
  shared.running++;
  try {
    return await shared.storage.run(rollout, fn);
  } finally {
    if (--shared.running === 0) shared.storage.disable();
  }
}

type Msg = Record<string, unknown>;

/** Same content, with `null`, `undefined` and `""` all meaning none. */
function sameContent(a: unknown, b: unknown): boolean {
  if (a === b || (!a && !b)) return true;
  if (typeof a === "string" || typeof b === "string") return false;
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

type ToolCalls = Array<{ id: string }> | null | undefined;

/**
 * Whether the recorded `item` is the sent message `b`: the role, then the
 * tool call id(s) where there are some, else the content. A recorded Choice
 * is compared through its message, without building one.
 */
function sameMessage(item: MessageOrChoice, b: Msg): boolean {
  const choice = isChoice(item);
  const a = (choice ? item.message : item) as unknown as Msg;
  if ((choice ? "assistant" : a.role) !== b.role) return false;
  if (b.role === "tool") return a.tool_call_id === b.tool_call_id;
  if (b.role === "assistant") {
    const at = a.tool_calls as ToolCalls;
    const bt = b.tool_calls as ToolCalls;
    const n = at?.length ?? 0;
    if (n !== (bt?.length ?? 0)) return false;
    if (n > 0) {
      for (let i = 0; i < n; i++) if (at?.[i]?.id !== bt?.[i]?.id) return false;
      return true;
    }
  }
  return sameContent(a.content, b.content);
}

/** Whether the recorded items (messages and Choices) are the start of `full`. */
function isPrefix(items: readonly MessageOrChoice[], full: Msg[]): boolean {
  if (items.length > full.length) return false;
  for (let i = 0; i < items.length; i++)
    if (!sameMessage(items[i] as MessageOrChoice, full[i] as Msg)) return false;
  return true;
}

/** How many of the latest additional histories a side conversation may continue. */
const HISTORY_LOOKBACK = 64;

/** A conversation the recorder appends to: the trajectory's own, or an additional history. */
type Conversation = Pick<History, "messages_and_choices" | "tools">;

/**
 * Appends to `conversation` what `sent` adds beyond what it holds (copied: the
 * caller's messages are theirs), then the sampled turn, and keeps the first
 * tools it was offered.
 */
function extend(
  conversation: Conversation,
  sent: Msg[],
  turn: RecordedChoice | MessageOrChoice | undefined,
  tools: ChatCompletionTool[] | null,
): void {
  const items = conversation.messages_and_choices;
  for (let i = items.length; i < sent.length; i++) items.push(copyJson(sent[i]) as never);
  if (turn) items.push(turn as never);
  if (tools && !conversation.tools) conversation.tools = copyJson(tools) as never;
}

/** The most recent additional history that `sent` continues, if any. */
function continuedHistory(histories: History[], sent: Msg[]): History | undefined {
  const stop = Math.max(0, histories.length - HISTORY_LOOKBACK);
  for (let i = histories.length - 1; i >= stop; i--) {
    const h = histories[i] as History;
    if (isPrefix(h.messages_and_choices, sent)) return h;
  }
  return undefined;
}

/** An empty additional history, appended to the trajectory. */
function newHistory(t: Trajectory): History {
  const history = new History();
  t.additional_histories.push(history);
  return history;
}

/** The rollout state behind {@link ActiveRollout}. */
export class RolloutState implements ActiveRollout {
  readonly trajectory: Trajectory;
  readonly options: RolloutOptions;
  // Made on first use: most rollouts never need them, and each rollout's
  // allocations are paid on the hot path.
  #logged: Set<string> | undefined;
  /** Calls made through a wrapped client that have not been recorded yet. */
  #pending: Array<RecordedCompletion["request"] | undefined> | undefined;
  #open = 0;
  #ended = false;
  #onEnd: Array<() => void> | undefined;

  /** Whether the rollout emits spans (a tracer provider was registered when it started). */
  readonly traced: boolean;

  constructor(trajectory: Trajectory, options: RolloutOptions, traced = false) {
    this.trajectory = trajectory;
    this.options = options;
    this.traced = traced;
  }

  log(message: string): void {
    this.trajectory.log(message);
  }

  /**
   * Marks a call as started, until {@link endCall} with the returned slot. A
   * call still open when the rollout ends (a stream never read to its end, a
   * call never awaited) is said in the logs instead of vanishing without a trace.
   */
  startCall(request: RecordedCompletion["request"]): number {
    this.#pending ??= [];
    this.#open++;
    return this.#pending.push(request) - 1;
  }

  /** Marks the call in `slot` (from {@link startCall}) as recorded. */
  endCall(slot: number): void {
    const pending = this.#pending;
    if (!pending || pending[slot] === undefined) return;
    pending[slot] = undefined;
    // Slots are cleared rather than spliced out; the list empties when no call is open.
    if (--this.#open === 0) pending.length = 0;
  }

  /** Whether the rollout's function has returned or thrown. */
  get ended(): boolean {
    return this.#ended;
  }

  /** See {@link ActiveRollout.onEnd}; a callback given after the end never runs. */
  onEnd(callback: () => void): void {
    if (this.#ended) return;
    this.#onEnd ??= [];
    this.#onEnd.push(callback);
  }

  /** Called when the rollout's function has returned or thrown. */
  end(): void {
    // Callbacks record into the trajectory, so they run while it still takes records.
    const callbacks = this.#onEnd;
    this.#onEnd = undefined;
    for (const callback of callbacks ?? []) {
      try {
        callback();
      } catch (error) {
        this.trajectory.log(`recording at the rollout's end failed: ${errorMessage(error)}`);
      }
    }
    this.#ended = true;
    if (!this.#open || !this.#pending) return;
    for (const r of this.#pending) {
      if (!r) continue;
      const what = r.stream ? "a streamed completion" : "a completion";
      this.trajectory.log(`${what} (${String(r.model)}) had not finished when the rollout ended`);
    }
    this.#pending.length = 0;
    this.#open = 0;
  }

  logOnce(message: string): void {
    this.#logged ??= new Set();
    if (this.#logged.has(message)) return;
    this.#logged.add(message);
    this.trajectory.log(message);
  }

  recordToolResult(result: { tool_call_id: string; content: string; name?: string }): void {
    const msg: Msg = { role: "tool", tool_call_id: result.tool_call_id, content: result.content };
    this.trajectory.messages_and_choices.push(msg as never);
  }

  recordCompletion(call: RecordedCompletion): void {
    if (!call.traced && this.traced) traceCompletion(call, this.options.recordContent === true);
    const t = this.trajectory;
    const complete = !call.status || call.status === "complete";
    if (!complete) {
      const why = call.error instanceof Error ? `: ${call.error.message}` : "";
      const kept = call.choices.length ? " (kept as a plain message, not trained on)" : "";
      t.log(
        `completion ${call.response?.id ?? ""} ${call.status}${why}${kept}`.replace(/ {2}/, " "),
      );
    }
    const sent = call.request.messages as unknown as Msg[];
    const tools = call.request.tools ?? null;
    // A cut-off sample is not what the policy would have produced to the end:
    // as a Choice the trainer would learn from it, so it stays a plain message.
    const turns: MessageOrChoice[] = complete ? call.choices : call.choices.map(toChatMessage);
    // A side conversation (a sub-agent, a judge) that continues one recorded
    // earlier extends that history, as the main conversation is extended;
    // anything else starts a new additional history.
    const target = isPrefix(t.messages_and_choices, sent)
      ? t
      : (continuedHistory(t.additional_histories, sent) ?? newHistory(t));
    extend(target, sent, turns[0], tools);
    // n > 1: the first choice extends the conversation, each other one is an additional history.
    for (let i = 1; i < turns.length; i++) extend(newHistory(t), sent, turns[i], tools);
  }
}
