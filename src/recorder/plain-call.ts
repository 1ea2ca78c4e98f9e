// One recording wrapper for the APIs whose turns are plain assistant messages
// (the Responses API, Anthropic's Messages): what differs per API (how its
// request and answer become the chat shape, its stream's accumulator) comes
// in a `PlainCallApi`; the rollout bookkeeping, receipts, spans and the rule
// that recording never changes what the caller gets live here once.
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { findJsonProblem } from "../util/json-check.js";
import type { ActiveRollout, RecordedCompletion } from "./active-rollout.js";
import {
  type AnyFn,
  type APIPromiseLike,
  isRolloutState,
  refusedCall,
  type SessionOf,
} from "./call-promise.js";
import { currentRollout } from "./context.js";
import { setReceipt } from "./receipts.js";
import { type EventAccumulator, type EventStream, teeEvents } from "./responses-stream.js";
import { endChatSpan, type ServerAddress, startChatSpan, tracingEnabled } from "./spans.js";

type Body = Record<string, unknown>;
type Request = RecordedCompletion["request"];

/** How a call ended, as the per-API builders take it. */
export interface PlainEnding {
  status: RecordedCompletion["status"];
  error?: unknown;
  cut?: boolean;
  streamed: boolean;
}

/** What one API brings to `recordingPlainCall`. */
export interface PlainCallApi<A extends EventAccumulator> {
  /** The API's name in a failed record ("Messages", "Responses"). */
  name: string;
  /** What its answer is called, unstreamed and streamed ("message", "event stream"). */
  answer: string;
  /** The request in the chat shape; throws `InvalidArgumentError` for a body it refuses. */
  request(rollout: ActiveRollout, body: Body): Request;
  /** Whether an unstreamed result is this API's answer. */
  isAnswer(result: Body): boolean;
  fromAnswer(
    rollout: ActiveRollout,
    request: Request,
    result: Body,
    ending: PlainEnding,
  ): RecordedCompletion;
  accumulator(): A;
  fromStream(
    rollout: ActiveRollout,
    request: Request,
    acc: A,
    ending: PlainEnding,
  ): RecordedCompletion;
  /** Runs after a call is recorded (the Responses API remembers it for `previous_response_id`). */
  recorded?(rollout: ActiveRollout, call: RecordedCompletion): void;
}

/**
 * Refuses a body the trajectory could not hold as JSON (a cycle, a BigInt),
 * naming the field, before anything is sent: `call` names the method.
 */
export function checkJsonBody(call: string, body: Body): void {
  for (const [key, value] of Object.entries(body)) {
    if (value === null || (typeof value !== "object" && typeof value !== "bigint")) continue;
    const problem = findJsonProblem(value);
    if (!problem) continue;
    const inner = problem.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
    throw new InvalidArgumentError(
      call,
      `body.${key}${inner}`,
      "a JSON value",
      undefined,
      problem.message,
    );
  }
}

/**
 * Records from inside the SDK's own parse step, as the chat wrapper does (a
 * side `.then()` would read the body before `parse()` reads it again): the
 * caller keeps the SDK's APIPromise and every helper chained on it.
 */
export function observe(
  promise: APIPromiseLike,
  onResult: (result: unknown) => unknown,
  failed: (error: unknown) => never,
  fail: (error: unknown) => void,
): void {
  const parse = promise?.parseResponse;
  if (typeof parse !== "function") {
    Promise.resolve(promise).then(onResult, fail);
    return;
  }
  promise.parseResponse = function parseAndRecord(this: unknown, ...a: unknown[]) {
    return Promise.resolve(parse.apply(this, a)).then(onResult, failed);
  };
  // openai 7.5+: each promise's own _thenUnwrap parses through a captured function.
  const unwrap = promise._thenUnwrap;
  if (typeof unwrap === "function" && Object.hasOwn(promise, "_thenUnwrap"))
    promise._thenUnwrap = (transform) => {
      const derived = unwrap.call(promise, (data: unknown, ...rest: unknown[]) =>
        transform(onResult(data), ...rest),
      );
      const inner = derived?.parseResponse;
      if (typeof inner === "function")
        derived.parseResponse = function parseOrFail(this: unknown, ...a: unknown[]) {
          return Promise.resolve(inner.apply(this, a)).then(undefined, failed);
        };
      return derived;
    };
  promise.responsePromise?.then(undefined, fail);
}

/** `create` of one plain-message API, recording inside a rollout (or a client's session). */
export function recordingPlainCall<A extends EventAccumulator>(
  api: PlainCallApi<A>,
  original: AnyFn,
  target: object,
  server: ServerAddress | undefined,
  policy: boolean | undefined,
  sessionOf: SessionOf | undefined,
): AnyFn {
  return function create(this: unknown, ...args: unknown[]) {
    const rollout = currentRollout() ?? (sessionOf ? sessionOf(args[1]) : undefined);
    const body = args[0] as Body | undefined;
    if (!rollout || !isObjectLike(body)) return original.apply(this ?? target, args);
    const state = isRolloutState(rollout) ? rollout : undefined;
    let request: Request;
    try {
      request = api.request(rollout, body);
    } catch (error) {
      return refusedCall(original, this ?? target, args, error);
    }
    const streamed = body.stream === true;
    const content = rollout.options.recordContent === true;
    const span = (state ? state.traced : tracingEnabled())
      ? startChatSpan(request, content, server)
      : undefined;
    const slot = state ? state.startCall(request) : -1;
    const number = state ? state.calls : 0;
    let recorded = false;
    const record = (call: RecordedCompletion) => {
      if (recorded) return;
      recorded = true;
      state?.endCall(slot);
      if (policy) call.policy = true;
      rollout.recordCompletion(call);
      api.recorded?.(rollout, call);
      endChatSpan(span, call, content);
    };
    const fail = (error: unknown) =>
      record({ request, choices: [], status: "error", error, streamed, plain: true, traced: true });
    // Recording never changes what the caller gets: an answer it cannot read is a failed record.
    const recordOf = (make: () => RecordedCompletion) => {
      try {
        record(make());
      } catch (error) {
        fail(error);
      }
    };
    const onResult = (result: unknown) => {
      const id = state && (state.trajectory as { id?: string }).id;
      if (id && isObjectLike(result)) setReceipt(result, { trajectory_id: id, call: number });
      if (streamed && typeof (result as Partial<EventStream>)?.iterator === "function")
        teeEvents(
          result as EventStream,
          (acc, status, error, cut) =>
            recordOf(() =>
              api.fromStream(rollout, request, acc, { status, error, cut, streamed: true }),
            ),
          api.accumulator(),
        );
      else if (isObjectLike(result) && !streamed && api.isAnswer(result))
        recordOf(() => api.fromAnswer(rollout, request, result, { status: "complete", streamed }));
      else
        fail(
          new Error(
            `the server's answer is not a ${api.name} ${streamed ? "event stream" : api.answer}; the caller got it as the SDK read it`,
          ),
        );
      return result;
    };
    const failed = (error: unknown) => {
      fail(error);
      throw error;
    };
    let promise: APIPromiseLike;
    try {
      promise = original.apply(this ?? target, args) as APIPromiseLike;
    } catch (error) {
      fail(error);
      throw error;
    }
    observe(promise, onResult, failed, fail);
    return promise;
  };
}
