// The state behind a running rollout: where each recorded completion goes in
// the trajectory (which conversation it continues, what it adds), the calls
// still open, and what happens when the rollout ends.
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import { CompactLogprobs } from "../logprobs/index.js";
import {
  History,
  infraFailureOf,
  isChoice,
  keptByApplication,
  type MessageOrChoice,
  recordedItems,
  stepOfModelName,
  type Trajectory,
  toChatMessage,
} from "../trajectory/index.js";
import { copyJson } from "../util/copy-json.js";
import { errorMessage } from "../util/error-message.js";
import type { ActiveRollout, RecordedCompletion, RolloutOptions } from "./active-rollout.js";
import { callFailure } from "./infra-failures.js";
import { checkLineage } from "./lineage.js";
import { isPrefix, sameTools } from "./match.js";
import { traceCompletion } from "./spans.js";
import { ToolResults } from "./tool-results.js";

type Msg = Record<string, unknown>;

/** How many of the latest additional histories a side conversation may continue. */
const HISTORY_LOOKBACK = 64;

/** A conversation the recorder appends to: the trajectory's own, or an additional history. */
type Conversation = Pick<History, "messages_and_choices" | "tools">;

/** An empty additional history, appended to the trajectory. */
function newHistory(t: Trajectory): History {
  const history = new History();
  t.additional_histories.push(history);
  return history;
}

/**
 * Who hears of a rollout's calls as they happen (the durable store behind a
 * session): each hook runs on the call path, so each must be cheap and must
 * not throw (what it throws is logged on the trajectory, never the caller's).
 */
export interface RolloutObserver {
  /** A call started: its number in the rollout (from 1) and the request as sent. */
  callStarted?(call: number, request: RecordedCompletion["request"]): void;
  /** A completion (or a failed call) was recorded into the trajectory. */
  recorded?(): void;
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
  readonly #toolResults = new ToolResults();
  /** Conversations holding a Choice: their tools are the ones those Choices were offered. */
  #withChoice: WeakSet<Conversation> | undefined;
  /** The items this rollout built (the worker writes them without checking them again). */
  #recorded: Set<object> | undefined;
  /** The request tool objects last found equal to a conversation's tools. */
  #toolsSeen: WeakMap<Conversation, readonly unknown[]> | undefined;
  #completions = 0;
  #started = 0;
  /** Logprobs recorded and not compacted yet (the SDK's lists, or copies): settled when the rollout ends. */
  #toCompact: CompactLogprobs[] | undefined;

  /** Whether the rollout emits spans (a tracer provider was registered when it started). */
  readonly traced: boolean;

  /** Calls started so far: the number of the latest one. */
  #calls = 0;
  /** The final policy version this rollout stamped: a different value is the caller's, and kept. */
  #stampedFinal: number | null = null;
  readonly #observer: RolloutObserver | undefined;

  constructor(
    trajectory: Trajectory,
    options: RolloutOptions,
    traced = false,
    observer?: RolloutObserver,
  ) {
    this.trajectory = trajectory;
    this.options = options;
    this.traced = traced;
    this.#observer = observer;
  }

  /**
   * How many calls started in this rollout: the number of the latest. A call's
   * number is read right after `create()` returns (it starts synchronously).
   */
  get calls(): number {
    return this.#calls;
  }

  #tell(hook: "callStarted" | "recorded", ...args: unknown[]): void {
    const fn = this.#observer?.[hook] as ((...a: unknown[]) => void) | undefined;
    if (!fn) return;
    try {
      fn.apply(this.#observer, args);
    } catch (error) {
      this.logOnce(`recording the rollout's progress failed: ${errorMessage(error)}`);
    }
  }

  /** How many completions the rollout recorded or saw start (finished, cut off, failed or left running). */
  get completions(): number {
    return this.#completions + this.#started;
  }

  log(message: string): void {
    if (!this.#ended) this.trajectory.log(message);
  }

  isPolicy(model: string | undefined): boolean {
    const policy = this.options.isPolicy;
    if (!policy) return true;
    try {
      return policy(model) === true;
    } catch (error) {
      this.logOnce(`the policy predicate threw for model "${model}": ${errorMessage(error)}`);
      return false;
    }
  }

  /**
   * Marks a call as started, until {@link endCall} with the returned slot. A
   * call still open when the rollout ends (a stream never read to its end, a
   * call never awaited) is said in the logs instead of vanishing without a trace.
   */
  startCall(request: RecordedCompletion["request"]): number {
    this.#pending ??= [];
    this.#open++;
    this.#started++;
    const slot = this.#pending.push(request) - 1;
    this.#calls++;
    if (this.#observer) this.#tell("callStarted", this.#calls, request);
    return slot;
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

  /**
   * Called when the rollout's function has returned or thrown. From then on
   * the trajectory is the caller's: nothing the rollout left running changes it.
   */
  end(): void {
    if (this.#ended) return;
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
    for (const id of this.#toolResults.flush())
      this.logOnce(
        `a tool result for call ${id} answers no call recorded in this rollout: left out of the trajectory`,
      );
    if (this.completions === 0)
      this.trajectory.log(
        "no chat completion was recorded in this rollout: wrap the client (recorder.wrap or model.openai({ recorder })) and make the calls inside recorder.rollout()",
      );
    // Off the call path, with every turn recorded: histories follow the tokens.
    try {
      checkLineage(
        this.trajectory,
        this.options.lineage ?? "tokens",
        this,
        this.options.tokenIds !== false,
      );
    } catch (error) {
      this.trajectory.log(`the token lineage check failed: ${errorMessage(error)}`);
    }
    this.#ended = true;
    this.#settle();
    if (!this.#open || !this.#pending) return;
    for (const r of this.#pending) {
      if (!r) continue;
      const what = r.stream ? "a streamed completion" : "a completion";
      this.trajectory.log(
        `${what} (${String(r.model)}) had not finished when the rollout ended: left out of the trajectory`,
      );
    }
    this.#pending.length = 0;
    this.#open = 0;
  }

  /**
   * Reads the logprobs this rollout recorded as the SDK's objects, which are
   * the caller's and must not be read later (see CompactLogprobs.settle).
   * Copies are left as they are, for the writer (or the cap of waiting
   * tokens) to compact: the rollout's caller does not wait for that.
   */
  #settle(): void {
    const list = this.#toCompact;
    if (!list) return;
    this.#toCompact = undefined;
    for (const logprobs of list) logprobs.settle();
  }

  logOnce(message: string): void {
    if (this.#ended) return;
    this.#logged ??= new Set();
    if (this.#logged.has(message)) return;
    this.#logged.add(message);
    this.trajectory.log(message);
  }

  recordToolResult(result: {
    tool_call_id: string;
    content: string | unknown[];
    name?: string;
  }): void {
    if (this.#ended) return;
    const msg: Msg = { role: "tool", tool_call_id: result.tool_call_id, content: result.content };
    this.#toolResults.add(msg);
  }

  recordCompletion(call: RecordedCompletion): void {
    // A call left running when the rollout ended: the trajectory was handed back as it was.
    if (this.#ended) return;
    this.#completions++;
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
    if (!complete) this.#markIfInfra(call);
    const model = call.response?.model || call.request.model;
    const policy = call.policy === true || this.isPolicy(model);
    if (!policy && call.choices.length && !call.plain)
      this.logOnce(
        `model "${model ?? "(unnamed)"}" is not the policy: its completions are kept as plain assistant messages, not trained on`,
      );
    if (policy && call.choices.length && !call.plain) this.#stampVersion(model);
    const sent = call.request.messages as unknown as Msg[];
    const tools = call.request.tools ?? null;
    // A cut-off sample is not what the policy would have produced to the end,
    // and another model's sample is not the policy's: as a Choice the trainer
    // would learn from it, so it stays a plain message.
    const turns: MessageOrChoice[] = call.plain
      ? call.choices.map((c) => ({ ...c.message }) as unknown as MessageOrChoice)
      : complete && policy
        ? call.choices
        : call.choices.map(toChatMessage);
    try {
      const target = this.#target(sent, tools);
      this.#extend(target, sent, turns[0], tools);
      // n > 1: the first choice extends the conversation, each other one is an additional history.
      for (let i = 1; i < turns.length; i++) this.#extend(newHistory(t), sent, turns[i], tools);
    } catch (error) {
      // The caller's call succeeded and keeps its result: recording must not change that.
      this.logOnce(
        `a completion could not be recorded and was left out of the trajectory: ${errorMessage(error)}`,
      );
    }
    if (this.#observer) this.#tell("recorded");
  }

  /**
   * Stamps the checkpoint that sampled this turn: the first turn's is the
   * trajectory's `initial_policy_version`, the latest's its
   * `final_policy_version`, unless the caller set them. Stamped as calls are
   * recorded, so a store's writes during the rollout carry them too.
   */
  #stampVersion(model: string | undefined): void {
    let version: number | undefined;
    try {
      version = (this.options.policyVersion ?? stepOfModelName)(model);
    } catch (error) {
      this.logOnce(
        `the policy version of model "${model}" could not be read: ${errorMessage(error)}`,
      );
      return;
    }
    if (version === undefined || !Number.isSafeInteger(version) || version < 0) return;
    const t = this.trajectory;
    t.initial_policy_version ??= version;
    if (t.final_policy_version === this.#stampedFinal) {
      t.final_policy_version = version;
      this.#stampedFinal = version;
    }
  }

  /**
   * Marks the trajectory when `call` failed for the infrastructure's sake,
   * even if the agent caught the error and went on: the rollout's reward
   * would say more about the upstream than about the policy. The first
   * failure names the kind; the application's `false` (or the recorder's
   * `markInfraFailures: false`) keeps it unmarked, said in the logs.
   */
  #markIfInfra(call: RecordedCompletion): void {
    const failure = callFailure(call);
    if (!failure) return;
    const t = this.trajectory;
    const what = `completion ${this.#completions} (${String(call.request.model)})`;
    if (this.options.markInfraFailures === false || keptByApplication(t)) {
      this.logOnce(
        `infrastructure failure (${failure.kind}) in ${what}: not marked, the application keeps this rollout in the statistics`,
      );
      return;
    }
    if (infraFailureOf(t) !== undefined) {
      t.log(`infrastructure failure (${failure.kind}) in ${what}: ${failure.detail}`);
      return;
    }
    t.markInfraFailure(failure.kind, `${what}: ${failure.detail}`);
  }

  /**
   * The conversation `sent` continues with the same tools offered: the main
   * one, else the latest additional history (a sub-agent, a judge), else a new
   * additional history. A conversation whose tools changed is not continued:
   * each Choice keeps the tools its turn was offered.
   */
  #target(sent: Msg[], tools: ChatCompletionTool[] | null): Conversation {
    const t = this.trajectory;
    let toolsChanged = false;
    const fits = (c: Conversation) => {
      if (!isPrefix(c.messages_and_choices, sent)) return false;
      if (!this.#withChoice?.has(c) || this.#offered(c, tools)) return true;
      toolsChanged = true;
      return false;
    };
    if (fits(t)) return t;
    const histories = t.additional_histories;
    const stop = Math.max(0, histories.length - HISTORY_LOOKBACK);
    for (let i = histories.length - 1; i >= stop; i--) {
      const h = histories[i] as History;
      if (fits(h)) return h;
    }
    if (toolsChanged)
      this.logOnce(
        "the tools offered changed within a conversation: each turn with new tools goes on in a new additional history that records them",
      );
    return newHistory(t);
  }

  /**
   * Whether `tools` are those `conversation` was offered. Loops that send the
   * same tool objects each turn are told so by identity; others pay one
   * serialization of the list.
   */
  #offered(conversation: Conversation, tools: ChatCompletionTool[] | null): boolean {
    const seen = this.#toolsSeen?.get(conversation);
    if (seen && seen.length === (tools?.length ?? 0) && seen.every((t, i) => t === tools?.[i]))
      return true;
    if (!sameTools(conversation.tools, tools)) return false;
    this.#toolsSeen ??= new WeakMap();
    if (tools) this.#toolsSeen.set(conversation, tools);
    return true;
  }

  /**
   * Appends to `conversation` what `sent` adds beyond what it holds (copied:
   * the caller's messages are theirs), then the sampled turn; the tools are
   * those of its first Choice.
   */
  #extend(
    conversation: Conversation,
    sent: Msg[],
    turn: MessageOrChoice | undefined,
    tools: ChatCompletionTool[] | null,
  ): void {
    const items = conversation.messages_and_choices;
    // Every copy first: a message that is not JSON (nested past the limit)
    // throws before the conversation is changed.
    const added: Msg[] = [];
    for (let i = items.length; i < sent.length; i++)
      added.push(copyJson(sent[i], `messages[${i}]`) as Msg);
    this.#withChoice ??= new WeakSet();
    const newTools =
      tools && !this.#withChoice.has(conversation) ? copyJson(tools, "tools") : undefined;
    this.#recorded ??= recordedItems(this.trajectory);
    const recorded = this.#recorded;
    for (const msg of added) {
      recorded.add(msg);
      items.push(msg as never);
      this.#toolResults.sent(conversation, msg);
    }
    for (const r of this.#toolResults.notCarried(conversation))
      this.logOnce(
        `the result of tool call ${String(r.tool_call_id)} was not sent in the next request of its conversation: left out, as the model never saw it there`,
      );
    if (newTools) conversation.tools = newTools as never;
    if (!turn) return;
    recorded.add(turn);
    items.push(turn as never);
    if (isChoice(turn)) {
      this.#withChoice.add(conversation);
      const logprobs = (turn as { logprobs?: unknown }).logprobs;
      if (logprobs instanceof CompactLogprobs) {
        logprobs.hold();
        this.#toCompact ??= [];
        this.#toCompact.push(logprobs);
      }
    }
    this.#toolResults.issued(conversation, turn);
  }
}
