// The recording endpoint: an OpenAI-compatible server on loopback that
// records each chat completion into the rollout whose key the call carries.
// A call is sent through the recorder's own wrapped `openai` client (the same
// code a wrapped client in this process runs, so the same Trajectory JSON);
// that client's fetch is ours, so the agent gets the upstream's own bytes:
// status, headers, error body, SSE chunks as they arrive.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { redactSecret } from "../../client/errors.js";
import { errorMessage } from "../../util/error-message.js";
import { type ActiveRollout, runInRollout } from "../context.js";
import { sendError } from "./errors.js";
import type { ResolvedEndpointOptions } from "./options.js";
import {
  type RecordingUpstream,
  type UpstreamClient,
  upstreamClient,
  type Wrapper,
} from "./upstream.js";

/** Ties a request the wrapped client sends back to the agent's call; never leaves this process. */
const CALL_HEADER = "x-trajectory-recorder-call";
const DONE = Buffer.from("[DONE]");
/** Finished rollouts' keys kept to answer 409 (older ones answer 401). */
const FINISHED_KEPT = 100_000;

// Request headers of the agent's that never go upstream: its key, and what
// belongs to its own connection or is set again for the body sent.
const DROP_REQUEST = new Set([
  "host",
  "authorization",
  "api-key",
  "x-api-key",
  "cookie",
  "content-length",
  "content-type",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "accept-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-authorization",
  "proxy-connection",
  CALL_HEADER,
]);
// Response headers not copied to the agent: they describe the upstream
// connection (fetch has already decoded the body), or hold a credential.
const DROP_RESPONSE = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "content-encoding",
  "trailer",
  "upgrade",
  "set-cookie",
]);

/** What the upstream answered, held until the call is recorded. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One agent call in flight. */
interface Call {
  res: ServerResponse;
  agentHeaders: IncomingMessage["headers"];
  /** A non-streamed answer (or an error), sent once recorded. */
  answer?: Answer;
  /** A stream's last bytes (from `[DONE]` on), sent once recorded. */
  held?: Uint8Array[];
  /** The upstream's stream came to its end (it did not break off). */
  ended?: boolean;
}

/** Extra routes served beside `/v1` (the standalone proxy's control API); true when handled. */
export type ExtraRoutes = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) => boolean | Promise<boolean>;

/** A rollout an endpoint records into, as the recorder's RolloutState is. */
export type EndpointRollout = ActiveRollout & { readonly ended?: boolean };

/**
 * One server per Recorder, started by its first rollout that needs it. Each
 * rollout gets a key; a call is recorded into the rollout whose key it carries.
 */
export class RecordingEndpoint {
  readonly #upstream: RecordingUpstream;
  readonly #wrapper: Wrapper;
  readonly #options: ResolvedEndpointOptions;
  readonly #routes: ExtraRoutes | undefined;
  #server: Server | undefined;
  #starting: Promise<void> | undefined;
  #url: string | undefined;
  readonly #keys = new Map<string, EndpointRollout>();
  readonly #finished = new Set<string>();
  readonly #calls = new Map<string, Call>();
  #nextCall = 0;
  #client: Promise<UpstreamClient> | undefined;
  #upstreamKey: string | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #warned = new Set<string>();

  constructor(
    upstream: RecordingUpstream,
    wrapper: Wrapper,
    options: ResolvedEndpointOptions,
    routes?: ExtraRoutes,
  ) {
    this.#upstream = upstream;
    this.#wrapper = wrapper;
    this.#options = options;
    this.#routes = routes;
    this.#upstreamKey = (upstream as { apiKey?: string }).apiKey;
  }

  /** Listens (once); later calls wait for the same start. */
  start(): Promise<void> {
    this.#starting ??= new Promise<void>((resolve, reject) => {
      const server = createServer((req, res) => {
        this.#handle(req, res).catch((error) => {
          this.#warn(
            `the recording endpoint failed on a request: ${this.#redact(errorMessage(error))}`,
          );
          sendError(res, 500, "The recording endpoint failed on this request.", "server_error");
        });
      });
      server.keepAliveTimeout = 65_000;
      server.on("connection", (socket: Socket) => {
        this.#sockets.add(socket);
        socket.once("close", () => this.#sockets.delete(socket));
      });
      server.once("error", reject);
      server.listen(this.#options.port, this.#options.host, () => {
        server.off("error", reject);
        const { port } = server.address() as AddressInfo;
        const host = this.#options.host.includes(":")
          ? `[${this.#options.host}]`
          : this.#options.host;
        this.#url = `http://${host}:${port}/v1`;
        this.#server = server;
        resolve();
      });
    });
    return this.#starting;
  }

  /** The base URL agents use, ending in `/v1`. Throws before {@link start} has finished. */
  get baseURL(): string {
    if (!this.#url)
      throw new Error("The recording endpoint is not listening yet: await start() first.");
    return this.#url;
  }

  /** Whether the server is listening. */
  get listening(): boolean {
    return this.#url !== undefined && this.#server !== undefined;
  }

  /** A new key for `rollout`: calls carrying it are recorded there until {@link finish}. */
  open(rollout: EndpointRollout): string {
    const key = `trr-${randomBytes(24).toString("base64url")}`;
    this.#keys.set(key, rollout);
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

  /** Stops listening and closes every connection (calls in flight are cut off). */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#url = undefined;
    if (!server) {
      await this.#starting?.catch(() => {});
      if (!this.#server) return;
      return this.close();
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  #warn(message: string): void {
    this.#options.logger.warn(`trajectory-recorder endpoint: ${message}`);
  }

  #warnOnce(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#warn(message);
  }

  #redact(text: string): string {
    return redactSecret(text, this.#upstreamKey);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    if (this.#routes && (await this.#routes(req, res, path))) return;
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
    const rollout = this.#authorize(req, res);
    if (!rollout) return;
    if (path === "/v1/chat/completions") {
      if (req.method !== "POST") {
        res.setHeader("allow", "POST");
        sendError(
          res,
          405,
          `Use POST for ${path}, not ${req.method}.`,
          "invalid_request_error",
          "method_not_allowed",
        );
        return;
      }
      await this.#chat(req, res, rollout);
      return;
    }
    if ((path === "/v1/models" || path.startsWith("/v1/models/")) && req.method === "GET") {
      await this.#models(res, url.slice(3));
      return;
    }
    // Anything else would reach the model unrecorded (a gap in the
    // trajectory nobody sees): refused, said once per route.
    this.#warnOnce(
      `refused ${req.method} ${path}: only chat completions are recorded (and /v1/models forwarded)`,
    );
    sendError(
      res,
      404,
      `${req.method} ${path} is not served: this endpoint records chat completions for training, so it serves POST /v1/chat/completions and GET /v1/models only (another route would reach the model unrecorded).`,
      "invalid_request_error",
      "unknown_url",
    );
  }

  /** The rollout of the call's key, or an answer of 401 / 409. */
  #authorize(req: IncomingMessage, res: ServerResponse): EndpointRollout | undefined {
    const header = req.headers.authorization;
    const key =
      typeof header === "string" && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
    if (!key) {
      sendError(
        res,
        401,
        "No API key was sent: use the rollout's key (t.apiKey) as the client's API key (OPENAI_API_KEY).",
        "invalid_request_error",
        "missing_api_key",
      );
      return undefined;
    }
    const rollout = this.#keys.get(key);
    if (rollout && !rollout.ended) return rollout;
    if (rollout || this.#finished.has(key)) {
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

  #upstreamClient(): Promise<UpstreamClient> {
    if (!this.#client) {
      const made = upstreamClient(
        this.#upstream,
        this.#wrapper,
        this.#fetch,
        this.#options.timeoutMs,
      );
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

  async #chat(req: IncomingMessage, res: ServerResponse, rollout: EndpointRollout): Promise<void> {
    const raw = await readBody(req, this.#options.maxBodyBytes);
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
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch (error) {
      sendError(
        res,
        400,
        `We could not parse the JSON body of your request (${errorMessage(error)}). The body of POST /v1/chat/completions must be a JSON object.`,
        "invalid_request_error",
        "invalid_json",
      );
      return;
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      sendError(
        res,
        400,
        `The body of POST /v1/chat/completions must be a JSON object, not ${Array.isArray(body) ? "an array" : body === null ? "null" : `a ${typeof body}`}.`,
        "invalid_request_error",
        "invalid_json",
      );
      return;
    }
    const client = await this.#upstreamClient();
    const abort = new AbortController();
    const id = String(++this.#nextCall);
    const call: Call = { res, agentHeaders: req.headers };
    this.#calls.set(id, call);
    // The agent hung up: the upstream call is aborted and recorded as far as it got.
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.once("close", onClose);
    const streamed = (body as { stream?: unknown }).stream === true;
    try {
      let result: unknown;
      try {
        result = await runInRollout(rollout, () =>
          client.openai.chat.completions.create(body as never, {
            headers: { [CALL_HEADER]: id },
            signal: abort.signal,
          }),
        );
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
      send(res, call.answer);
    } finally {
      this.#calls.delete(id);
      res.off("close", onClose);
    }
  }

  /** The agent's answer when the wrapped client threw. */
  #answerError(call: Call, error: unknown, aborted: boolean): void {
    const res = call.res;
    if (call.answer) {
      send(res, call.answer);
      return;
    }
    if (aborted || res.destroyed) return;
    // The SDK's error classes, by name (any major of it; no import needed).
    const name = errorClass(error);
    const message = this.#redact(errorMessage(error));
    if (name === "InvalidArgumentError") {
      sendError(
        res,
        400,
        message,
        "invalid_request_error",
        "invalid_value",
        (error as { argument?: string }).argument ?? null,
      );
      return;
    }
    if (name === "APIConnectionTimeoutError") {
      sendError(
        res,
        504,
        `The upstream did not answer within ${this.#options.timeoutMs} ms (the endpoint's timeoutMs).`,
        "upstream_error",
        "upstream_timeout",
      );
      return;
    }
    if (name === "APIConnectionError") {
      const cause = (error as { cause?: unknown }).cause;
      this.#warn(
        `the upstream could not be reached: ${this.#redact(errorMessage(cause ?? error))}`,
      );
      sendError(
        res,
        502,
        `The upstream could not be reached (${this.#options.maxRetries + 1} tries): ${this.#redact(errorMessage(cause ?? error))}.`,
        "upstream_error",
        "upstream_unreachable",
      );
      return;
    }
    this.#warn(`a call could not be forwarded: ${message}`);
    sendError(
      res,
      502,
      `The call could not be forwarded: ${message}`,
      "upstream_error",
      "upstream_error",
    );
  }

  /** `GET /v1/models[/id]`, forwarded with the upstream's key and not recorded. */
  async #models(res: ServerResponse, rest: string): Promise<void> {
    let client: UpstreamClient;
    try {
      client = await this.#upstreamClient();
      const response = await this.#send(`${client.baseURL.replace(/\/+$/, "")}${rest}`, {
        headers: { authorization: `Bearer ${client.apiKey}`, accept: "application/json" },
        signal: AbortSignal.timeout(this.#options.timeoutMs),
      });
      const text = this.#redact(await response.text());
      send(res, {
        status: response.status,
        headers: agentHeaders(response.headers, this.#upstreamKey),
        body: Buffer.from(text),
      });
    } catch (error) {
      const message = this.#redact(errorMessage(error));
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

  /** fetch, tried again (with backoff) while the upstream cannot be reached at all. */
  async #send(input: string | URL | Request, init: RequestInit): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fetch(input, init);
      } catch (error) {
        if (init.signal?.aborted || attempt >= this.#options.maxRetries) throw error;
        const delay = Math.min(8000, 500 * 2 ** attempt) * (0.75 + Math.random() / 2);
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
    const headers = new Headers(init?.headers);
    const id = headers.get(CALL_HEADER);
    headers.delete(CALL_HEADER);
    const call = id ? this.#calls.get(id) : undefined;
    if (call)
      for (const [name, value] of Object.entries(call.agentHeaders)) {
        if (value === undefined || DROP_REQUEST.has(name)) continue;
        headers.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
    const response = await this.#send(input, { ...init, headers });
    if (!call) return response;
    const forAgent = agentHeaders(response.headers, this.#upstreamKey);
    const forSdk = new Headers(response.headers);
    forSdk.delete("content-length");
    forSdk.delete("content-encoding");
    const init2 = { status: response.status, statusText: response.statusText, headers: forSdk };
    if (!response.ok) {
      // An error answer may quote the key it was sent with.
      const text = this.#redact(await response.text());
      call.answer = { status: response.status, headers: forAgent, body: Buffer.from(text) };
      return new Response(text, init2);
    }
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("text/event-stream") && response.body) {
      call.res.writeHead(response.status, forAgent);
      call.res.flushHeaders();
      return new Response(tee(response.body, call), init2);
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    call.answer = { status: response.status, headers: forAgent, body: bytes };
    return new Response(bytes, init2);
  };
}

function errorClass(error: unknown): string {
  const known = ["InvalidArgumentError", "APIConnectionTimeoutError", "APIConnectionError"];
  for (
    let c = (error as object | null)?.constructor;
    c && c !== Object;
    c = Object.getPrototypeOf(c)
  )
    if (known.includes(c.name)) return c.name;
  return (error as { name?: string } | null)?.name ?? "";
}

/** The upstream's response headers as the agent gets them. */
function agentHeaders(headers: Headers, secret: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (DROP_RESPONSE.has(name)) return;
    out[name] = secret && secret.length >= 8 && value.includes(secret) ? "[redacted]" : value;
  });
  return out;
}

function send(res: ServerResponse, answer: Answer | undefined): void {
  if (res.destroyed) return;
  if (!answer) {
    sendError(res, 502, "The upstream sent no answer.", "upstream_error", "upstream_error");
    return;
  }
  res.writeHead(answer.status, { ...answer.headers, "content-length": answer.body.length });
  res.end(answer.body);
}

/**
 * The upstream's SSE body, read as the wrapped client reads it: each chunk
 * goes to the SDK (which records) and to the agent, in order, at the pace
 * the agent reads. From `[DONE]` on, the bytes are held until the call is
 * recorded, so an agent that stops at `[DONE]` and ends its rollout at once
 * still finds its last turn in the trajectory.
 */
function tee(body: ReadableStream<Uint8Array>, call: Call): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let tail: Buffer | undefined;
  const res = call.res;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (error) {
          controller.error(error);
          return;
        }
        if (step.done) {
          call.ended = true;
          controller.close();
          return;
        }
        const chunk = step.value;
        controller.enqueue(chunk);
        if (res.destroyed) return;
        if (call.held) {
          call.held.push(chunk);
          return;
        }
        const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        const done =
          buf.indexOf(DONE) !== -1 ||
          (tail !== undefined && Buffer.concat([tail, buf.subarray(0, 5)]).indexOf(DONE) !== -1);
        if (done) {
          call.held = [chunk];
          return;
        }
        tail = Buffer.from(buf.subarray(Math.max(0, buf.length - 5)));
        if (!res.write(chunk))
          await new Promise<void>((resolve) => {
            const go = () => {
              res.off("drain", go);
              res.off("close", go);
              resolve();
            };
            res.on("drain", go);
            res.on("close", go);
          });
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** The request body, or undefined past `max` bytes. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > max) {
        over = true;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.once("end", () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.once("error", reject);
  });
}
