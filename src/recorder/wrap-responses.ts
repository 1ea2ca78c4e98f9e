// Recording `client.responses.create` (and so the SDK's `responses.stream()`
// and `responses.parse()`, which call it on the same client) inside a rollout.
// The request and the answer are turned into the chat shape a trajectory
// holds (responses-convert.ts); the answer is kept as a plain assistant
// message, never a Choice: the Responses API returns no token ids.
import { isObjectLike } from "../util/argument-error.js";
import type { ActiveRollout, RecordedCompletion } from "./active-rollout.js";
import type { AnyFn, SessionOf } from "./call-promise.js";
import { checkJsonBody, type PlainCallApi, recordingPlainCall } from "./plain-call.js";
import {
  type ChatConversion,
  responsesInputToMessages,
  responsesOutputToMessage,
  responsesToolsToChat,
} from "./responses-convert.js";
import { ResponsesStreamAccumulator } from "./responses-stream.js";
import type { ServerAddress } from "./spans.js";

const WRAPPED = Symbol.for("trajectory-recorder.wrapped");

type Body = Record<string, unknown>;
type Msg = Record<string, unknown>;
type Request = RecordedCompletion["request"];

/**
 * The conversation after each recorded response (its request's messages and
 * its answer), by response id and rollout: a request that continues one with
 * `previous_response_id` sends only its new items, and is recorded as the
 * whole conversation the model saw.
 */
const conversations = new WeakMap<ActiveRollout, Map<string, Msg[]>>();

/** Whether a request's first message is its `instructions` (which a continuation does not inherit). */
const LED = Symbol("instructions");
type Led = { [LED]?: boolean };

/** Names what a conversion left out: one log line per kind, a count in the trajectory's metrics. */
function noteDropped(rollout: ActiveRollout, dropped: readonly string[]): void {
  if (!dropped.length) return;
  const metrics = rollout.trajectory.metrics as Record<string, number>;
  metrics.responses_items_dropped = (metrics.responses_items_dropped ?? 0) + dropped.length;
  for (const kind of new Set(dropped))
    rollout.logOnce(
      `responses: ${kind} has no chat form and was left out of the trajectory (counted in metrics.responses_items_dropped)`,
    );
}

function take<T>(rollout: ActiveRollout, converted: ChatConversion<T>): T {
  noteDropped(rollout, converted.dropped);
  return converted.value;
}

/** The recorded request: the body's parameters, its input as chat messages, its tools as chat tools. */
function chatRequest(rollout: ActiveRollout, body: Body): Request {
  checkJsonBody("responses.create(body)", body);
  const { input, instructions, tools, ...rest } = body;
  const sendable = input === undefined || typeof input === "string" || Array.isArray(input);
  if (!sendable)
    rollout.logOnce(
      `responses: body.input is ${typeof input}, not a string or an array of items: recorded without it`,
    );
  let messages = take(
    rollout,
    responsesInputToMessages({ input: sendable ? input : undefined, instructions }),
  );
  const previous = body.previous_response_id;
  if (typeof previous === "string") {
    const before = conversations.get(rollout)?.get(previous);
    if (before) {
      // The previous response's instructions do not carry over (the API's
      // rule); the items before and after them do. This request's own lead.
      const lead = hasInstructions(instructions) ? 1 : 0;
      const prior = (before as Led)[LED] ? before.slice(1) : before;
      messages = [...messages.slice(0, lead), ...prior, ...messages.slice(lead)];
    } else
      rollout.logOnce(
        `responses: previous_response_id ${previous} names a response this rollout did not record: the history starts at this request's own input`,
      );
  }
  if (body.conversation != null)
    rollout.logOnce(
      "responses: a request's `conversation` is kept by the server, not sent: the history holds only the items the request sent",
    );
  if (hasInstructions(instructions)) (messages as Led)[LED] = true;
  const chatTools = take(rollout, responsesToolsToChat(tools));
  return {
    ...rest,
    messages: messages as unknown as Request["messages"],
    ...(chatTools ? { tools: chatTools as unknown as Request["tools"] } : {}),
  };
}

function hasInstructions(instructions: unknown): boolean {
  return typeof instructions === "string" && instructions !== "";
}

/** A Responses usage as chat usage. */
function chatUsage(usage: unknown): NonNullable<RecordedCompletion["response"]>["usage"] {
  if (!isObjectLike(usage)) return undefined;
  const n = (v: unknown) => (typeof v === "number" ? v : 0);
  return {
    prompt_tokens: n(usage.input_tokens),
    completion_tokens: n(usage.output_tokens),
    total_tokens: n(usage.total_tokens),
  };
}

/** The record of a response (or of what a cut stream left): its answer as one plain assistant turn. */
function responseCall(
  rollout: ActiveRollout,
  request: Request,
  response: Body | undefined,
  output: unknown,
  ending: {
    status: RecordedCompletion["status"];
    error?: unknown;
    cut?: boolean;
    streamed: boolean;
  },
): RecordedCompletion {
  const message = take(rollout, responsesOutputToMessage(Array.isArray(output) ? output : []));
  notePolicyTurn(rollout, response?.model ?? request.model);
  if (hasLogprobs(output))
    rollout.logOnce(
      "responses: output_text logprobs are not kept: they are token strings for the message text only (no token ids, nothing for function calls or reasoning), so the turn is a plain message",
    );
  const tools = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
  const finish = tools ? "tool_calls" : response?.status === "incomplete" ? "length" : "stop";
  const failed = response?.status === "failed";
  // An answer of empty text is still the model's turn (an agent loop's last
  // word may be nothing): recorded, so the history ends as the model ended it.
  const hasTurn =
    !!(message.content || tools || message.refusal || message.reasoning_content) ||
    hasAssistantMessage(output);
  return {
    request,
    choices: hasTurn
      ? [
          {
            index: 0,
            finish_reason: finish,
            logprobs: null,
            message,
          } as unknown as RecordedCompletion["choices"][number],
        ]
      : [],
    response: {
      id: typeof response?.id === "string" ? response.id : undefined,
      model: typeof response?.model === "string" ? response.model : undefined,
      usage: chatUsage(response?.usage),
    },
    status: failed ? "error" : ending.status,
    error: failed
      ? new Error(`the response failed: ${JSON.stringify(response?.error ?? null)}`)
      : ending.error,
    ...(ending.cut ? { cut: true } : {}),
    streamed: ending.streamed,
    plain: true,
    traced: true,
  };
}

/**
 * Says once when the trainable model itself answered through the Responses
 * API: its turns are messages, so RL has nothing to train on. Only when the
 * recorder names a policy (`model.openai({ recorder })` does): without one,
 * every model counts as the policy, and a teacher's trace is what the caller wants.
 */
function notePolicyTurn(rollout: ActiveRollout, model: unknown): void {
  if (typeof model !== "string" || model === "") return;
  // An unnamed model is the policy only while no policy is named.
  const policyNamed = !rollout.isPolicy(undefined);
  if (!policyNamed || !rollout.isPolicy(model)) return;
  rollout.logOnce(
    `responses: model "${model}" is the policy being trained, but its Responses API turns are recorded as plain messages (the API returns no token ids): train on them with trainSft, or call it through chat completions for RL (the Agents SDK: setOpenAIAPI("chat_completions"))`,
  );
}

function hasAssistantMessage(output: unknown): boolean {
  return (
    Array.isArray(output) &&
    output.some(
      (item) => isObjectLike(item) && item.type === "message" && item.role === "assistant",
    )
  );
}

function hasLogprobs(output: unknown): boolean {
  if (!Array.isArray(output)) return false;
  return output.some(
    (item) =>
      isObjectLike(item) &&
      Array.isArray(item.content) &&
      item.content.some(
        (part: unknown) =>
          isObjectLike(part) && Array.isArray(part.logprobs) && part.logprobs.length > 0,
      ),
  );
}

/** Remembers the conversation a response ends, for a later `previous_response_id`. */
function remember(rollout: ActiveRollout, call: RecordedCompletion): void {
  const id = call.response?.id;
  if (!id || call.status === "error") return;
  let byId = conversations.get(rollout);
  if (!byId) {
    byId = new Map();
    conversations.set(rollout, byId);
  }
  const turn = call.choices[0]?.message as unknown as Msg | undefined;
  const sent = call.request.messages as unknown as Msg[] & Led;
  const conversation: Msg[] & Led = [...sent, ...(turn ? [turn] : [])];
  if (sent[LED]) conversation[LED] = true;
  byId.set(id, conversation);
}

/** The Responses API as `recordingPlainCall` takes it. */
const RESPONSES: PlainCallApi<ResponsesStreamAccumulator> = {
  name: "Responses",
  answer: "response",
  request: chatRequest,
  isAnswer: (result) => Array.isArray(result.output),
  fromAnswer: (rollout, request, result, ending) =>
    responseCall(rollout, request, result, result.output, ending),
  accumulator: () => new ResponsesStreamAccumulator(),
  fromStream: (rollout, request, acc, ending) =>
    responseCall(
      rollout,
      request,
      acc.response ?? { id: acc.id, model: acc.model },
      acc.output(),
      ending,
    ),
  recorded: remember,
};

/**
 * Wraps `client.responses.create` so it records inside a rollout, when the
 * client has the Responses API (openai 4 before 4.87 has none: then nothing
 * changes). Wrapping twice is a no-op.
 */
export function wrapResponses(
  client: object,
  server: ServerAddress | undefined,
  policy: boolean | undefined,
  sessionOf: SessionOf | undefined,
): void {
  const responses = (client as { responses?: unknown }).responses;
  if (!isObjectLike(responses) || typeof responses.create !== "function") return;
  if ((responses as Record<symbol, unknown>)[WRAPPED]) return;
  const create = recordingPlainCall(
    RESPONSES,
    responses.create as AnyFn,
    responses,
    server,
    policy,
    sessionOf,
  );
  Object.defineProperty(responses, "create", { value: create, configurable: true, writable: true });
  Object.defineProperty(responses, WRAPPED, { value: true });
}
