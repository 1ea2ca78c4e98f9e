// Answers in the shape OpenAI's API uses for errors, so that any client (the
// Python SDK's APIStatusError, the Node SDK's, curl) reads the message.
import type { ServerResponse } from "node:http";

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

/** Sends `status` with an OpenAI-style error body, unless an answer already started. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(errorBody(message, type, code, param));
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    // The openai SDKs retry 409 and 5xx unless told: our own refusals would
    // answer the same again; an unreachable upstream may come back.
    "x-should-retry": status === 502 || status === 504 ? "true" : "false",
  });
  res.end(text);
}
