// Chat completions through the `openai` SDK itself, so callers get its own
// objects (APIPromise, Stream), with the service's error bodies made readable.
import type OpenAI from "openai";
import type {
  ChatCompletionCreateParamsBase,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import {
  ChatCompletionCreateParamsSchema,
  type ChatEngineParams,
  type ChatStructuredOutputs,
} from "../../wire/index.js";
import { RequestValidationError, redactHeaders, redactSecret, serverMessage } from "../errors.js";

/** The service's chat request ({@link ChatCompletions.ServiceChatParams}). */
export type ServiceChatParams<P> = ChatCompletions.ServiceChatParams<P>;

/**
 * `client.chat.completions`: the service's chat completions, answered with the
 * `openai` SDK's own objects (a `Stream` when `stream: true`).
 *
 * @example
 * const completion = await client.chat.completions.create({
 *   model: inferenceModelName({ entity: "me", project: "demo", name: "agent-001" }),
 *   messages: [{ role: "user", content: "hi" }],
 *   logprobs: true,
 *   top_k: 20,
 * });
 */
export class ChatCompletions {
  readonly #openai: () => OpenAI;
  constructor(openai: () => OpenAI) {
    this.#openai = openai;
  }

  /**
   * Creates a chat completion. Malformed params throw `RequestValidationError`
   * before anything is sent; a 422 from the service comes back as the SDK's
   * `UnprocessableEntityError` whose message and `error.detail` carry the service's items.
   */
  create(
    body: ChatCompletions.ServiceChatParams<ChatCompletions.NonStreaming>,
    options?: ChatCompletions.OpenAIRequestOptions,
  ): ChatCompletions.CreateReturns["nonStreaming"];
  /** Creates a streamed chat completion (`stream: true`): the SDK's `Stream`. */
  create(
    body: ChatCompletions.ServiceChatParams<ChatCompletions.Streaming>,
    options?: ChatCompletions.OpenAIRequestOptions,
  ): ChatCompletions.CreateReturns["streaming"];
  /** Creates a chat completion, streamed or not as `stream` says. */
  create(
    body: ChatCompletions.ServiceChatParams<ChatCompletions.Base>,
    options?: ChatCompletions.OpenAIRequestOptions,
  ): ChatCompletions.CreateReturns["either"];
  create(
    body: ChatCompletions.ServiceChatParams<ChatCompletions.Base>,
    options?: ChatCompletions.OpenAIRequestOptions,
  ): unknown {
    const checked = ChatCompletionCreateParamsSchema.safeParse(body);
    if (!checked.success)
      return rejected(new RequestValidationError("chat.completions.create", checked.error));
    return this.#openai().chat.completions.create(body, options);
  }
}

/** The types {@link ChatCompletions.create} takes and returns, read off the `openai` SDK installed. */
export declare namespace ChatCompletions {
  export type { ChatEngineParams, ChatStructuredOutputs };

  /** The SDK's own `client.chat.completions`. */
  export type Completions = OpenAI["chat"]["completions"];
  /** The SDK's request options (headers, timeout, signal, ...). */
  export type OpenAIRequestOptions = Parameters<Completions["create"]>[1];
  /** OpenAI's params of a completion that is not streamed. */
  export type NonStreaming = ChatCompletionCreateParamsNonStreaming;
  /** OpenAI's params of a streamed completion. */
  export type Streaming = ChatCompletionCreateParamsStreaming;
  /** OpenAI's params, streamed or not. */
  export type Base = ChatCompletionCreateParamsBase;
  /**
   * The SDK's own return types, read off its overloads (the module that
   * declares the SDK's APIPromise moved between openai 4 and 5).
   */
  export type CreateReturns = Completions["create"] extends {
    (body: NonStreaming, options?: OpenAIRequestOptions): infer A;
    (body: Streaming, options?: OpenAIRequestOptions): infer B;
    (body: Base, options?: OpenAIRequestOptions): infer C;
  }
    ? { nonStreaming: A; streaming: B; either: C }
    : never;
  /** The service's chat request: OpenAI's params plus the engine's own fields. */
  export type ServiceChatParams<P> = P & ChatCompletions.ChatEngineParams;
}
// Exactly the type of its schema in the wire folder.

/**
 * A rejected promise shaped like the SDK's APIPromise, so bad input rejects
 * as every other method does, and `withResponse()` rejects the same way.
 */
function rejected(error: Error): Promise<never> {
  const promise = Promise.reject(error);
  // A caller may only use withResponse(): this one must not go unhandled then.
  promise.catch(() => {});
  return Object.assign(promise, {
    withResponse: () => Promise.reject(error),
    asResponse: () => Promise.reject(error),
  });
}

/** `client.chat`. */
export class Chat {
  /** `client.chat.completions.create(...)`: inference on the service's OpenAI-compatible endpoint. */
  readonly completions: ChatCompletions;
  constructor(openai: () => OpenAI) {
    this.completions = new ChatCompletions(openai);
  }
}

/** Options of {@link serviceErrorFetch}. */
export interface ServiceErrorFetchOptions {
  /** The API key, masked wherever an error body echoes it back. */
  apiKey?: string;
  /** The client's base URL: a 404 from one without `/v1` says so. */
  baseURL?: string;
}

/**
 * Wraps a fetch so that error answers shaped `{detail: ...}` (FastAPI's) reach
 * the `openai` SDK as `{error: {message, detail}}`, the shape it reads, with a
 * message naming the method and path. Without this a 422 shows up as
 * "422 status code (no body)". An API key echoed in the body is masked.
 *
 * @example
 * new OpenAI({ apiKey, baseURL, fetch: serviceErrorFetch(globalThis.fetch, { apiKey }) });
 */
export function serviceErrorFetch(
  inner?: typeof fetch,
  options: ServiceErrorFetchOptions = {},
): typeof fetch {
  return async (input, init) => {
    const response = await (inner ?? globalThis.fetch)(input, init);
    if (response.ok) return response;
    const text = redactSecret(await response.text(), options.apiKey);
    const rewritten = rewriteErrorBody(
      text,
      describeTarget(input, init),
      response.status === 404 ? missingVersionHint(options.baseURL) : undefined,
    );
    // The SDK keeps these on its error, where inspect() and logs would show them.
    const headers = redactHeaders(response.headers, options.apiKey);
    headers.delete("content-length");
    headers.delete("content-encoding");
    if (rewritten !== text) headers.set("content-type", "application/json");
    return new Response(rewritten, {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  };
}

/** `POST /v1/chat/completions`, from what fetch was called with. */
function describeTarget(input: Parameters<typeof fetch>[0], init?: RequestInit): string {
  const request = typeof input === "object" && "method" in input ? input : undefined;
  const method = (init?.method ?? request?.method ?? "GET").toUpperCase();
  const url = request ? request.url : String(input);
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {}
  return `${method} ${path}`;
}

/** Says when a base URL lacks the `/v1` every route of the service starts with. */
function missingVersionHint(baseURL: string | undefined): string | undefined {
  if (!baseURL) return undefined;
  const base = baseURL.replace(/\/+$/, "");
  let path = "";
  try {
    path = new URL(base).pathname;
  } catch {}
  if (/\/v\d+$/.test(path)) return undefined;
  return `The base URL ${base} does not end in /v1, where the service's routes are; try ${base}/v1.`;
}

function withHint(message: string, hint: string): string {
  return `${message}${/[.!?]$/.test(message) ? "" : "."} ${hint}`;
}

function rewriteErrorBody(text: string, target: string, hint?: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const said = text.trim() === "" ? `${target} failed` : `${target} failed: ${text.trim()}`;
    if (!hint) return text.trim() === "" ? text : JSON.stringify({ error: { message: said } });
    return JSON.stringify({ error: { message: withHint(said, hint) } });
  }
  if (typeof body !== "object" || body === null) return text;
  if ("error" in body) {
    const error = (body as { error: unknown }).error;
    if (!hint || typeof error !== "object" || error === null) return text;
    const message = (error as { message?: unknown }).message;
    return JSON.stringify({
      ...body,
      error: { ...error, message: withHint(typeof message === "string" ? message : target, hint) },
    });
  }
  const said = serverMessage(body);
  const message = said ? `${target} failed: ${said}` : `${target} failed`;
  return JSON.stringify({
    error: { ...(body as object), message: hint ? `${message} ${hint}` : message },
  });
}
