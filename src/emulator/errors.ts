// Errors the emulator answers with: FastAPI-style `{detail}` for the Training
// Service routes, OpenAI-style `{error}` for chat completions.

/** An error that becomes an HTTP answer with this status and body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    /** Extra response headers, e.g. `connection: close` after a body left unread. */
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body === "string" ? body : JSON.stringify(body));
  }
}

/** `{detail: message}`, as FastAPI answers a raised HTTPException. */
export function detail(status: number, message: string): HttpError {
  return new HttpError(status, { detail: message });
}

/** The body OpenAI and vLLM send for a rejected chat request. */
export function chatError(
  status: number,
  message: string,
  code: string | null,
  param: string | null = null,
  type = "invalid_request_error",
): HttpError {
  return new HttpError(status, { error: { message, type, param, code } });
}
