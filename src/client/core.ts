// The one request path every resource goes through: URL building, auth,
// validation, timeouts, retries and error mapping.
import { z } from "zod";
import { findJsonProblem } from "../util/json-check.js";
import { IdSchema } from "../wire/index.js";
import { APIPromise, type WithResponse } from "./api-promise.js";
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  RequestValidationError,
  redactHeaders,
  redactSecret,
} from "./errors.js";
import { abortableSleep, isRetryableError, retryDelay } from "./retry.js";

const PathParamsSchema = z.record(z.string(), IdSchema);

const RequestOptionsSchema = z
  .object({
    timeout: z.number().positive().optional(),
    maxRetries: z.number().int().min(0).optional(),
    signal: z.instanceof(AbortSignal, { error: "expected an AbortSignal" }).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    idempotent: z.boolean().optional(),
  })
  .optional();

/** Per-call options accepted by every client method as its last argument. */
export interface RequestOptions {
  /** Overrides the client's timeout for this call, in ms. */
  timeout?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /**
   * Marks a POST as safe to repeat, so it is retried like a GET. Training job
   * creation is never retried unless this is `true`: a lost answer followed by
   * a retry could start a second job.
   */
  idempotent?: boolean;
}

/** Settings of the request core, resolved by `TrainingClient`. */
export interface CoreSettings {
  baseURL: string;
  timeout: number;
  maxRetries: number;
  fetch: typeof fetch | undefined;
  defaultHeaders: Record<string, string>;
  userAgent: string;
}

/** One call, as a resource describes it. */
export interface RequestSpec<Out> {
  /** Name used in validation messages, e.g. `models.create`. */
  operation: string;
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /**
   * A body already serialized and checked (the shipper's prepared groups):
   * sent as it is, neither validated nor stringified again.
   */
  rawBody?: RawBody;
  /** Validates the body or query before sending; a failure rejects with RequestValidationError. */
  paramsSchema?: z.ZodType;
  params?: unknown;
  /** Ids that go into the path; each must be a non-empty string. */
  pathParams?: Record<string, unknown>;
  responseSchema: z.ZodType<Out>;
  options?: RequestOptions | undefined;
  /** Whether this call may be repeated safely without the caller saying so. */
  safeToRetry?: boolean;
}

/**
 * Builds one of the client's resources (`Models`, `TrainingJobs`, ...). Their
 * constructors are private, so that their declarations do not name this
 * module's `RequestCore`: only the client and the resources build them, here.
 */
export function buildResource<R>(resource: { prototype: R }, core: RequestCore): R {
  return new (resource as unknown as new (core: RequestCore) => R)(core);
}

/** Runs requests for the client. Holds the key in a private field only. */
export class RequestCore {
  readonly #apiKey: string;
  readonly #settings: CoreSettings;

  constructor(apiKey: string, settings: CoreSettings) {
    this.#apiKey = apiKey;
    this.#settings = settings;
  }

  request<Out>(spec: RequestSpec<Out>): APIPromise<Out> {
    return new APIPromise(this.#run(spec));
  }

  /** Like {@link request} but resolves to the raw `{data, response}`. */
  requestRaw<Out>(spec: RequestSpec<Out>): Promise<WithResponse<Out>> {
    return this.#run(spec);
  }

  async #run<Out>(spec: RequestSpec<Out>): Promise<WithResponse<Out>> {
    const checkedOptions = RequestOptionsSchema.safeParse(spec.options);
    if (!checkedOptions.success) {
      const issue = checkedOptions.error.issues[0] as z.core.$ZodIssue;
      throw RequestValidationError.at(spec.operation, ["options", ...issue.path], issue.message);
    }
    if (spec.pathParams) {
      const checked = PathParamsSchema.safeParse(spec.pathParams);
      if (!checked.success) throw new RequestValidationError(spec.operation, checked.error);
    }
    if (spec.paramsSchema) {
      const checked = spec.paramsSchema.safeParse(spec.params);
      if (!checked.success) throw new RequestValidationError(spec.operation, checked.error);
    }
    // Serialized here, not inside an attempt: a BigInt, a cycle or runaway
    // nesting is the caller's mistake, not a connection error to retry.
    const problem = spec.body === undefined ? undefined : findJsonProblem(spec.body);
    if (problem) throw RequestValidationError.at(spec.operation, problem.path, problem.message);
    const body = spec.rawBody ?? (spec.body === undefined ? undefined : JSON.stringify(spec.body));
    const opts = spec.options ?? {};
    const headers = this.#headers(spec.operation, body !== undefined, opts.headers);
    if (spec.rawBody) headers.set("content-length", String(spec.rawBody.byteLength));
    const url = this.#url(spec.path, spec.query);
    const target: APIError.RequestTarget = { method: spec.method, path: url.pathname };
    const retryAllowed = spec.safeToRetry === true || opts.idempotent === true;
    const maxRetries = retryAllowed ? (opts.maxRetries ?? this.#settings.maxRetries) : 0;

    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#attempt(spec, { url, headers, body }, target, opts);
      } catch (err) {
        if (attempt >= maxRetries || !isRetryableError(err)) throw err;
        const headers = err instanceof APIError ? err.headers : undefined;
        try {
          await abortableSleep(retryDelay(attempt, { headers }), opts.signal);
        } catch {
          throw new APIUserAbortError(target);
        }
      }
    }
  }

  async #attempt<Out>(
    spec: RequestSpec<Out>,
    {
      url,
      headers,
      body: payload,
    }: { url: URL; headers: Headers; body: string | RawBody | undefined },
    target: APIError.RequestTarget,
    opts: RequestOptions,
  ): Promise<WithResponse<Out>> {
    const timeout = opts.timeout ?? this.#settings.timeout;
    const timer = new AbortController();
    const handle = setTimeout(() => timer.abort(), timeout);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timer.signal]) : timer.signal;
    const doFetch = this.#settings.fetch ?? globalThis.fetch;
    let response: Response;
    let text: string;
    try {
      // A raw body goes as a stream of its pieces, made afresh for each
      // attempt; `duplex` is what fetch requires of a streamed request body.
      const init: RequestInit & { duplex?: "half" } =
        typeof payload === "object"
          ? { method: spec.method, headers, body: bodyStream(payload), signal, duplex: "half" }
          : { method: spec.method, headers, body: payload, signal };
      response = await doFetch(url, init);
      text = await response.text();
    } catch (err) {
      if (opts.signal?.aborted) throw new APIUserAbortError(target);
      if (timer.signal.aborted) throw new APIConnectionTimeoutError(target, timeout);
      throw new APIConnectionError(target, err);
    } finally {
      clearTimeout(handle);
    }
    if (!response.ok) {
      const body = parseBody(redactSecret(text, this.#apiKey));
      throw APIError.generate(
        target,
        response.status,
        body,
        redactHeaders(response.headers, this.#apiKey),
        this.#hint(response),
      );
    }
    const body = parseBody(text);
    const parsed = spec.responseSchema.safeParse(body ?? {});
    if (!parsed.success) {
      // The body is kept for debugging, minus any echo of the key.
      throw new APIError(
        target,
        response.status,
        parseBody(redactSecret(text, this.#apiKey)),
        redactHeaders(response.headers, this.#apiKey),
        `${target.method} ${target.path} returned a body this client does not understand: ${parsed.error.issues
          .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
          .join("; ")}.`,
      );
    }
    return { data: parsed.data, response };
  }

  /** A 404 from a base URL without `/v1` is the URL's fault, not the resource's: say so. */
  #hint(response: Response): string | undefined {
    if (response.status !== 404) return undefined;
    const base = this.#settings.baseURL.replace(/\/+$/, "");
    if (/\/v\d+$/.test(new URL(base).pathname)) return undefined;
    return `The base URL ${base} does not end in /v1, where the service's routes are; try ${base}/v1.`;
  }

  #url(path: string, query: RequestSpec<unknown>["query"]): URL {
    const base = this.#settings.baseURL.replace(/\/+$/, "");
    const url = new URL(`${base}${path}`);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  #headers(
    operation: string,
    hasBody: boolean,
    extra: Record<string, string> | undefined,
  ): Headers {
    const headers = new Headers({
      accept: "application/json",
      "user-agent": this.#settings.userAgent,
    });
    const add = (from: Record<string, string> | undefined, where: string) => {
      for (const [name, value] of Object.entries(from ?? {})) {
        try {
          headers.set(name, value);
        } catch {
          // The value is left out of the message: a header may hold a secret.
          throw RequestValidationError.at(
            operation,
            [where, name],
            "expected a valid HTTP header name and a value without line breaks, NUL or characters above U+00FF",
          );
        }
      }
    };
    add(this.#settings.defaultHeaders, "defaultHeaders");
    add(extra, "options.headers");
    if (hasBody) headers.set("content-type", "application/json");
    headers.set("authorization", `Bearer ${this.#apiKey}`);
    return headers;
  }
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Encodes one path segment. Ids are user input and checked later by
 * `pathParams`, so this never throws: a method must reject, not throw.
 */
export function segment(id: unknown): string {
  try {
    return typeof id === "string" ? encodeURIComponent(id) : "";
  } catch {
    return "";
  }
}

/** A body already serialized, in pieces that are sent in order and never joined. */
export interface RawBody {
  readonly parts: readonly Uint8Array[];
  readonly byteLength: number;
}

const utf8 = new TextEncoder();
const COMMA = utf8.encode(",");

/**
 * A JSON body put together from pieces already serialized: `head`, the
 * items (each in its pieces) joined by commas as a JSON array, then `tail`.
 */
export function jsonBody(
  head: string,
  items: readonly (readonly Uint8Array[])[],
  tail: string,
): RawBody {
  const parts: Uint8Array[] = [utf8.encode(`${head}[`)];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(...item);
  });
  parts.push(utf8.encode(`]${tail}`));
  let byteLength = 0;
  for (const part of parts) byteLength += part.byteLength;
  return { parts, byteLength };
}

/**
 * A JSON object body whose group list was written already: `fields` as
 * `JSON.stringify` writes them, in their order, then `key` holding the
 * prepared groups' bytes as a list (the bytes are not copied).
 *
 * @example
 * groupsBody({ split: "val" }, "trajectory_groups", prepared.map((g) => g.chunks));
 */
export function groupsBody(
  fields: Record<string, unknown>,
  key: string,
  groups: readonly (readonly Uint8Array[])[],
): RawBody {
  const { [key]: _replaced, ...rest } = fields;
  const head = JSON.stringify(rest);
  const open = head === "{}" ? "{" : `${head.slice(0, -1)},`;
  return jsonBody(`${open}${JSON.stringify(key)}:`, groups, "}");
}

// Where setImmediate is missing (not Node), a timer gives the turn instead.
const nextTurn = () =>
  new Promise<void>((resolve) =>
    typeof setImmediate === "function" ? setImmediate(resolve) : setTimeout(resolve, 0),
  );

/** The most a raw body hands to fetch at once. */
const PIECE_BYTES = 256 * 1024;

/**
 * A raw body as a stream, at most {@link PIECE_BYTES} per read, with a turn
 * of the event loop after each: the bytes go out without being copied into
 * one buffer, and a 20 MB body never holds the loop while it is written.
 */
function bodyStream(raw: RawBody): ReadableStream<Uint8Array> {
  let index = 0;
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (index < raw.parts.length && offset >= (raw.parts[index] as Uint8Array).byteLength) {
        index += 1;
        offset = 0;
      }
      const part = raw.parts[index];
      if (part === undefined) {
        controller.close();
        return;
      }
      const end = Math.min(part.byteLength, offset + PIECE_BYTES);
      controller.enqueue(part.subarray(offset, end));
      offset = end;
      await nextTurn();
    },
  });
}
