// Which failed calls are the infrastructure's fault rather than the policy's:
// the upstream answered 5xx, the connection could not be made or broke, the
// call timed out, or a stream was cut off before its last chunk. A 4xx (a bad
// request, a refused key) and a call the caller aborted are the
// application's own doing and mark nothing.
import type { InfraFailureKind } from "../trajectory/index.js";
import { errorMessage } from "../util/error-message.js";
import type { RecordedCompletion } from "./active-rollout.js";

/** A recorded call's infrastructure failure: its kind and what to say in the logs. */
export interface CallFailure {
  kind: InfraFailureKind;
  detail: string;
}

// Node's and undici's codes for a connection that could not be made or broke.
const TRANSPORT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);
const TIMEOUT_CODES = new Set([
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** The infrastructure failure `call` ended with, or undefined when it had none. */
export function callFailure(call: RecordedCompletion): CallFailure | undefined {
  if (!call.status || call.status === "complete" || call.status === "aborted") return undefined;
  if (call.status === "incomplete")
    return call.cut ? { kind: "stream_cut", detail: "the stream was cut off" } : undefined;
  const kind = errorKind(call.error);
  if (!kind) return undefined;
  if (kind === "stream_cut" || (call.streamed && kind === "transport" && call.choices.length > 0))
    return { kind: "stream_cut", detail: `the stream broke off: ${errorMessage(call.error)}` };
  return { kind, detail: errorMessage(call.error) };
}

/** What kind of infrastructure failure `error` is, by class name, HTTP status and cause codes. */
function errorKind(error: unknown): InfraFailureKind | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === "number" && status >= 500 && status <= 599) return "upstream_error";
  const names = classNames(error);
  if (names.includes("APIConnectionTimeoutError") || names.includes("TimeoutError"))
    return "timeout";
  if (names.includes("APIConnectionError")) return "transport";
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && TIMEOUT_CODES.has(code)) return "timeout";
    if (typeof code === "string" && TRANSPORT_CODES.has(code)) return "transport";
    // node-fetch's (openai 4) word for a body whose connection closed mid-way.
    if (code === "ERR_STREAM_PREMATURE_CLOSE") return "stream_cut";
    const message = e instanceof Error ? e.message : "";
    // undici's words for a body that stopped mid-way, and fetch's for no connection.
    if (e instanceof TypeError && message === "terminated") return "stream_cut";
    if (e instanceof TypeError && message === "fetch failed") return "transport";
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

// The names of the error's classes, most derived first (the SDK's classes
// from any major and copy, recognised by name).
function classNames(error: unknown): string[] {
  const out: string[] = [];
  for (
    let c = (error as object | null)?.constructor;
    c && c !== Object && out.length < 10;
    c = Object.getPrototypeOf(c)
  )
    if (c.name) out.push(c.name);
  const name = (error as { name?: unknown } | null)?.name;
  if (typeof name === "string") out.push(name);
  return out;
}
