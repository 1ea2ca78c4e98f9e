// The recording endpoint's connections to its upstream: node:http (or https)
// through one keep-alive agent per protocol, capped at `maxConnections` open
// at once (more calls wait for a free one), so that a burst of rollouts
// neither opens a socket per call nor an unbounded number of them. It answers
// with the upstream's status, headers and body still unread: a JSON answer is
// read once into a Buffer, an event stream handed on as it arrives. Failures
// take the shapes fetch gives them (a TypeError whose cause is the socket's
// error, the signal's reason when aborted), which the `openai` SDK and
// `neverSent` read.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

/** What a request upstream is sent with (the part of fetch's `RequestInit` the SDKs use). */
export interface UpstreamInit {
  method?: string | undefined;
  headers?: HeadersInit | undefined;
  body?: BodyInit | null | undefined;
  signal?: AbortSignal | null | undefined;
}

/** The upstream's answer, its body not read yet. */
export interface UpstreamAnswer {
  status: number;
  statusText: string;
  headers: Headers;
  /** The body as it arrives, decoded when the upstream compressed it anyway. */
  body: Readable;
}

/** Statuses whose answers have no body (a Response refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * Keep-alive connections to the upstream, at most `maxConnections` open per
 * origin at once. One pool per endpoint; {@link close} ends its sockets.
 */
export class UpstreamPool {
  readonly #http: HttpAgent;
  readonly #https: HttpsAgent;

  constructor(maxConnections: number) {
    const options = {
      keepAlive: true,
      maxSockets: maxConnections,
      maxTotalSockets: maxConnections,
      maxFreeSockets: maxConnections,
    };
    this.#http = new HttpAgent(options);
    this.#https = new HttpsAgent(options);
  }

  /** Sends one request; resolves with the answer's head once it arrives. */
  async request(url: string | URL, init: UpstreamInit = {}): Promise<UpstreamAnswer> {
    const target = typeof url === "string" ? new URL(url) : url;
    const body = await bodyBytes(init.body);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (body) headers["content-length"] = String(body.byteLength);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const https = target.protocol === "https:";
    const send = https ? httpsRequest : httpRequest;
    return new Promise<UpstreamAnswer>((resolve, reject) => {
      const req = send(target, {
        method: init.method ?? "GET",
        headers,
        agent: https ? this.#https : this.#http,
      });
      let answered: IncomingMessage | undefined;
      const onAbort = () => {
        const reason = abortReason(signal) as Error;
        // After the head, the body's reader sees the abort as its stream's error.
        if (answered) answered.destroy(reason);
        req.destroy(reason);
        reject(reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", (error) => {
        signal?.removeEventListener("abort", onAbort);
        if (signal?.aborted) reject(abortReason(signal));
        else reject(new TypeError("fetch failed", { cause: error }));
      });
      req.once("response", (message) => {
        answered = message;
        // Read by the body's reader; a stray one after it is not this process's end.
        message.on("error", () => {});
        message.once("close", () => signal?.removeEventListener("abort", onAbort));
        resolve({
          status: message.statusCode ?? 502,
          statusText: message.statusMessage ?? "",
          headers: headersOf(message),
          body: decoded(message),
        });
      });
      req.end(body);
    });
  }

  /** Closes every connection, idle or not. */
  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}

/** A body read whole; an upstream that breaks off mid-body rejects. */
export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/** The answer as a fetch `Response` (its body streamed as it arrives). */
export function toResponse(answer: UpstreamAnswer): Response {
  const init = { status: answer.status, statusText: answer.statusText, headers: answer.headers };
  if (NO_BODY.has(answer.status)) {
    answer.body.resume();
    return new Response(null, init);
  }
  return new Response(Readable.toWeb(answer.body) as ReadableStream<Uint8Array>, init);
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function headersOf(message: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = message.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2)
    headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/**
 * The body as the SDK expects it: fetch decodes a compressed answer, so this
 * does too (the endpoint asks for none, but a server may compress anyway).
 */
function decoded(message: IncomingMessage): Readable {
  const coding = String(message.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    coding === "gzip" || coding === "x-gzip"
      ? createGunzip()
      : coding === "deflate"
        ? createInflate()
        : coding === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return message;
  message.on("error", (error) => decoder.destroy(error));
  message.on("close", () => {
    if (!message.complete) decoder.destroy(new Error("the upstream's answer was cut off"));
  });
  return message.pipe(decoder);
}

/** A request body as bytes (the SDKs send JSON text; anything else is read through a Response). */
async function bodyBytes(body: BodyInit | null | undefined): Promise<Uint8Array | undefined> {
  if (body === null || body === undefined) return undefined;
  if (typeof body === "string") return Buffer.from(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return new Uint8Array(await new Response(body).arrayBuffer());
}
