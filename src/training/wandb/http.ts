// How the W&B uploader talks HTTP: one request at a time with three
// deadlines (connecting, the answer's headers, the whole exchange), an answer
// read only up to a cap, and every form of the key scrubbed from what it says.
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { markError, TrajectoryRecorderError } from "../../util/error-family.js";
import { readBodyCapped } from "../../util/index.js";

/** Deadlines of each W&B request, in milliseconds. */
export interface WandbTimeouts {
  /** Until the TCP (and TLS) connection is up. Default 10 000. */
  connectMs?: number;
  /** Until the answer's status and headers arrive. Default 60 000. */
  headersMs?: number;
  /** The whole exchange: sending, waiting and reading the answer. Default 300 000. */
  requestMs?: number;
}

/** Deadlines used when {@link WandbTimeouts} leaves one out. */
export const DEFAULT_WANDB_TIMEOUTS: Required<WandbTimeouts> = {
  connectMs: 10_000,
  headersMs: 60_000,
  requestMs: 300_000,
};

/** Largest W&B answer read, in bytes (GraphQL answers are a few kB). */
export const DEFAULT_WANDB_MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** A request failed in a way the caller reports as one sentence (timeout, oversize). */
export class WandbTransportError extends TrajectoryRecorderError {
  static {
    markError(WandbTransportError, "WandbTransportError");
  }
  constructor(
    message: string,
    /** Whether trying again may help (a timeout may; an oversized answer will not). */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** What came back: the status, headers and the (capped) body. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** One request's settings. */
export interface Exchange {
  fetch: typeof fetch | undefined;
  timeouts: Required<WandbTimeouts>;
  maxAnswerBytes: number;
  signal?: AbortSignal | undefined;
}

/**
 * Sends one request and reads its answer, within the deadlines and the size
 * cap. With the built-in transport the connect deadline is its own; a custom
 * `fetch` cannot tell connecting from waiting, so there the headers deadline
 * covers both.
 */
export async function exchange(
  ex: Exchange,
  url: string,
  init: { method: string; headers: Record<string, string>; body: Uint8Array },
): Promise<Answer> {
  const controller = new AbortController();
  let why: WandbTransportError | undefined;
  const stop = (error: WandbTransportError) => {
    why ??= error;
    controller.abort(error);
  };
  const onAbort = () => controller.abort(ex.signal?.reason);
  if (ex.signal?.aborted) throw ex.signal.reason;
  ex.signal?.addEventListener("abort", onAbort, { once: true });
  const { connectMs, headersMs, requestMs } = ex.timeouts;
  const whole = setTimeout(
    () => stop(timeout(`the whole request took over ${requestMs} ms (timeouts.requestMs)`)),
    requestMs,
  );
  const headersTimer = setTimeout(
    () => stop(timeout(`no answer headers within ${headersMs} ms (timeouts.headersMs)`)),
    headersMs,
  );
  try {
    const doFetch =
      ex.fetch ??
      nodeFetch(connectMs, () =>
        stop(timeout(`no connection within ${connectMs} ms (timeouts.connectMs)`)),
      );
    let response: Response;
    try {
      response = await doFetch(url, {
        method: init.method,
        headers: init.headers,
        // Bytes, never a string: a string body makes fetch add a Content-Type.
        body: init.body as Uint8Array<ArrayBuffer>,
        signal: controller.signal,
        redirect: "error",
      });
    } finally {
      clearTimeout(headersTimer);
    }
    const body = await readBodyCapped(response, ex.maxAnswerBytes);
    if (!body) throw tooLarge(ex.maxAnswerBytes);
    return { status: response.status, headers: response.headers, body };
  } catch (error) {
    if (why) throw why;
    throw error;
  } finally {
    clearTimeout(whole);
    clearTimeout(headersTimer);
    ex.signal?.removeEventListener("abort", onAbort);
  }
}

function timeout(what: string): WandbTransportError {
  return new WandbTransportError(`timed out: ${what}`, true);
}

function tooLarge(maxBytes: number): WandbTransportError {
  return new WandbTransportError(
    `answered more than ${maxBytes} bytes (maxAnswerBytes); nothing past that was read`,
    false,
  );
}

const NULL_BODY = new Set([101, 204, 205, 304]);

// fetch over node:http, so that connecting has its own deadline.
function nodeFetch(connectMs: number, onConnectTimeout: () => void): typeof fetch {
  return ((input: string, init: RequestInit) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input);
      const body = init.body as Uint8Array;
      const headers = { ...(init.headers as Record<string, string>) };
      headers["content-length"] = String(body.byteLength);
      const request = (url.protocol === "https:" ? https : http).request(url, {
        method: init.method,
        headers,
        signal: init.signal ?? undefined,
      });
      const connectTimer = setTimeout(onConnectTimeout, connectMs);
      request.on("socket", (socket) => {
        const secure = url.protocol === "https:";
        if (!socket.connecting && !secure) clearTimeout(connectTimer);
        else socket.once(secure ? "secureConnect" : "connect", () => clearTimeout(connectTimer));
      });
      request.on("response", (res) => {
        clearTimeout(connectTimer);
        const status = res.statusCode ?? 502;
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) answerHeaders.append(name, v);
        }
        if (NULL_BODY.has(status)) res.resume();
        const stream = NULL_BODY.has(status)
          ? null
          : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
        resolve(new Response(stream, { status, headers: answerHeaders }));
      });
      request.on("error", (error) => {
        clearTimeout(connectTimer);
        reject(error);
      });
      request.end(body);
    })) as typeof fetch;
}

/**
 * Removes every form an API key may take in text a server sent back or an
 * error carries: the key itself, URL-encoded, and base64 of `api:<key>` (the
 * Basic header) or of the key alone.
 */
export function redactKey(text: string, apiKey: string): string {
  // Too short a key would blank out ordinary words; such a key is no secret anyway.
  if (apiKey.length < 8) return text;
  const forms = new Set([
    apiKey,
    encodeURIComponent(apiKey),
    Buffer.from(`api:${apiKey}`).toString("base64"),
    Buffer.from(apiKey).toString("base64"),
  ]);
  // base64 of `api:<key>` without its padding, as some servers echo it.
  for (const form of [...forms]) if (form.endsWith("=")) forms.add(form.replace(/=+$/, ""));
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length))
    out = out.split(form).join("[redacted]");
  return out.replace(/\b(Basic|Bearer)\s+[A-Za-z0-9+/=._~-]{8,}/g, "$1 [redacted]");
}
