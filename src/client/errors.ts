// Error classes of the client. Messages are sentences naming the method, the
// path and what the server said; none of them ever holds the API key.
import { z } from "zod";
import { markError, TrajectoryRecorderError } from "../util/error-family.js";
import { formatZodPath, type ValidationErrorItem } from "../wire/index.js";

/**
 * Base class of every error this client throws.
 *
 * @example
 * try { await client.health(); } catch (err) { if (err instanceof TrainingClientError) console.error(err.message); }
 */
export class TrainingClientError extends TrajectoryRecorderError {
  static {
    markError(TrainingClientError, "TrainingClientError");
  }
  /** The class's name, `"TrainingClientError"` (what `error.name` reads). */
  override name = "TrainingClientError";
}

/**
 * The client was constructed without an API key (neither `apiKey` nor `WANDB_API_KEY`).
 *
 * @example
 * new TrainingClient({ apiKey: process.env.MY_KEY });
 */
export class MissingAPIKeyError extends TrainingClientError {
  static {
    markError(MissingAPIKeyError, "MissingAPIKeyError");
  }
  /** The class's name, `"MissingAPIKeyError"` (what `error.name` reads). */
  override name = "MissingAPIKeyError";
  constructor() {
    super(
      "No API key was given to TrainingClient: pass { apiKey } or set the WANDB_API_KEY environment variable.",
    );
  }
}

/**
 * A request failed validation before it was sent. `issues` holds zod's issues;
 * the message names each bad field by its path and what was expected.
 *
 * @example
 * catch (err) { if (err instanceof RequestValidationError) console.log(err.issues[0].path); }
 */
export class RequestValidationError extends TrainingClientError {
  static {
    markError(RequestValidationError, "RequestValidationError");
  }
  /** The class's name, `"RequestValidationError"` (what `error.name` reads). */
  override name = "RequestValidationError";
  readonly operation: string;
  readonly issues: z.core.$ZodIssue[];
  constructor(operation: string, error: z.ZodError) {
    const parts = error.issues.map((i) => `${formatZodPath(i.path)}: ${i.message}`);
    super(`Invalid arguments to ${operation}, nothing was sent: ${parts.join("; ")}.`);
    this.operation = operation;
    this.issues = error.issues;
  }

  /**
   * One bad argument found outside a schema: `path` names it, `message` says
   * what was expected.
   *
   * @example
   * throw RequestValidationError.at("models.log", ["params", "trajectory_groups", 0], "expected a JSON value, received a BigInt");
   */
  static at(operation: string, path: PropertyKey[], message: string): RequestValidationError {
    return new RequestValidationError(
      operation,
      new z.ZodError([{ code: "custom", path, message, input: undefined }]),
    );
  }
}

/**
 * The base URL given to the client (or in `TRAINING_SERVICE_BASE_URL`) is not
 * an `http://` or `https://` URL.
 *
 * @example
 * new TrainingClient({ baseURL: "http://localhost:8000/v1" }); // not "localhost:8000/v1"
 */
export class InvalidBaseURLError extends RequestValidationError {
  static {
    markError(InvalidBaseURLError, "InvalidBaseURLError");
  }
  /** The class's name, `"InvalidBaseURLError"` (what `error.name` reads). */
  override name = "InvalidBaseURLError";
  constructor(baseURL: string) {
    const shown = baseURL.length > 200 ? `${baseURL.slice(0, 200)}...` : baseURL;
    super(
      "new TrainingClient",
      new z.ZodError([
        {
          code: "custom",
          path: ["baseURL"],
          message: `expected an http(s) URL such as https://api.training.wandb.ai/v1; ${JSON.stringify(shown)} is not an http:// or https:// URL: write it with its scheme and /v1, e.g. "http://localhost:8000/v1"`,
          input: undefined,
        },
      ]),
    );
  }
}

/**
 * The service answered with an error status. Subclasses exist per status; the
 * parsed `body`, the response `headers` and the `requestID` are kept.
 *
 * @example
 * catch (err) { if (err instanceof APIError) console.log(err.status, err.body); }
 */
export class APIError extends TrainingClientError {
  static {
    markError(APIError, "APIError");
  }
  /** The class's name, `"APIError"` (what `error.name` reads). */
  override name = "APIError";
  /** The HTTP status, `undefined` when no response came. */
  readonly status: number | undefined;
  /** The response headers, when there was a response. */
  readonly headers: Headers | undefined;
  /** The response body, parsed as JSON when it was JSON, else its text. */
  readonly body: unknown;
  /** The service's `x-request-id` header, for support requests; `null` without one. */
  readonly requestID: string | null;
  /** The request's HTTP method. */
  readonly method: string;
  /** The request's path, e.g. `/preview/models/{id}`. */
  readonly path: string;
  constructor(
    target: APIError.RequestTarget,
    status: number | undefined,
    body: unknown,
    headers: Headers | undefined,
    message?: string,
  ) {
    super(message ?? describeFailure(target, status, body));
    this.method = target.method;
    this.path = target.path;
    this.status = status;
    this.body = body;
    this.headers = headers;
    this.requestID = headers?.get("x-request-id") ?? null;
  }

  /** What `JSON.stringify(err)` shows: the answer's fields, headers as an object. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      status: this.status,
      method: this.method,
      path: this.path,
      requestID: this.requestID,
      headers: this.headers ? headerObject(this.headers) : undefined,
      body: this.body,
    };
  }

  /**
   * Builds the subclass matching `status`.
   *
   * @example
   * throw APIError.generate({ method: "GET", path: "/v1/health" }, 503, body, headers);
   */
  static generate(
    target: APIError.RequestTarget,
    status: number,
    body: unknown,
    headers: Headers,
    note?: string,
  ): APIError {
    const Class = classForStatus(status);
    const message = note ? `${describeFailure(target, status, body)} ${note}` : undefined;
    return new Class(target, status, body, headers, message);
  }
}

/** The types of {@link APIError}'s arguments. */
export declare namespace APIError {
  /** Where a failed request was going: its method and path, as the error messages name them. */
  export interface RequestTarget {
    /** The HTTP method, e.g. `"POST"`. */
    method: string;
    /** The URL's path, e.g. `"/v1/preview/training-jobs"`. */
    path: string;
  }
}

/** 400 Bad Request. */
export class BadRequestError extends APIError {
  static {
    markError(BadRequestError, "BadRequestError");
  }
  /** The class's name, `"BadRequestError"` (what `error.name` reads). */
  override name = "BadRequestError";
}
/** 401: the API key was refused. */
export class AuthenticationError extends APIError {
  static {
    markError(AuthenticationError, "AuthenticationError");
  }
  /** The class's name, `"AuthenticationError"` (what `error.name` reads). */
  override name = "AuthenticationError";
}
/** 403: the key may not do this. */
export class PermissionDeniedError extends APIError {
  static {
    markError(PermissionDeniedError, "PermissionDeniedError");
  }
  /** The class's name, `"PermissionDeniedError"` (what `error.name` reads). */
  override name = "PermissionDeniedError";
}
/** 404: the model, job or path does not exist. */
export class NotFoundError extends APIError {
  static {
    markError(NotFoundError, "NotFoundError");
  }
  /** The class's name, `"NotFoundError"` (what `error.name` reads). */
  override name = "NotFoundError";
}
/** 409: the request conflicts with the resource's state. */
export class ConflictError extends APIError {
  static {
    markError(ConflictError, "ConflictError");
  }
  /** The class's name, `"ConflictError"` (what `error.name` reads). */
  override name = "ConflictError";
}
/**
 * 422: the service rejected the request body, query or path. `detail` holds its
 * `{loc, msg, type}` items.
 *
 * @example
 * catch (err) { if (err instanceof UnprocessableEntityError) console.log(err.detail[0].loc); }
 */
export class UnprocessableEntityError extends APIError {
  static {
    markError(UnprocessableEntityError, "UnprocessableEntityError");
  }
  /** The class's name, `"UnprocessableEntityError"` (what `error.name` reads). */
  override name = "UnprocessableEntityError";
  get detail(): ValidationErrorItem[] {
    return validationDetail(this.body) ?? [];
  }
}
/** 429: too many requests or concurrent requests. */
export class RateLimitError extends APIError {
  static {
    markError(RateLimitError, "RateLimitError");
  }
  /** The class's name, `"RateLimitError"` (what `error.name` reads). */
  override name = "RateLimitError";
}
/** Any 5xx answer. */
export class InternalServerError extends APIError {
  static {
    markError(InternalServerError, "InternalServerError");
  }
  /** The class's name, `"InternalServerError"` (what `error.name` reads). */
  override name = "InternalServerError";
}

/**
 * The request never got an answer (DNS, refused connection, reset socket...).
 *
 * @example
 * catch (err) { if (err instanceof APIConnectionError) console.log(err.cause); }
 */
export class APIConnectionError extends APIError {
  static {
    markError(APIConnectionError, "APIConnectionError");
  }
  /** The class's name, `"APIConnectionError"` (what `error.name` reads). */
  override name = "APIConnectionError";
  constructor(target: APIError.RequestTarget, cause?: unknown, message?: string) {
    super(
      target,
      undefined,
      undefined,
      undefined,
      message ??
        `${target.method} ${target.path} could not reach the Training Service: ${causeText(cause)}.`,
    );
    if (cause !== undefined) this.cause = cause;
  }
}
/** The request did not complete within the client's `timeout`. */
export class APIConnectionTimeoutError extends APIConnectionError {
  static {
    markError(APIConnectionTimeoutError, "APIConnectionTimeoutError");
  }
  /** The class's name, `"APIConnectionTimeoutError"` (what `error.name` reads). */
  override name = "APIConnectionTimeoutError";
  constructor(target: APIError.RequestTarget, timeoutMs: number) {
    super(target, undefined, `${target.method} ${target.path} timed out after ${timeoutMs} ms.`);
  }
}
/** The caller aborted the request through its `signal`. */
export class APIUserAbortError extends APIError {
  static {
    markError(APIUserAbortError, "APIUserAbortError");
  }
  /** The class's name, `"APIUserAbortError"` (what `error.name` reads). */
  override name = "APIUserAbortError";
  constructor(target: APIError.RequestTarget) {
    super(
      target,
      undefined,
      undefined,
      undefined,
      `${target.method} ${target.path} was aborted by the caller.`,
    );
  }
}

type APIErrorClass = new (
  target: APIError.RequestTarget,
  status: number,
  body: unknown,
  headers: Headers,
  message?: string,
) => APIError;

function classForStatus(status: number): APIErrorClass {
  switch (status) {
    case 400:
      return BadRequestError;
    case 401:
      return AuthenticationError;
    case 403:
      return PermissionDeniedError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 422:
      return UnprocessableEntityError;
    case 429:
      return RateLimitError;
    default:
      return status >= 500 ? InternalServerError : APIError;
  }
}

/** The `{loc, msg, type}` items of a FastAPI-style body, if it is one. */
export function validationDetail(body: unknown): ValidationErrorItem[] | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const detail = (body as { detail?: unknown }).detail;
  if (!Array.isArray(detail)) return undefined;
  return detail.filter(
    (d): d is ValidationErrorItem => typeof d === "object" && d !== null && Array.isArray(d.loc),
  );
}

/**
 * What the server said, as one line: the 422 items as `loc: msg`, else a
 * `detail` / `error.message` / `message` string, else the raw text.
 */
export function serverMessage(body: unknown): string | undefined {
  const items = validationDetail(body);
  if (items && items.length > 0) {
    return items.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; ");
  }
  if (typeof body === "string") return body.trim() === "" ? undefined : body.trim().slice(0, 500);
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as Record<string, unknown>;
  if (typeof b.detail === "string") return b.detail;
  const err = b.error;
  if (typeof err === "string") return err;
  if (
    typeof err === "object" &&
    err !== null &&
    typeof (err as { message?: unknown }).message === "string"
  ) {
    return (err as { message: string }).message;
  }
  if (typeof b.message === "string") return b.message;
  return JSON.stringify(body).slice(0, 500);
}

function describeFailure(
  target: APIError.RequestTarget,
  status: number | undefined,
  body: unknown,
): string {
  const said = serverMessage(body);
  const head = `${target.method} ${target.path} failed with status ${status ?? "unknown"}`;
  return said ? `${head}: ${sentence(said)}` : `${head} and no error body.`;
}

/** Ends `text` with a full stop unless it already ends a sentence. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** Keys shorter than this are test placeholders; masking them would garble messages. */
const MIN_SECRET_LENGTH = 8;

/**
 * Masks every occurrence of `secret` in `text`, so that a server echoing the
 * API key back in an error body never puts it into an error message or log.
 *
 * @example
 * redactSecret("bad key sk-123456789", "sk-123456789"); // "bad key [redacted]"
 */
export function redactSecret(text: string, secret: string | undefined): string {
  if (!secret || secret.length < MIN_SECRET_LENGTH || !text.includes(secret)) return text;
  return text.split(secret).join("[redacted]");
}

function causeText(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    const innerText = inner instanceof Error ? ` (${inner.message})` : "";
    return `${cause.message}${innerText}`;
  }
  return cause === undefined ? "unknown error" : String(cause);
}

/** Headers that carry credentials whatever their value. */
const CREDENTIAL_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "api-key",
]);

/**
 * A copy of response headers safe to keep on an error: credential headers and
 * any header whose value holds `secret` read `[redacted]`.
 *
 * @example
 * redactHeaders(response.headers, apiKey).get("set-cookie"); // "[redacted]"
 */
export function redactHeaders(headers: Headers, secret: string | undefined): Headers {
  const out = new Headers();
  headers.forEach((value, name) => {
    const hidden =
      CREDENTIAL_HEADERS.has(name) ||
      (secret !== undefined && secret.length >= MIN_SECRET_LENGTH && value.includes(secret));
    out.append(name, hidden ? "[redacted]" : value);
  });
  return out;
}

function headerObject(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}
