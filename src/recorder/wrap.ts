import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import { StreamAccumulator } from "./accumulate.js";
import { currentRollout, type RecordedChoice, type RecordedCompletion } from "./context.js";
import { endChatSpan, startChatSpan } from "./spans.js";

const WRAPPED = Symbol.for("trajectory-recorder.wrapped");

type Body = Record<string, unknown> & { messages?: unknown[]; stream?: boolean };

function snapshot(body: Body): RecordedCompletion["request"] {
  return structuredClone(body) as RecordedCompletion["request"];
}

function choicesOf(res: ChatCompletion): RecordedChoice[] {
  const promptIds = (res as unknown as { prompt_token_ids?: number[] }).prompt_token_ids;
  return (res.choices ?? []).map((c) => {
    const copy = structuredClone(c) as RecordedChoice;
    if (promptIds && !copy.prompt_token_ids) copy.prompt_token_ids = promptIds;
    return copy;
  });
}

type AnyFn = (...args: unknown[]) => unknown;

function recordingCreate(original: AnyFn, target: object): AnyFn {
  return function create(this: unknown, ...args: unknown[]) {
    const rollout = currentRollout();
    const body0 = args[0] as Body | undefined;
    if (!rollout || !body0 || typeof body0 !== "object")
      return original.apply(this ?? target, args);
    const body: Body = { ...body0 };
    if (rollout.options.logprobs && body.logprobs === undefined) body.logprobs = true;
    if (rollout.options.tokenIds && body.return_token_ids === undefined)
      body.return_token_ids = true;
    const request = snapshot(body);
    const span = startChatSpan(request, rollout.options.recordContent === true);
    const promise = original.apply(this ?? target, [body, ...args.slice(1)]) as Promise<unknown>;
    const fail = (error: unknown) => {
      const call: RecordedCompletion = {
        request,
        choices: [],
        status: "error",
        error,
        streamed: !!body.stream,
      };
      rollout.recordCompletion(call);
      endChatSpan(span, call, rollout.options.recordContent === true);
    };
    promise.then((result) => {
      if (!body.stream) {
        const res = result as ChatCompletion;
        const call: RecordedCompletion = {
          request,
          choices: choicesOf(res),
          response: {
            id: res.id,
            model: res.model,
            usage: res.usage,
            prompt_token_ids: (res as unknown as { prompt_token_ids?: number[] }).prompt_token_ids,
          },
          status: "complete",
        };
        rollout.recordCompletion(call);
        endChatSpan(span, call, rollout.options.recordContent === true);
        return;
      }
      teeStream(
        result as { iterator: () => AsyncIterator<ChatCompletionChunk> },
        (acc, status, error) => {
          const call: RecordedCompletion = {
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
            streamed: true,
          };
          rollout.recordCompletion(call);
          endChatSpan(span, call, rollout.options.recordContent === true);
        },
      );
    }, fail);
    return promise;
  };
}

function teeStream(
  stream: { iterator: () => AsyncIterator<ChatCompletionChunk> },
  done: (acc: StreamAccumulator, status: RecordedCompletion["status"], error?: unknown) => void,
): void {
  const inner = stream.iterator.bind(stream);
  let recorded = false;
  const acc = new StreamAccumulator();
  const finish = (status: RecordedCompletion["status"], error?: unknown) => {
    if (recorded) return;
    recorded = true;
    done(acc, status, error);
  };
  stream.iterator = () => {
    const it = inner();
    return (async function* () {
      let ended = false;
      try {
        while (true) {
          const r = await it.next();
          if (r.done) break;
          acc.add(r.value);
          yield r.value;
        }
        ended = true;
        const signal = (stream as { controller?: AbortController }).controller?.signal;
        finish(signal?.aborted ? "aborted" : acc.finished() ? "complete" : "incomplete");
      } catch (error) {
        ended = true;
        const aborted = (error as { name?: string })?.name?.includes("Abort");
        finish(aborted ? "aborted" : "error", error);
        throw error;
      } finally {
        if (!ended) {
          await it.return?.();
          finish("incomplete");
        }
      }
    })();
  };
}

/**
 * Wraps `client.chat.completions` so `create` records inside a rollout. Returns
 * the same client type; wrapping twice is a no-op.
 */
export function wrapClient<T extends object>(client: T): T {
  const c = client as unknown as { chat?: { completions?: Record<string | symbol, unknown> } };
  const completions = c.chat?.completions;
  if (!completions)
    throw new TypeError("recorder.wrap(client) expects an openai client with chat.completions.");
  if ((completions as Record<symbol, unknown>)[WRAPPED]) return client;
  const original = completions.create as AnyFn;
  const create = recordingCreate(original, completions);
  // Patch the instance: the SDK's own helpers (stream, parse, runTools) call
  // this.create or this._client.post; patching the instance's create covers
  // the ones that go through create.
  Object.defineProperty(completions, "create", {
    value: create,
    configurable: true,
    writable: true,
  });
  Object.defineProperty(completions, WRAPPED, { value: true });
  return client;
}
