// The recording endpoint: an OpenAI-compatible server on loopback that
// records each chat completion into the rollout whose key the call carries.
// A call is sent through the recorder's own wrapped `openai` client (the same
// code a wrapped client in this process runs, so the same Trajectory JSON);
// that client's fetch is ours, so the agent gets the upstream's own bytes:
// status, headers, error body, SSE chunks as they arrive.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { redactSecret } from "../client/index.js";
import { errorMessage } from "../util/error-message.js";
import {
  backoffDelay,
  bearerToken,
  decodeRequestBody,
  errorBody,
  readRequestBody,
  sendError,
  shapeErrorsForAnthropic,
} from "../util/http.js";
import { agentBody, checkCompletion } from "./agent-answer.js";
import { CHAT_API, MESSAGES_API, RESPONSES_API, type RecordedApi } from "./apis.js";
import { unrecordable } from "./chat-body.js";
import {
  agentHeaders,
  answerError,
  CALL_HEADER,
  type Call,
  FINISHED_KEPT,
  forwardedRequestHeaders,
  send,
  tee,
} from "./forward.js";
import type { CallProgress, EndpointRollout, RolloutHost } from "./host.js";
import type { ResolvedEndpointOptions } from "./options.js";
import type { Route, RouteContext } from "./server.js";
import { SseProgress } from "./sse-progress.js";
import { type RecordingUpstream, type UpstreamClient, upstreamClient } from "./upstream.js";
import {
  readAll,
  toResponse,
  type UpstreamAnswer,
  type UpstreamInit,
  UpstreamPool,
} from "./upstream-pool.js";

/** Who may record into a session by naming it. */
export interface SessionAccess {
  /**
   * Whether a call may name its session with `x-trajectory-session`: true
   * when the request carries the control key (or none is needed).
   */
  allowHeader(req: IncomingMessage): boolean;
}

/** What the recording routes are made with. */
export interface RecordingInit {
  upstream: RecordingUpstream;
  host: RolloutHost;
  options: ResolvedEndpointOptions;
  /** Sessions through `x-trajectory-session`; absent: such calls are refused. */
  sessions?: SessionAccess;
  /** Where a streamed call's progress is written as it arrives. */
  progress?: CallProgress;
}

/** The request header that names a call's session. */
export const SESSION_HEADER = "x-trajectory-session";
/** The response header that names the trajectory a call was recorded into (its receipt). */
export const TRAJECTORY_HEADER = "x-trajectory-id";
/** The response header that names the call within its trajectory (1 for the first). */
export const CALL_NUMBER_HEADER = "x-trajectory-call";
/** A session id: 1 to 200 characters of letters, digits and `._:-`. */
export const SESSION_ID = /^[A-Za-z0-9._:-]{1,200}$/;

/**
 * The recording routes: `POST /v1/chat/completions`, `/v1/responses` and
 * `/v1/messages` (Anthropic's), each recorded into the
 * rollout (or session) the call's key or session header names, and
 * `GET /v1/models`, forwarded. Each rollout gets a key ({@link open}); a
 * session is found by its header or by a key of its own ({@link openSessionKey}).
 */
export class RecordingRoutes {
  readonly #upstream: RecordingUpstream;
  readonly #host: RolloutHost;
  readonly #options: ResolvedEndpointOptions;
  readonly #sessions: SessionAccess | undefined;
  readonly #progress: CallProgress | undefined;
  readonly #keys = new Map<string, EndpointRollout | string>();
  readonly #finished = new Set<string>();
  readonly #calls = new Map<string, Call>();
  #nextCall = 0;
  #client: Promise<UpstreamClient> | undefined;
  #upstreamKey: string | undefined;
  readonly #warned = new Set<string>();
  readonly #pool: UpstreamPool;
  /** Trajectories with a call whose receipt went out and whose record may not be written yet. */
  readonly #pending = new Map<string, number>();
  /** Trajectory id -> the write of its latest answered call, while in flight. */
  readonly #saving = new Map<string, Promise<void>>();

  constructor(init: RecordingInit) {
    this.#upstream = init.upstream;
    this.#host = init.host;
    this.#options = init.options;
    this.#sessions = init.sessions;
    this.#progress = init.progress;
    this.#upstreamKey = (init.upstream as { apiKey?: string }).apiKey;
    this.#pool = new UpstreamPool(init.options.maxUpstreamConnections);
  }

  /** The routes to add to an {@link EndpointServer}. */
  routes(): Route[] {
    return [
      ...[CHAT_API, RESPONSES_API, MESSAGES_API].map((api) => ({
        method: "POST",
        path: api.path,
        handle: async ({ req, res }: RouteContext) => {
          if (api === MESSAGES_API) shapeErrorsForAnthropic(res);
          const rollout = this.#authorize(req, res);
          if (rollout) await this.#record(req, res, rollout, api);
        },
      })),
      { method: "GET", path: "/v1/models", handle: (c) => this.#modelsRoute(c, "/models") },
      {
        method: "GET",
        path: "/v1/models/:id",
        // The id as decoded, encoded again: the upstream gets one segment.
        handle: (c) => this.#modelsRoute(c, `/models/${encodeURIComponent(c.params.id ?? "")}`),
      },
    ];
  }

  /** Answers what no route matched: other `/v1` routes are refused (they would reach the model unrecorded). */
  readonly fallback = ({ req, res, path }: RouteContext): void => {
    if (!path.startsWith("/v1/")) {
      sendError(
        res,
        404,
        `No route ${req.method} ${path}: this recording endpoint serves the OpenAI API under /v1 (use the base URL it gave, ending in /v1).`,
        "invalid_request_error",
        "unknown_url",
      );
      return;
    }
    // Refused either way; a caller with the control key is told why without opening a session.
    const named = typeof req.headers[SESSION_HEADER] === "string";
    if (!(named && this.#sessions?.allowHeader(req)) && !this.#authorize(req, res)) return;
    this.#warnOnce(
      `refused ${req.method} ${path}: only chat completions, Responses and Messages API calls are recorded (and /v1/models forwarded)`,
    );
    sendError(
      res,
      404,
      `${req.method} ${path} is not served: this endpoint records calls for training, so it serves POST /v1/chat/completions, POST /v1/responses, POST /v1/messages and GET /v1/models only (another route would reach the model unrecorded).`,
      "invalid_request_error",
      "unknown_url",
    );
  };

  /** A new key for `rollout`: calls carrying it are recorded there until {@link finish}. */
  open(rollout: EndpointRollout): string {
    const key = `trr-${randomBytes(24).toString("base64url")}`;
    this.#keys.set(key, rollout);
    return key;
  }

  /** A key of session `id`'s own: calls carrying it record into that session (opened again if it ended). */
  openSessionKey(id: string): string {
    const key = `trs-${randomBytes(24).toString("base64url")}`;
    this.#keys.set(key, id);
    return key;
  }

  /** Ends `key`: its calls answer 409 from now on. */
  finish(key: string): void {
    if (!this.#keys.delete(key)) return;
    this.#finished.add(key);
    if (this.#finished.size > FINISHED_KEPT) {
      const oldest = this.#finished.values().next().value as string;
      this.#finished.delete(oldest);
    }
  }

  /** Calls forwarded and not answered yet. */
  get inFlight(): number {
    return this.#calls.size;
  }

  /**
   * Resolves once the calls of trajectory `id` already answered are written
   * to the store (a store across the network writes after the answer went out).
   */
  saved(id: string): Promise<void> {
    return this.#saving.get(id) ?? Promise.resolve();
  }

  /** Whether trajectory `id` has a call in flight (its receipt went out; its record may lag). */
  isPending(id: string): boolean {
    return this.#pending.has(id);
  }

  /** Takes the upstream's key out of `text`. */
  readonly redact = (text: string): string => redactSecret(text, this.#upstreamKey);

  #warn(message: string): void {
    this.#options.logger.warn(`trajectory-recorder endpoint: ${message}`);
  }

  #warnOnce(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#warn(message);
  }

  /** The session a call names in its header, if it may: else an answer of 400/401. */
  #sessionOf(req: IncomingMessage, res: ServerResponse, id: string): EndpointRollout | undefined {
    const open = this.#host.session?.bind(this.#host);
    if (!open || !this.#sessions) {
      sendError(
        res,
        400,
        `This endpoint records rollouts only: the ${SESSION_HEADER} header needs the recording proxy (trajectory-recorder proxy).`,
        "invalid_request_error",
        "sessions_not_served",
        SESSION_HEADER,
      );
      return undefined;
    }
    if (!SESSION_ID.test(id)) {
      sendError(
        res,
        400,
        `The ${SESSION_HEADER} header must be 1 to 200 letters, digits or ._:- (got ${JSON.stringify(id.slice(0, 40))}).`,
        "invalid_request_error",
        "invalid_session",
        SESSION_HEADER,
      );
      return undefined;
    }
    if (!this.#sessions.allowHeader(req)) {
      sendError(
        res,
        401,
        `A call naming its session (${SESSION_HEADER}) needs the proxy's key (its apiKey) or the session's own key (POST /v1/sessions).`,
        "invalid_request_error",
        "invalid_api_key",
      );
      return undefined;
    }
    return open(id);
  }

  /** The rollout of the call's key (or session), or an answer of 400 / 401 / 409. */
  #authorize(req: IncomingMessage, res: ServerResponse): EndpointRollout | undefined {
    const key = callerKey(req, (k) => this.#keys.has(k) || this.#finished.has(k));
    const named = req.headers[SESSION_HEADER];
    const target = key === undefined ? undefined : this.#keys.get(key);
    if (typeof target === "string") return this.#host.session?.(target);
    if (
      target === undefined &&
      typeof named === "string" &&
      named !== "" &&
      !this.#finished.has(key ?? "")
    )
      return this.#sessionOf(req, res, named);
    if (!key) {
      sendError(
        res,
        401,
        "No API key was sent: use the rollout's key (t.apiKey) as the client's API key (OPENAI_API_KEY, or ANTHROPIC_API_KEY for an Anthropic SDK), sent as Authorization: Bearer or x-api-key.",
        "invalid_request_error",
        "missing_api_key",
      );
      return undefined;
    }
    if (target && !target.ended) return target;
    if (target || this.#finished.has(key)) {
      sendError(
        res,
        409,
        "This rollout has finished: its trajectory was handed back, and nothing more is recorded into it. Start a new rollout for more calls.",
        "invalid_request_error",
        "rollout_finished",
      );
      return undefined;
    }
    sendError(
      res,
      401,
      "Incorrect API key: it is not the key of a rollout of this recording endpoint.",
      "invalid_request_error",
      "invalid_api_key",
    );
    return undefined;
  }

  async #modelsRoute({ req, res }: RouteContext, rest: string): Promise<void> {
    if (this.#authorize(req, res)) await this.#models(res, rest);
  }

  #upstreamClient(): Promise<UpstreamClient> {
    if (!this.#client) {
      const made = upstreamClient(this.#upstream, this.#host, this.#fetch, this.#options.timeoutMs);
      this.#client = made;
      made.then(
        (c) => {
          this.#upstreamKey = c.apiKey;
        },
        () => {
          this.#client = undefined;
        },
      );
    }
    return this.#client;
  }

  async #record(
    req: IncomingMessage,
    res: ServerResponse,
    rollout: EndpointRollout,
    api: RecordedApi,
  ): Promise<void> {
    const raw = await readRequestBody(req, this.#options.maxBodyBytes);
    if (!raw) {
      res.setHeader("connection", "close");
      sendError(
        res,
        413,
        `The request body is larger than this endpoint accepts (${this.#options.maxBodyBytes} bytes; the endpoint's maxBodyBytes).`,
        "invalid_request_error",
        "request_too_large",
      );
      return;
    }
    const decoded = await decodeRequestBody(
      raw,
      req.headers["content-encoding"],
      this.#options.maxBodyBytes,
    );
    if (!decoded.ok) {
      sendError(res, decoded.status, decoded.message, "invalid_request_error", decoded.code);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(decoded.body.toString("utf8"));
    } catch (error) {
      sendError(
        res,
        400,
        `We could not parse the JSON body of your request (${errorMessage(error)}). The body of POST ${api.path} must be a JSON object.`,
        "invalid_request_error",
        "invalid_json",
      );
      return;
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      sendError(
        res,
        400,
        `The body of POST ${api.path} must be a JSON object, not ${Array.isArray(body) ? "an array" : body === null ? "null" : `a ${typeof body}`}.`,
        "invalid_request_error",
        "invalid_json",
      );
      return;
    }
    const bad = unrecordable(body, api.body);
    if (bad) {
      sendError(
        res,
        400,
        `${bad.message}. The recorder could not record this call, so it was not sent.`,
        "invalid_request_error",
        "invalid_value",
        bad.param,
      );
      return;
    }
    const client = await this.#upstreamClient();
    const sender = await api.sender(client);
    if ("missing" in sender) {
      this.#warnOnce(`refused POST ${api.path}: ${sender.missing}`);
      sendError(
        res,
        501,
        `POST ${api.path} cannot be recorded here: ${sender.missing}. Nothing was sent upstream.`,
        "invalid_request_error",
        "api_not_supported",
      );
      return;
    }
    const abort = new AbortController();
    const id = String(++this.#nextCall);
    const call: Call = {
      res,
      agentHeaders: req.headers,
      strip: api.strip(body as Record<string, unknown>),
      ends: api.ends,
      shape: api.answer,
      auth: api.upstreamAuth?.(client),
    };
    this.#calls.set(id, call);
    // The agent hung up: the upstream call is aborted and recorded as far as it got.
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once("close", onClose);
    const streamed = (body as { stream?: unknown }).stream === true;
    let pendingId: string | undefined;
    try {
      let result: unknown;
      try {
        const before = rollout.calls;
        const sent = api === CHAT_API ? this.#forScan(body as Record<string, unknown>) : body;
        const running = rollout.run(() =>
          sender(sent as Record<string, unknown>, {
            headers: { [CALL_HEADER]: id },
            signal: abort.signal,
          }),
        );
        // The wrapper starts the call as create() is called: its number is known now.
        const number = rollout.calls;
        if (number > before) {
          pendingId = rollout.id;
          this.#pending.set(pendingId, (this.#pending.get(pendingId) ?? 0) + 1);
          call.receipt = {
            [TRAJECTORY_HEADER]: rollout.id,
            [CALL_NUMBER_HEADER]: String(number),
          };
          const progress = this.#progress;
          if (streamed && progress?.progressCall)
            call.progress = new SseProgress((partial) => {
              // Progress is best effort: the call's own write follows it.
              const kept = progress.progressCall?.(rollout.id, number, partial);
              if (kept)
                kept.catch((error: unknown) =>
                  this.#warnOnce(
                    `progress of a streamed call could not be kept: ${errorMessage(error)}`,
                  ),
                );
            }, api.progress());
        }
        result = await running;
      } catch (error) {
        this.#answerError(call, error, abort.signal.aborted);
        return;
      }
      if (streamed) {
        // Reading the SDK's stream is what records it (the wrapper's tee);
        // the bytes themselves went to the agent as they arrived.
        let broken = false;
        try {
          for await (const _ of result as AsyncIterable<unknown>);
        } catch {
          broken = true;
        }
        if (res.destroyed) return;
        for (const bytes of call.held ?? []) res.write(bytes);
        // An upstream that broke off mid-stream: the agent sees it break off
        // too. (An error event in a stream that ended is the agent's to read.)
        if (broken && !call.ended) res.destroy();
        else res.end();
        return;
      }
      send(
        res,
        call.answer && { ...call.answer, body: agentBody(call.answer.body, call.strip, result) },
      );
    } finally {
      this.#calls.delete(id);
      res.off("close", onClose);
      if (pendingId !== undefined) {
        // The answer has gone out; the record is written right after it.
        const saving = rollout.saved?.();
        if (saving) this.#saving.set(pendingId, saving);
        await saving;
        if (this.#saving.get(pendingId) === saving) this.#saving.delete(pendingId);
        const left = (this.#pending.get(pendingId) ?? 1) - 1;
        if (left > 0) this.#pending.set(pendingId, left);
        else this.#pending.delete(pendingId);
      }
    }
  }

  /**
   * The body the wrapped client is given for an unstreamed chat call. The
   * agent's answer is made from the upstream's bytes (agentBody), never from
   * the SDK's objects, so where the recorder asks for logprobs on every call
   * anyway, the agent's own `logprobs: true` is left to it to add: the
   * wrapper then reads the logprobs straight from the answer's text into its
   * columns (its scan) and the SDK parses the rest, instead of the SDK
   * parsing every token and the wrapper copying them. The same body goes
   * upstream either way.
   */
  #forScan(body: Record<string, unknown>): Record<string, unknown> {
    const options = this.#host.options;
    if (!options || (options.logprobs ?? true) !== true) return body;
    if (body.logprobs !== true || body.stream === true) return body;
    const { logprobs: _asked, ...rest } = body;
    return rest;
  }

  /** The agent's answer when the wrapped client threw. */
  #answerError(call: Call, error: unknown, aborted: boolean): void {
    answerError(call, error, aborted, {
      redact: this.redact,
      warn: (m) => this.#warn(m),
      timeoutMs: this.#options.timeoutMs,
      tries: this.#options.maxRetries + 1,
    });
  }

  /** `GET /v1/models[/id]`, forwarded with the upstream's key and not recorded. */
  async #models(res: ServerResponse, rest: string): Promise<void> {
    let client: UpstreamClient;
    try {
      client = await this.#upstreamClient();
      const response = await this.#send(
        `${client.baseURL.replace(/\/+$/, "")}${rest}`,
        {
          headers: { authorization: `Bearer ${client.apiKey}`, accept: "application/json" },
          signal: AbortSignal.timeout(this.#options.timeoutMs),
        },
        true,
      );
      const text = this.redact((await readAll(response.body)).toString("utf8"));
      send(res, {
        status: response.status,
        headers: agentHeaders(response.headers, this.#upstreamKey),
        body: Buffer.from(text),
      });
    } catch (error) {
      const message = this.redact(errorMessage(error));
      this.#warn(`GET /v1${rest} could not be forwarded: ${message}`);
      sendError(
        res,
        502,
        `The upstream could not be reached: ${message}.`,
        "upstream_error",
        "upstream_unreachable",
      );
    }
  }

  /**
   * A request upstream through the pool, tried again (with backoff) while the
   * upstream cannot be reached. A chat completion is not idempotent: it is
   * sent again only when it provably never left ({@link neverSent}); a GET
   * on any network error.
   */
  async #send(url: string | URL, init: UpstreamInit, idempotent = false): Promise<UpstreamAnswer> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#pool.request(url, init);
      } catch (error) {
        if (init.signal?.aborted || attempt >= this.#options.maxRetries) throw error;
        if (!idempotent && !neverSent(error)) throw error;
        const delay = backoffDelay(attempt);
        await new Promise((resolve) => setTimeout(resolve, delay));
        if (init.signal?.aborted) throw error;
      }
    }
  }

  /** The wrapped client's fetch: sends upstream, and hands the agent what came back. */
  readonly #fetch = async (
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> => {
    // The SDKs call fetch(url, init); a Request is read as fetch would.
    if (input instanceof Request) {
      const { url, method, headers, signal } = input;
      const body = input.body ? await input.arrayBuffer() : undefined;
      return this.#fetch(url, { method, headers, body: body ?? null, signal, ...init });
    }
    const headers = new Headers(init?.headers);
    const id = headers.get(CALL_HEADER);
    headers.delete(CALL_HEADER);
    const call = id ? this.#calls.get(id) : undefined;
    if (call)
      for (const [name, value] of forwardedRequestHeaders(call.agentHeaders))
        headers.set(name, value);
    if (call?.auth) {
      headers.delete("authorization");
      headers.delete("x-api-key");
      for (const [name, value] of Object.entries(call.auth)) headers.set(name, value);
    }
    const answer = await this.#send(input, {
      method: init?.method,
      headers,
      body: init?.body,
      signal: init?.signal,
    });
    if (!call) return toResponse(answer);
    const forAgent = agentHeaders(answer.headers, this.#upstreamKey);
    if (call.receipt) Object.assign(forAgent, call.receipt);
    const forSdk = new Headers(answer.headers);
    forSdk.delete("content-length");
    forSdk.delete("content-encoding");
    const init2 = { status: answer.status, statusText: answer.statusText, headers: forSdk };
    if (answer.status < 200 || answer.status >= 300) {
      // An error answer may quote the key it was sent with.
      const text = this.redact((await readAll(answer.body)).toString("utf8"));
      call.answer = { status: answer.status, headers: forAgent, body: Buffer.from(text) };
      return new Response(text, init2);
    }
    const type = answer.headers.get("content-type") ?? "";
    if (type.includes("text/event-stream")) {
      call.res.writeHead(answer.status, forAgent);
      call.res.flushHeaders();
      return new Response(tee(toResponse(answer).body as ReadableStream<Uint8Array>, call), init2);
    }
    // The one read of the answer's bytes: the SDK parses them (and the
    // recorder records from what it parsed); the agent gets them as they
    // came, or spliced (agentBody) once the SDK has read them.
    const bytes = await readAll(answer.body);
    const checked = checkCompletion(answer.status, type, bytes, call.shape);
    call.answer = { status: answer.status, headers: forAgent, body: bytes };
    if (!checked.ok) {
      // The agent gets the upstream's bytes as they came; the SDK gets an
      // error that says what was wrong, so the call is logged as failed.
      const problem = this.redact(checked.problem);
      return new Response(JSON.stringify(errorBody(problem, "upstream_error", "invalid_answer")), {
        status: 502,
        headers: { "content-type": "application/json", "x-should-retry": "false" },
      });
    }
    return new Response(bytes as Uint8Array<ArrayBuffer>, init2);
  };

  /** Closes the connections to the upstream. */
  close(): void {
    this.#pool.close();
  }
}

// Failures that happen before a request's first byte is written: the
// connection was refused or never made, or the name did not resolve.
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * The key a call carries: `Authorization: Bearer` (the OpenAI SDKs) or
 * `x-api-key` (the Anthropic SDKs). Where both come, the one `known` knows wins.
 */
export function callerKey(
  req: IncomingMessage,
  known: (key: string) => boolean,
): string | undefined {
  const bearer = bearerToken(req);
  const header = req.headers["x-api-key"];
  const xKey = typeof header === "string" && header.trim() !== "" ? header.trim() : undefined;
  if (bearer !== undefined && xKey !== undefined && !known(bearer) && known(xKey)) return xKey;
  return bearer ?? xKey;
}

/** Whether fetch failed before anything of the request reached the upstream. */
export function neverSent(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (!cause || typeof cause !== "object") return false;
  // With several addresses tried (happy eyeballs), every one must have failed so.
  const each = (cause as { errors?: unknown[] }).errors;
  const list = Array.isArray(each) && each.length ? each : [cause];
  return list.every((e) => NOT_CONNECTED.has(String((e as { code?: unknown } | null)?.code)));
}
