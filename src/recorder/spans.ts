import * as api from "@opentelemetry/api";
import { type Span, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import type { RecordedCompletion } from "./active-rollout.js";

// The API hands out proxy tracers that find a provider registered later, so
// one tracer per global provider is enough (`trace.disable()` makes a new one).
let cached: { provider: unknown; tracer: Tracer } | undefined;

type ProxyProvider = { getDelegate?: () => unknown };
let noopProvider: unknown;

/**
 * Whether a tracer provider is registered. Without one every span is a no-op,
 * yet starting and ending one on the recorder's hot path costs several µs
 * amid the I/O of a real call (the API's code is cold by then), so the
 * recorder skips its spans instead. The API's proxy provider hands out the
 * same no-op provider until an SDK is set.
 */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider() as ProxyProvider;
  if (typeof provider.getDelegate !== "function") return true;
  if (noopProvider === undefined) {
    const ProxyClass = (api as { ProxyTracerProvider?: new () => ProxyProvider })
      .ProxyTracerProvider;
    noopProvider = ProxyClass ? new ProxyClass().getDelegate?.() : null;
  }
  return provider.getDelegate() !== noopProvider;
}

/** The recorder's tracer. */
export function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (cached?.provider !== provider)
    cached = { provider, tracer: provider.getTracer("trajectory-recorder") };
  return cached.tracer;
}
const PARAMS: Record<string, string> = {
  temperature: "gen_ai.request.temperature",
  top_p: "gen_ai.request.top_p",
  max_tokens: "gen_ai.request.max_tokens",
  max_completion_tokens: "gen_ai.request.max_tokens",
  frequency_penalty: "gen_ai.request.frequency_penalty",
  presence_penalty: "gen_ai.request.presence_penalty",
  seed: "gen_ai.request.seed",
};

/** Where the calls of one client go, for the `server.*` attributes. */
export interface ServerAddress {
  address: string;
  port: number;
}

/** The host and port of a client's base URL (the scheme's default port when none is given). */
export function serverAddress(baseURL: unknown): ServerAddress | undefined {
  if (typeof baseURL !== "string") return undefined;
  try {
    const url = new URL(baseURL);
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    return { address: url.hostname, port };
  } catch {
    return undefined;
  }
}

/** Starts a GenAI `chat {model}` client span under the active context (the rollout span). */
export function startChatSpan(
  request: RecordedCompletion["request"],
  content: boolean,
  server?: ServerAddress,
  startTime?: number,
): Span {
  const span = tracer().startSpan(`chat ${request.model ?? ""}`.trim(), {
    kind: SpanKind.CLIENT,
    ...(startTime !== undefined ? { startTime } : {}),
    attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai" },
  });
  // Nobody records this span (no SDK registered, or sampled out): skip the
  // attributes, which are the costly part on the hot path.
  if (!span.isRecording()) return span;
  if (request.model) span.setAttribute("gen_ai.request.model", request.model);
  if (server) {
    span.setAttribute("server.address", server.address);
    span.setAttribute("server.port", server.port);
  }
  for (const [k, attr] of Object.entries(PARAMS)) {
    const v = request[k];
    if (typeof v === "number") span.setAttribute(attr, v);
  }
  // The conventions ask for the choice count only when it is not 1.
  if (typeof request.n === "number" && request.n !== 1)
    span.setAttribute("gen_ai.request.choice.count", request.n);
  if (content) span.setAttribute("gen_ai.input.messages", JSON.stringify(request.messages));
  return span;
}

/** Ends a chat span with the response attributes and the error status of a failed call. */
export function endChatSpan(
  span: Span | undefined,
  call: RecordedCompletion,
  content: boolean,
): void {
  if (!span) return;
  if (!span.isRecording()) {
    span.end();
    return;
  }
  const r = call.response;
  if (r?.id) span.setAttribute("gen_ai.response.id", r.id);
  if (r?.model) span.setAttribute("gen_ai.response.model", r.model);
  if (r?.usage) {
    span.setAttribute("gen_ai.usage.input_tokens", r.usage.prompt_tokens);
    span.setAttribute("gen_ai.usage.output_tokens", r.usage.completion_tokens);
  }
  const reasons = call.choices.map((c) => String(c.finish_reason));
  if (reasons.length) span.setAttribute("gen_ai.response.finish_reasons", reasons);
  if (content)
    span.setAttribute("gen_ai.output.messages", JSON.stringify(call.choices.map((c) => c.message)));
  if (call.status === "error" || call.status === "aborted") {
    const e = call.error;
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: e instanceof Error ? e.message : call.status,
    });
    span.setAttribute("error.type", e instanceof Error ? e.constructor.name : call.status);
  }
  span.end();
}

/**
 * The chat span of a call recorded after the fact (by a framework plugin):
 * from `call.startTime` (or now) until now, with the same attributes as a
 * call made through the wrapped client.
 */
export function traceCompletion(call: RecordedCompletion, content: boolean): void {
  endChatSpan(startChatSpan(call.request, content, undefined, call.startTime), call, content);
}
