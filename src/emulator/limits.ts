// Bounds on what one request may ask of the emulator: body size, JSON nesting,
// and the amount of sampling a chat completion may demand.
import type { IncomingMessage } from "node:http";
import { readRequestBody } from "../util/http.js";
import { findJsonProblem } from "../util/json-check.js";
import { chatError, HttpError } from "./errors.js";

/** Default of `maxBodyBytes`: far above a 20 MB group of 80 completions with top-5 logprobs. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Most choices one chat request may ask for (OpenAI's own bound). */
export const MAX_N = 128;
/** Most tokens one choice may ask for. */
export const MAX_TOKENS = 32_768;
/** Most tokens one request may ask for over all its choices (`n × max_tokens`). */
export const MAX_TOTAL_TOKENS = 262_144;
/** Most alternatives per token in `logprobs`. */
export const MAX_TOP_LOGPROBS = 64;

function tooLarge(maxBytes: number, shape: BodyShape): HttpError {
  const message = `The request body is larger than this server accepts (${maxBytes} bytes); send less per request.`;
  const body =
    shape === "chat"
      ? (chatError(413, message, "request_too_large").body as object)
      : { detail: message };
  // The rest of the body is never read: the connection closes after the answer.
  return new HttpError(413, body, { connection: "close" });
}

/** Which error shape a route answers with: OpenAI's for chat, the service's elsewhere. */
export type BodyShape = "chat" | "service";

/**
 * Reads and parses a JSON body of at most `maxBytes`, without holding more
 * than that in memory, and refuses nesting too deep to store or serialize.
 */
export async function readJsonBody(
  req: IncomingMessage,
  maxBytes: number,
  shape: BodyShape = "service",
): Promise<unknown> {
  const bytes = await readRequestBody(req, maxBytes);
  if (!bytes) throw tooLarge(maxBytes, shape);
  return parseBody(bytes);
}

function parseBody(bytes: Buffer): unknown {
  const text = bytes.toString("utf8");
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(422, {
      detail: [{ loc: ["body"], msg: "The request body is not valid JSON.", type: "json_invalid" }],
    });
  }
  const problem = findJsonProblem(value);
  if (problem) {
    throw new HttpError(422, {
      detail: [{ loc: ["body", ...problem.path], msg: problem.message, type: "json_too_deep" }],
    });
  }
  return value;
}

interface ChatBounds {
  n?: number | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  top_logprobs?: number | null;
}

/** Refuses, in OpenAI's error shape, a chat request asking for more sampling than the bounds. */
export function checkChatBounds(body: ChatBounds): void {
  const n = body.n ?? 1;
  if (n > MAX_N) {
    throw chatError(400, `n must be at most ${MAX_N}; got ${n}.`, "invalid_value", "n");
  }
  const field = body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens";
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens != null && maxTokens > MAX_TOKENS) {
    throw chatError(
      400,
      `${field} must be at most ${MAX_TOKENS}; got ${maxTokens}.`,
      "invalid_value",
      field,
    );
  }
  if (maxTokens != null && n * maxTokens > MAX_TOTAL_TOKENS) {
    throw chatError(
      400,
      `n × ${field} must be at most ${MAX_TOTAL_TOKENS} tokens per request; got ${n} × ${maxTokens}. Ask for fewer choices or fewer tokens.`,
      "invalid_value",
      field,
    );
  }
  const top = body.top_logprobs;
  if (top != null && top > MAX_TOP_LOGPROBS) {
    throw chatError(
      400,
      `top_logprobs must be at most ${MAX_TOP_LOGPROBS}; got ${top}.`,
      "invalid_value",
      "top_logprobs",
    );
  }
}
