// Recording an `@anthropic-ai/sdk` client's `messages.create` (and so the
// SDK's `messages.stream()` and `messages.parse()`, which call it on the same
// resource) inside a rollout, as wrap-responses.ts does for the Responses API:
// the request and the answer in the chat shape a trajectory holds
// (messages-convert.ts), the answer a plain assistant message, never a Choice
// (the Messages API returns no token ids). The caller keeps the SDK's own
// APIPromise, Stream and MessageStream.
import { isObjectLike } from "../util/argument-error.js";
import type { ActiveRollout, RecordedCompletion } from "./active-rollout.js";
import type { AnyFn, SessionOf } from "./call-promise.js";
import {
  anthropicFinishReason,
  anthropicInputToMessages,
  anthropicOutputToMessages,
  anthropicToolChoiceToChat,
  anthropicToolsToChat,
} from "./messages-convert.js";
import { MessagesStreamAccumulator } from "./messages-stream.js";
import { checkJsonBody, type PlainCallApi, recordingPlainCall } from "./plain-call.js";
import type { ChatConversion } from "./responses-convert.js";
import type { ServerAddress } from "./spans.js";

const WRAPPED = Symbol.for("trajectory-recorder.wrapped");

type Body = Record<string, unknown>;
type Msg = Record<string, unknown>;
type Request = RecordedCompletion["request"];

/** Names what a conversion left out: one log line per kind, a count in the trajectory's metrics. */
function take<T>(rollout: ActiveRollout, converted: ChatConversion<T>): T {
  const { dropped } = converted;
  if (dropped.length) {
    const metrics = rollout.trajectory.metrics as Record<string, number>;
    metrics.anthropic_items_dropped = (metrics.anthropic_items_dropped ?? 0) + dropped.length;
    for (const kind of new Set(dropped))
      rollout.logOnce(
        `anthropic: ${kind} has no chat form and was left out of the trajectory (counted in metrics.anthropic_items_dropped)`,
      );
  }
  return converted.value;
}

/** The recorded request: the body's parameters, its system and messages as chat messages, its tools as chat tools. */
function chatRequest(rollout: ActiveRollout, body: Body): Request {
  checkJsonBody("messages.create(body)", body);
  const { system, messages, tools, tool_choice, ...rest } = body;
  const sendable = messages === undefined || Array.isArray(messages);
  if (!sendable)
    rollout.logOnce(
      `anthropic: body.messages is ${typeof messages}, not an array of messages: recorded without it`,
    );
  const chat = take(
    rollout,
    anthropicInputToMessages({ system, messages: sendable ? messages : undefined }),
  );
  if (body.thread != null)
    rollout.logOnce(
      "anthropic: a request's `thread` continues a conversation the server keeps: the history holds only the messages the request sent",
    );
  const chatTools = take(rollout, anthropicToolsToChat(tools));
  return {
    ...rest,
    ...anthropicToolChoiceToChat(tool_choice),
    messages: chat as unknown as Request["messages"],
    ...(chatTools ? { tools: chatTools as unknown as Request["tools"] } : {}),
  };
}

/** A Messages usage as chat usage: the prompt counts the cached input too. */
function chatUsage(usage: unknown): NonNullable<RecordedCompletion["response"]>["usage"] {
  if (!isObjectLike(usage)) return undefined;
  const n = (v: unknown) => (typeof v === "number" ? v : 0);
  const prompt =
    n(usage.input_tokens) + n(usage.cache_read_input_tokens) + n(usage.cache_creation_input_tokens);
  const completion = n(usage.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
}

/**
 * The record of a message (or of what a cut stream left). When a server tool
 * ran, the answer is several chat messages: those before the last (the server
 * call and its result) go at the end of the recorded request, where the next
 * request's history (which sends the whole content back) has them too.
 */
function messageCall(
  rollout: ActiveRollout,
  request: Request,
  message: Body | undefined,
  content: unknown,
  ending: {
    status: RecordedCompletion["status"];
    error?: unknown;
    cut?: boolean;
    streamed: boolean;
  },
): RecordedCompletion {
  const turns = take(rollout, anthropicOutputToMessages(Array.isArray(content) ? content : []));
  const turn = turns[turns.length - 1] as Msg;
  const lead = turns.slice(0, -1);
  const tools = Array.isArray(turn.tool_calls) && turn.tool_calls.length > 0;
  // A finished answer is a turn even when empty (the model said nothing); a cut one needs content.
  const hasTurn =
    !!(turn.content || tools || turn.reasoning_content) || ending.status === "complete";
  return {
    request: lead.length
      ? { ...request, messages: [...request.messages, ...(lead as unknown as Request["messages"])] }
      : request,
    choices: hasTurn
      ? [
          {
            index: 0,
            finish_reason: anthropicFinishReason(message?.stop_reason, tools),
            logprobs: null,
            message: turn,
          } as unknown as RecordedCompletion["choices"][number],
        ]
      : [],
    response: {
      id: typeof message?.id === "string" ? message.id : undefined,
      model: typeof message?.model === "string" ? message.model : undefined,
      usage: chatUsage(message?.usage),
    },
    status: ending.status,
    error: ending.error,
    ...(ending.cut ? { cut: true } : {}),
    streamed: ending.streamed,
    plain: true,
    traced: true,
  };
}

/** Anthropic's Messages API as `recordingPlainCall` takes it. */
const MESSAGES: PlainCallApi<MessagesStreamAccumulator> = {
  name: "Messages",
  answer: "message",
  request: chatRequest,
  isAnswer: (result) => Array.isArray(result.content),
  fromAnswer: (rollout, request, result, ending) =>
    messageCall(rollout, request, result, result.content, ending),
  accumulator: () => new MessagesStreamAccumulator(),
  fromStream: (rollout, request, acc, ending) =>
    messageCall(rollout, request, acc.message, acc.content(), ending),
};

/** Whether `client` looks like an `@anthropic-ai/sdk` client (a `messages.create`, no chat completions). */
export function isAnthropicClient(client: unknown): boolean {
  const messages = (client as { messages?: unknown } | null)?.messages;
  return isObjectLike(messages) && typeof messages.create === "function";
}

/**
 * Wraps `client.messages.create` (and `client.beta.messages.create`, when the
 * client has it) so they record inside a rollout. Wrapping twice is a no-op:
 * false when the client was wrapped already.
 */
export function wrapMessages(
  client: object,
  server: ServerAddress | undefined,
  policy: boolean | undefined,
  sessionOf: SessionOf | undefined,
): boolean {
  let wrapped = false;
  const beta = (client as { beta?: { messages?: unknown } }).beta;
  for (const messages of [(client as { messages?: unknown }).messages, beta?.messages]) {
    if (!isObjectLike(messages) || typeof messages.create !== "function") continue;
    if ((messages as Record<symbol, unknown>)[WRAPPED]) continue;
    const create = recordingPlainCall(
      MESSAGES,
      messages.create as AnyFn,
      messages,
      server,
      policy,
      sessionOf,
    );
    Object.defineProperty(messages, "create", {
      value: create,
      configurable: true,
      writable: true,
    });
    Object.defineProperty(messages, WRAPPED, { value: true });
    wrapped = true;
  }
  return wrapped;
}
