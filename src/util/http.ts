// The HTTP plumbing every server of the package shares (the recording
// endpoint with the proxy's control API, and the emulator): JSON and error
// answers, request bodies read up to a cap, bearer keys, and the backoff
// between tries of an unreachable upstream. One copy, so that each server
// answers errors in the same shape and reads bodies the same way.
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

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
    { error: { ...errorBody(message, type, code, param).error, ...extra } },
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
