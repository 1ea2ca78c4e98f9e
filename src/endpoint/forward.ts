// What the recording endpoint does with each forwarded call's bytes: the
// headers that never cross, the upstream's answer held until the call is
// recorded, a stream teed to the agent as it arrives, and the error answers
// when the call could not be forwarded.
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorMessage } from "../util/error-message.js";
import { sendError } from "../util/http.js";
import { type AnswerShape, SseStripper, type Strip } from "./agent-answer.js";
import type { SseProgress } from "./sse-progress.js";

/** Ties a request the wrapped client sends back to the agent's call; never leaves this process. */
export const CALL_HEADER = "x-trajectory-recorder-call";
/** Where a chat completion stream ends: its bytes from here on are held until recorded. */
export const CHAT_STREAM_ENDS: readonly Buffer[] = [Buffer.from("[DONE]")];
/** Finished rollouts' keys kept to answer 409 (older ones answer 401). */
export const FINISHED_KEPT = 100_000;

// Request headers of the agent's that never go upstream: its key, what
// belongs to its own connection (hop-by-hop: `expect` was answered here with
// 100 Continue, fetch refuses it anyway), and what describes the body as the
// agent sent it (the body sent upstream is the JSON re-serialised,
// uncompressed).
const DROP_REQUEST = new Set([
  "host",
  "authorization",
  "api-key",
  "x-api-key",
  "cookie",
  "content-length",
  "content-type",
  "content-encoding",
  "content-md5",
  "digest",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "accept-encoding",
  "expect",
  "te",
  "trailer",
  "upgrade",
  "http2-settings",
  CALL_HEADER,
  "x-trajectory-session",
]);

/**
 * The agent's request headers that go upstream with its call: none of
 * {@link DROP_REQUEST}, no `proxy-*` header, and none the agent's own
 * `connection` header names as hop-by-hop.
 */
export function forwardedRequestHeaders(
  headers: IncomingMessage["headers"],
): Array<[string, string]> {
  const connection = String(headers.connection ?? "")
    .split(",")
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || DROP_REQUEST.has(name) || name.startsWith("proxy-")) continue;
    if (connection.includes(name)) continue;
    out.push([name, Array.isArray(value) ? value.join(", ") : value]);
  }
  return out;
}
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
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One agent call in flight. */
export interface Call {
  res: ServerResponse;
  agentHeaders: IncomingMessage["headers"];
  /** A non-streamed answer (or an error), sent once recorded. */
  answer?: Answer;
  /** A stream's last bytes (from `[DONE]` on), sent once recorded. */
  held?: Uint8Array[];
  /**
   * What marks a stream's last event (chat's `[DONE]`, the Responses API's
   * terminal event, Messages' `message_stop`). Default {@link CHAT_STREAM_ENDS}.
   */
  ends?: readonly Buffer[];
  /** The upstream's stream came to its end (it did not break off). */
  ended?: boolean;
  /** The receipt headers of a recorded call. */
  receipt?: Record<string, string>;
  /** Writes a streamed answer's progress to the store. */
  progress?: SseProgress;
  /** What the agent did not ask for and is not handed (the trajectory keeps it). */
  strip?: Strip | undefined;
  /** What a 2xx answer must be (default: a chat completion). */
  shape?: AnswerShape;
  /** The upstream's credential header, replacing the one the SDK sent. */
  auth?: Record<string, string>;
}

/** What {@link answerError} needs of the endpoint. */
export interface ErrorContext {
  redact(text: string): string;
  warn(message: string): void;
  timeoutMs: number;
  tries: number;
}

/** The agent's answer when the wrapped client threw. */
export function answerError(call: Call, error: unknown, aborted: boolean, ctx: ErrorContext): void {
  const res = call.res;
  if (call.answer) {
    send(res, call.answer);
    return;
  }
  if (aborted || res.destroyed) return;
  // The SDK's error classes, by name (any major of it; no import needed).
  const name = errorClass(error);
  const message = ctx.redact(errorMessage(error));
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
      `The upstream did not answer within ${ctx.timeoutMs} ms (the endpoint's timeoutMs).`,
      "upstream_error",
      "upstream_timeout",
    );
    return;
  }
  if (name === "APIConnectionError") {
    const cause = (error as { cause?: unknown }).cause;
    ctx.warn(`the upstream could not be reached: ${ctx.redact(errorMessage(cause ?? error))}`);
    sendError(
      res,
      502,
      `The upstream could not be reached: ${ctx.redact(errorMessage(cause ?? error))}. (A refused connection is tried ${ctx.tries} times; a call that may have reached the upstream is never sent again.)`,
      "upstream_error",
      "upstream_unreachable",
    );
    return;
  }
  ctx.warn(`a call could not be forwarded: ${message}`);
  sendError(
    res,
    502,
    `The call could not be forwarded: ${message}`,
    "upstream_error",
    "upstream_error",
  );
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
export function agentHeaders(headers: Headers, secret: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (DROP_RESPONSE.has(name)) return;
    out[name] = secret && secret.length >= 8 && value.includes(secret) ? "[redacted]" : value;
  });
  return out;
}

export function send(res: ServerResponse, answer: Answer | undefined): void {
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
 * the agent reads. From `[DONE]` on (or the API's last event, `call.ends`),
 * the bytes are held until the call is recorded, so an agent that stops
 * there and ends its rollout at once still finds its last turn in the trajectory.
 */
export function tee(body: ReadableStream<Uint8Array>, call: Call): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let tail: Buffer | undefined;
  const res = call.res;
  const stripper = call.strip ? new SseStripper(call.strip) : undefined;
  const ends = call.ends ?? CHAT_STREAM_ENDS;
  // Enough of the previous chunk's end to find a marker split across two chunks.
  const keep = Math.max(...ends.map((m) => m.length)) - 1;
  const ended = (buf: Buffer) => ends.some((m) => buf.indexOf(m) !== -1);
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
          const rest = stripper?.flush();
          if (rest?.length) {
            call.held ??= [];
            call.held.push(rest);
          }
          controller.close();
          return;
        }
        controller.enqueue(step.value);
        call.progress?.add(step.value);
        if (res.destroyed) return;
        // The SDK (which records) reads the upstream's bytes; the agent, what it asked for.
        const chunk = stripper ? stripper.push(step.value) : step.value;
        if (chunk.byteLength === 0) return;
        if (call.held) {
          call.held.push(chunk);
          return;
        }
        const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        const done =
          ended(buf) || (tail !== undefined && ended(Buffer.concat([tail, buf.subarray(0, keep)])));
        if (done) {
          call.held = [chunk];
          return;
        }
        tail = Buffer.from(buf.subarray(Math.max(0, buf.length - keep)));
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
