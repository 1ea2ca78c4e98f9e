import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import type { CompactLogprobs, ScannedAnswer } from "../logprobs/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { deriveLike } from "../util/derive-client.js";
import { findJsonProblem } from "../util/json-check.js";
import { StreamAccumulator } from "./accumulate.js";
import type { RecordedCompletion, RolloutOptions } from "./active-rollout.js";
import { scanBody } from "./body-read.js";
import {
  type AnyFn,
  type APIPromiseLike,
  isRolloutState,
  refusedCall,
  type SessionOf,
} from "./call-promise.js";
import { currentRollout } from "./context.js";
import { setReceipt } from "./receipts.js";
import { type ChatCompletionBody, choicesWith, recordedResponse } from "./response.js";
import {
  endChatSpan,
  type ServerAddress,
  serverAddress,
  startChatSpan,
  tracingEnabled,
} from "./spans.js";
import { type IterableStream, watchIterator } from "./watch-iterator.js";
import { isAnthropicClient, wrapMessages } from "./wrap-messages.js";
import { wrapResponses } from "./wrap-responses.js";

const WRAPPED = Symbol.for("trajectory-recorder.wrapped");

type Body = Record<string, unknown> & { messages?: unknown[]; stream?: boolean };

/**
 * The caller's body plus what training needs (unless the rollout turned it
 * off, or the caller set it): as ART's own client does, the engine's token ids
 * on the response, and logprob tokens spelled "token_id:N" so they map to ids
 * without a tokenizer. Built as one object literal: copying the body and then
 * adding keys gives V8 a slower object the SDK then reads many times.
 */
function trainingBody(body: Body, options: RolloutOptions): Body {
  const { logprobs, tokenIds } = options;
  const out: Body =
    logprobs && tokenIds
      ? { logprobs: true, return_token_ids: true, return_tokens_as_token_ids: true, ...body }
      : tokenIds
        ? { return_token_ids: true, return_tokens_as_token_ids: true, ...body }
        : logprobs
          ? { logprobs: true, ...body }
          : { ...body };
  // A key the caller spelled out as undefined still counts as not set.
  if (logprobs && out.logprobs === undefined) out.logprobs = true;
  if (tokenIds && out.return_token_ids === undefined) out.return_token_ids = true;
  if (tokenIds && out.return_tokens_as_token_ids === undefined)
    out.return_tokens_as_token_ids = true;
  return out;
}

/**
 * Makes `body` (the recorder's own copy of the caller's) a snapshot of the
 * request as it is at call time, and returns it as the request to record.
 * Agent loops push to and splice their `messages` array and reassign message
 * fields, so the array and each message are copied; nested parts are copied
 * deeply only for the messages a record keeps (see RolloutState), which keeps
 * this O(messages) and cheap. The SDK sends these copies: same content.
 */
function snapshot(body: Body): RecordedCompletion["request"] {
  if (Array.isArray(body.messages))
    body.messages = body.messages.map((m) =>
      m && typeof m === "object" ? { ...(m as object) } : m,
    );
  if (Array.isArray(body.tools)) body.tools = [...(body.tools as [])];
  return body as RecordedCompletion["request"];
}

/**
 * A recorded request becomes JSON (the trajectory), and the SDK's own
 * JSON.stringify throws a bare TypeError on a BigInt or a cycle: the fields
 * beside `messages` and `tools` (small; those two are copied, path named, when
 * recorded) are checked first, and the bad value named by its path.
 */
function checkExtraFields(body: Body): void {
  for (const [key, value] of Object.entries(body)) {
    if (key === "messages" || key === "tools" || value === null || value === undefined) continue;
    if (typeof value !== "object" && typeof value !== "bigint") continue;
    const problem = findJsonProblem(value);
    if (problem) {
      const inner = problem.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
      throw new InvalidArgumentError(
        "chat.completions.create(body)",
        `body.${key}${inner}`,
        "a JSON value",
        undefined,
        problem.message,
      );
    }
  }
}

/** What `asResponse()` of a recorded call needs, kept on its promise. */
interface RawResponseRecord {
  /** The SDK's own `asResponse`, called on the promise. */
  asResponse: (this: unknown) => Promise<Response>;
  request: RecordedCompletion["request"];
  record: (call: RecordedCompletion) => void;
  fail: (error: unknown) => void;
}

const RAW_RESPONSE = Symbol("trajectory-recorder.rawResponse");

/**
 * `asResponse()` of a recorded call: its caller reads the body themselves,
 * so the call is recorded from a copy. When the body is already being read,
 * parse() is running too (withResponse()) and records through onResult.
 * One function for every call: a closure made per call and set as a new own
 * property of the SDK's promise kept every answer alive through the young
 * generation's collections (about 80 KB a 64-token top-5 answer, promoted).
 */
function recordedAsResponse(this: { [RAW_RESPONSE]?: RawResponseRecord }): Promise<Response> {
  const raw = this[RAW_RESPONSE] as RawResponseRecord;
  return raw.asResponse.call(this).then((response) => {
    if (!response.bodyUsed)
      response
        .clone()
        .json()
        .then((json) => raw.record(answeredCall(raw.request, json)), raw.fail);
    return response;
  });
}

function recordingCreate(
  original: AnyFn,
  target: object,
  server?: ServerAddress,
  policy?: boolean,
  sessionOf?: SessionOf,
): AnyFn {
  return function create(this: unknown, ...args: unknown[]) {
    const rollout = currentRollout() ?? (sessionOf ? sessionOf(args[1]) : undefined);
    const body0 = args[0] as Body | undefined;
    if (!rollout || !body0 || typeof body0 !== "object")
      return original.apply(this ?? target, args);
    // Another copy of this module (the ESM and the CommonJS build in one app)
    // has its own RolloutState class: recognise the state by its shape.
    const state = isRolloutState(rollout) ? rollout : undefined;
    let body: Body;
    let request: RecordedCompletion["request"];
    try {
      checkExtraFields(body0);
      body = trainingBody(body0, rollout.options);
      request = snapshot(body);
    } catch (error) {
      // The SDK reports a body it cannot send through the promise it returns,
      // never by throwing: so does the recorder (`create(body).catch(h)` runs h).
      return refusedCall(original, this ?? target, args, error);
    }
    // When only the recorder asked for logprobs, the answer is scanned from
    // its text as the SDK reads it (see scanBody) and the caller's answer
    // comes without them, as it would unrecorded. When the caller asked, the
    // SDK parses them anyway: they are copied from its objects in one pass
    // (no token looked up, compacted at the rollout's end) rather than the
    // same bytes read twice on the call path.
    const strip = body.logprobs === true && body0.logprobs !== true;
    const scanning = !body.stream && strip;
    let scanned: ScannedAnswer | undefined;
    const content = rollout.options.recordContent === true;
    const span = (state ? state.traced : tracingEnabled())
      ? startChatSpan(request, content, server)
      : undefined;
    let recorded = false;
    const slot = state ? state.startCall(request) : -1;
    const number = state ? state.calls : 0;
    const record = (call: RecordedCompletion) => {
      if (recorded) return;
      recorded = true;
      state?.endCall(slot);
      if (policy) call.policy = true;
      rollout.recordCompletion(call);
      endChatSpan(span, call, content);
    };
    const fail = (error: unknown) =>
      record({
        request,
        choices: [],
        status: "error",
        error,
        streamed: !!body.stream,
        traced: true,
      });
    const onResult = (result: unknown) => {
      const id = state && (state.trajectory as { id?: string }).id;
      if (id && typeof result === "object" && result !== null)
        setReceipt(result, { trajectory_id: id, call: number });
      if (body.stream && typeof (result as Partial<StreamLike>)?.iterator !== "function")
        record(notAnswer(request, result, true));
      else if (body.stream)
        teeStream(result as StreamLike, strip, (acc, status, error, cut) =>
          record({
            request,
            choices: acc.choices(),
            response: {
              id: acc.id,
              model: acc.model,
              usage: acc.usage,
              prompt_token_ids: acc.promptTokenIds,
            },
            status,
            error,
            ...(cut ? { cut } : {}),
            streamed: true,
            traced: true,
          }),
        );
      else {
        record(answeredCall(request, result, scanned?.logprobs));
        // The scan left the text as it came (a frozen Response, a mock's own
        // json(), a read the patch does not see): drop them from the objects.
        if (strip && !scanned) stripLogprobs(result);
      }
      return result;
    };
    const failed = (error: unknown) => {
      fail(error);
      throw error;
    };
    args[0] = body;
    let promise: APIPromiseLike;
    try {
      promise = original.apply(this ?? target, args) as APIPromiseLike;
    } catch (error) {
      // Whatever the SDK (or a custom client) throws, it throws as it would
      // unwrapped; the call is recorded as failed and its slot freed.
      fail(error);
      throw error;
    }
    const parse = promise?.parseResponse;
    if (typeof parse !== "function") {
      // Not the SDK's APIPromise (a custom client): observing it is all we can do.
      Promise.resolve(promise).then(onResult, fail);
      return promise;
    }
    // Record inside the SDK's own parse step instead of subscribing with
    // .then(): a side subscription would read the body before parse() or a
    // helper built on _thenUnwrap (which calls this parseResponse) reads it
    // again ("Body is unusable"). The caller gets the SDK's own APIPromise.
    promise.parseResponse = function parseAndRecord(this: unknown, ...a: unknown[]) {
      // The response is the last argument's (openai 4 passes one, 5 to 7 two).
      const undo = scanning
        ? scanBody(a[a.length - 1], strip, (found) => {
            scanned = found;
          })
        : undefined;
      const parsed = Promise.resolve(parse.apply(this, a));
      if (!undo) return parsed.then(onResult, failed);
      return parsed.then(
        (result) => {
          undo();
          return onResult(result);
        },
        (error) => {
          undo();
          return failed(error);
        },
      );
    };
    // openai 7.5+ gives each promise its own _thenUnwrap, which parses through
    // a captured function rather than parseResponse: record in its transform,
    // and a parse that fails through the derived promise's parseResponse.
    const unwrap = promise._thenUnwrap;
    if (typeof unwrap === "function" && Object.hasOwn(promise, "_thenUnwrap"))
      // A function on `this`, not an arrow naming `promise`: a variable a
      // closure names lives in the context every closure of this call
      // shares (parseAndRecord, fail...), so the built package then kept
      // each parsed answer (the promise's) alive until a full collection:
      // 1.7 MB promoted a 2000-token top-5 call, against 0.4 MB now.
      promise._thenUnwrap = function thenUnwrapAndRecord(this: APIPromiseLike, transform) {
        const derived = unwrap.call(this, (data: unknown, ...rest: unknown[]) =>
          transform(onResult(data), ...rest),
        );
        const inner = derived?.parseResponse;
        if (typeof inner === "function")
          derived.parseResponse = function parseOrFail(this: unknown, ...a: unknown[]) {
            const undo = scanning
              ? scanBody(a[a.length - 1], strip, (found) => {
                  scanned = found;
                })
              : undefined;
            return Promise.resolve(inner.apply(this, a)).then(
              (result) => {
                undo?.();
                return result;
              },
              (error) => {
                undo?.();
                return failed(error);
              },
            );
          };
        return derived;
      };
    // Failed requests reject the response promise before any body is read.
    promise.responsePromise?.then(undefined, fail);
    const asResponse = promise.asResponse;
    if (typeof asResponse === "function" && !body.stream) {
      const raw: RawResponseRecord = {
        asResponse,
        request,
        record,
        fail,
      };
      Object.assign(promise, { [RAW_RESPONSE]: raw, asResponse: recordedAsResponse });
    }
    return promise;
  };
}

function completedCall(
  request: RecordedCompletion["request"],
  res: ChatCompletion,
  scanned?: readonly (CompactLogprobs | undefined)[],
): RecordedCompletion {
  const body = res as unknown as ChatCompletionBody;
  return {
    request,
    choices: choicesWith(body, scanned, "copy"),
    response: recordedResponse(body),
    status: "complete",
    traced: true,
  };
}

/**
 * The record of a call the SDK answered: a completion, or (when the server's
 * 2xx answer was not one: text, null, an empty body...) a failed call whose
 * log line says what came. The caller gets the SDK's value either way.
 */
function answeredCall(
  request: RecordedCompletion["request"],
  res: unknown,
  scanned?: readonly (CompactLogprobs | undefined)[],
): RecordedCompletion {
  if (res === null || typeof res !== "object" || Array.isArray(res))
    return notAnswer(request, res, false);
  try {
    return completedCall(request, res as ChatCompletion, scanned);
  } catch (error) {
    return { request, choices: [], status: "error", error, traced: true };
  }
}

function notAnswer(
  request: RecordedCompletion["request"],
  res: unknown,
  streamed: boolean,
): RecordedCompletion {
  const what =
    typeof res === "string"
      ? `a text of ${res.length} characters`
      : res === undefined
        ? "an empty body"
        : res === null
          ? "null (an empty answer or JSON null)"
          : Array.isArray(res)
            ? "a JSON array"
            : `a ${typeof res}`;
  const error = new Error(
    `the server's answer is not a chat completion${streamed ? " stream" : ""} but ${what}; the caller got it as the SDK read it`,
  );
  return { request, choices: [], status: "error", error, streamed, traced: true };
}

/** Sets each Choice's `logprobs` to null, as a server that was not asked for them answers. */
function stripLogprobs(res: unknown): void {
  const choices = (res as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return;
  for (const c of choices)
    if (c && typeof c === "object" && (c as { logprobs?: unknown }).logprobs != null)
      try {
        (c as { logprobs: unknown }).logprobs = null;
      } catch {
        // A frozen Choice (a custom client's): it stays as it came.
      }
}

type StreamLike = IterableStream<ChatCompletionChunk>;

function teeStream(
  stream: StreamLike,
  strip: boolean,
  done: (
    acc: StreamAccumulator,
    status: RecordedCompletion["status"],
    error?: unknown,
    cut?: boolean,
  ) => void,
): void {
  let recorded = false;
  const acc = new StreamAccumulator();
  const finish = (status: RecordedCompletion["status"], error?: unknown, cut?: boolean) => {
    if (recorded) return;
    recorded = true;
    done(acc, status, error, cut);
  };
  const status = (): RecordedCompletion["status"] => {
    const signal = (stream as { controller?: AbortController }).controller?.signal;
    return signal?.aborted ? "aborted" : acc.finished() ? "complete" : "incomplete";
  };
  const onStep = (r: IteratorResult<ChatCompletionChunk>) => {
    if (!r.done) {
      acc.add(r.value);
      // Read into the record: the caller's chunk comes as it would unrecorded.
      if (strip) stripLogprobs(r.value);
      return;
    }
    // The stream ran out before its last chunk, and not because the caller stopped reading.
    const ended = status();
    finish(ended, undefined, ended === "incomplete");
  };
  const onError = (error: unknown) => {
    const aborted = (error as { name?: string })?.name?.includes("Abort");
    finish(aborted ? "aborted" : "error", error);
  };
  watchIterator(stream, onStep, onError, () => finish("incomplete"));
}

/** Options of `recorder.wrap`. */
export interface WrapOptions {
  /**
   * Every completion of this client is the policy's, whatever model name the
   * server answers with (`model.openai({ recorder })` sets it).
   */
  policy?: boolean;
  /**
   * The session a call made outside any rollout records into
   * (`recorder.session(id)`): a session id, or a function read at each call
   * (from your server's own request context, say) that may return none.
   * A call's own `x-trajectory-session` header (in its request options)
   * wins. Default: none, so calls outside rollouts are not recorded.
   */
  session?: string | (() => string | undefined);
}

/**
 * Wraps `client.chat.completions` (and `client.responses`, where the SDK has
 * it), or an `@anthropic-ai/sdk` client's `messages`, so `create` records
 * inside a rollout. Returns the same client type; wrapping twice is a no-op.
 */
export function wrapClient<T extends object>(client: T, options: WrapOptions = {}): T {
  return wrapWithSessions(client, options);
}

/** An `@anthropic-ai/sdk` client: its `messages.create` records, and so do the clients it derives. */
function wrapAnthropic<T extends object>(
  client: T,
  options: WrapOptions,
  sessionOf: SessionOf | undefined,
): T {
  const server = serverAddress((client as { baseURL?: unknown }).baseURL);
  if (!wrapMessages(client, server, options.policy, sessionOf)) return client;
  deriveLike(client, (derived) => wrapWithSessions(derived, options, sessionOf));
  return client;
}

/** {@link wrapClient}, with where calls outside rollouts find their session (`recorder.wrap`). */
export function wrapWithSessions<T extends object>(
  client: T,
  options: WrapOptions = {},
  sessionOf?: SessionOf,
): T {
  const c = client as unknown as {
    chat?: { completions?: Record<string | symbol, unknown> };
  } | null;
  const completions = c?.chat?.completions;
  const chat = isObjectLike(completions) && typeof completions.create === "function";
  if (!chat && !isAnthropicClient(client))
    throw new InvalidArgumentError(
      "recorder.wrap(client)",
      "client",
      "an openai client (with chat.completions.create) or an @anthropic-ai/sdk client (with messages.create)",
      client,
    );
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError(
      "recorder.wrap(client, options)",
      "options",
      "an object",
      options,
    );
  if (!chat || !isObjectLike(completions)) return wrapAnthropic(client, options, sessionOf);
  if ((completions as Record<symbol, unknown>)[WRAPPED]) return client;
  const original = completions.create as AnyFn;
  const server = serverAddress((client as { baseURL?: unknown }).baseURL);
  const create = recordingCreate(original, completions, server, options.policy, sessionOf);
  // Patch the instance: the SDK's own helpers (stream, parse, runTools) call
  // this.create or this._client.post; patching the instance's create covers
  // the ones that go through create.
  Object.defineProperty(completions, "create", {
    value: create,
    configurable: true,
    writable: true,
  });
  Object.defineProperty(completions, WRAPPED, { value: true });
  wrapResponses(client, server, options.policy, sessionOf);
  // openai 5 to 7 derive a client with `new this.constructor(options)`, which
  // has the class's own create: the derived client is wrapped the same way.
  deriveLike(client, (derived) => wrapWithSessions(derived, options, sessionOf));
  return client;
}
