// The HTTP plumbing every server of the package shares (the recording
// endpoint with the proxy's control API, and the emulator): JSON and error
// answers, request bodies read up to a cap, bearer keys, and the backoff
// between tries of an unreachable upstream. One copy, so that each server
// answers errors in the same shape and reads bodies the same way.
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { brotliDecompress, gunzip, inflate } from "node:zlib";

/** The error body OpenAI's API sends: `{ error: { message, type, param, code } }`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** An OpenAI-style error body. */
export function errorBody(
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

/** Answers whose errors are shaped as Anthropic's API shapes them. */
const ANTHROPIC_SHAPED = new WeakSet<ServerResponse>();

/**
 * Errors sent on `res` from now on carry Anthropic's top-level
 * `"type": "error"` besides OpenAI's `error` object: the Anthropic SDKs read
 * the same `error.type` and `error.message`, so one body suits both.
 */
export function shapeErrorsForAnthropic(res: ServerResponse): void {
  ANTHROPIC_SHAPED.add(res);
}

/** Sends `value` as JSON with `status`, unless an answer already started (then the socket is cut). */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(value);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * Sends `status` with an OpenAI-style error body. The `openai` SDKs retry 409,
 * 429 and 5xx unless the answer says otherwise: a refusal of ours would be
 * the same the next time, so only 429 and the upstream's 502/503/504 invite a retry.
 */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
  extra: Record<string, unknown> = {},
): void {
  const retry = status === 429 || status === 502 || status === 503 || status === 504;
  sendJson(
    res,
    status,
    {
      ...(ANTHROPIC_SHAPED.has(res) ? { type: "error" } : {}),
      error: { ...errorBody(message, type, code, param).error, ...extra },
    },
    { "x-should-retry": retry ? "true" : "false" },
  );
}

/**
 * A request's body, or `undefined` once it holds more than `maxBytes` (a
 * `content-length` above the cap is refused before anything is read). Past
 * the cap nothing more is read or kept: the caller answers 413 with
 * `connection: close`, which drops the rest unread.
 */
export function readRequestBody(
  req: IncomingMessage,
  maxBytes: number,
): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      req.off("data", onData);
      req.pause();
      chunks.length = 0;
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });
}

/** The key of an `Authorization: Bearer <key>` header, if the request sent one. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== "string" || !/^bearer /i.test(header)) return undefined;
  const key = header.slice(7).trim();
  return key === "" ? undefined : key;
}

/** Whether two secrets are equal, in time that does not depend on where they differ. */
export function sameSecret(given: string | undefined, want: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * How long to wait before try `attempt + 1` (0-based): doubling from `baseMs`
 * up to `maxMs`, spread by ±25% so that many clients do not retry in step.
 */
export function backoffDelay(attempt: number, baseMs = 500, maxMs = 8000): number {
  return Math.min(maxMs, baseMs * 2 ** attempt) * (0.75 + Math.random() / 2);
}

/** A request's path without its query string. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** A request body after its `content-encoding` was taken off, or why it could not be. */
export type DecodedBody =
  | { ok: true; body: Buffer }
  | { ok: false; status: 400 | 413 | 415; code: string; message: string };

type Decoder = (b: Buffer, o: { maxOutputLength: number }) => Promise<Buffer>;
const DECODERS: Record<string, Decoder> = {
  gzip: promisify(gunzip) as Decoder,
  "x-gzip": promisify(gunzip) as Decoder,
  deflate: promisify(inflate) as Decoder,
  br: promisify(brotliDecompress) as Decoder,
};

/**
 * Takes a request body's `content-encoding` off (gzip, deflate, br; several
 * in the order they were applied), so that what is re-serialised is the
 * JSON, never the compressed bytes. The decoded body is held to `maxBytes`
 * too, so a small compressed body cannot unpack into a large one.
 */
export async function decodeRequestBody(
  raw: Buffer,
  encoding: string | undefined,
  maxBytes: number,
): Promise<DecodedBody> {
  const codings = (encoding ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  const unknown = codings.find((c) => !DECODERS[c]);
  if (unknown !== undefined)
    return {
      ok: false,
      status: 415,
      code: "unsupported_encoding",
      message: `The request body's content-encoding ${JSON.stringify(unknown.slice(0, 40))} is not supported: send it uncompressed, or as gzip, deflate or br.`,
    };
  let body = raw;
  for (const coding of codings.reverse()) {
    try {
      body = await (DECODERS[coding] as Decoder)(body, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE")
        return {
          ok: false,
          status: 413,
          code: "request_too_large",
          message: `The request body, decoded from ${coding}, is larger than this endpoint accepts (${maxBytes} bytes).`,
        };
      return {
        ok: false,
        status: 400,
        code: "invalid_encoding",
        message: `The request body is not valid ${coding} data, as its content-encoding says (${(error as Error).message}).`,
      };
    }
  }
  return { ok: true, body };
}
