// --upstream: chat completions forwarded to an OpenAI-compatible server, with
// logprobs requested so the answers stay trainable.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/**
 * Refuses, at start, an upstream every forwarded call would fail on.
 *
 * @example
 * checkUpstream("http://127.0.0.1:8001/v1"); // ok; "notaurl" throws
 */
export function checkUpstream(upstream: string | undefined): void {
  if (upstream === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(upstream);
  } catch {}
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new TypeError(
      `upstream: ${JSON.stringify(upstream)} is not an http:// or https:// URL; give the base URL of an OpenAI-compatible server, ending in /v1 (e.g. http://127.0.0.1:8001/v1).`,
    );
  }
}

export async function forwardChat(
  upstream: string,
  body: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const payload = body && typeof body === "object" ? { ...(body as Record<string, unknown>) } : {};
  if (payload.logprobs == null) payload.logprobs = true;
  return forward(`${upstream.replace(/\/+$/, "")}/chat/completions`, payload, req, res);
}

/** A Responses request forwarded as it came: the API has no logprobs to ask for. */
export async function forwardResponses(
  upstream: string,
  body: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  return forward(`${upstream.replace(/\/+$/, "")}/responses`, body ?? {}, req, res);
}

async function forward(
  target: string,
  payload: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  const headers: Record<string, string> = { "content-type": "application/json" };
  const upstreamKey = process.env.EMULATOR_UPSTREAM_API_KEY;
  if (upstreamKey) headers.authorization = `Bearer ${upstreamKey}`;
  let answer: Response;
  try {
    answer = await fetch(target, {
      method: "POST",
      headers,
      body: JSON.stringify(payload),
      signal: controller.signal,
    });
  } catch (error) {
    res.writeHead(502, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        error: {
          message: `The upstream server at ${target} could not be reached: ${(error as Error).message}.`,
          type: "upstream_error",
          param: null,
          code: "upstream_unreachable",
        },
      }),
    );
    return;
  }
  res.writeHead(answer.status, {
    "content-type": answer.headers.get("content-type") ?? "application/json",
  });
  if (!answer.body) {
    res.end();
    return;
  }
  Readable.fromWeb(answer.body as never).pipe(res);
  void req;
}
