// POST /v1/messages: Anthropic Messages answers and event streams from the
// policy, so an `@anthropic-ai/sdk` agent runs offline. The request goes
// through the recorder's own conversion to chat (messages-convert.ts), the
// policy answers it as it answers /v1/chat/completions (same prompt, same
// tool_choice rules), and the answer is written back in Anthropic's shapes.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  anthropicInputToMessages,
  anthropicToolChoiceToChat,
  anthropicToolsToChat,
} from "../recorder/index.js";
import { ChatCompletionCreateParamsSchema } from "../wire/index.js";
import { genOptions } from "./chat.js";
import { HttpError } from "./errors.js";
import { type Generation, generate } from "./generate.js";
import { checkChatBounds } from "./limits.js";
import { type Params, usableParams } from "./model.js";
import { CONTEXT_TOKENS } from "./sampling.js";
import { type DriftOptions, promptTokenFloor, renderPrompt } from "./template.js";

type Body = Record<string, unknown>;

/** The body Anthropic's API sends with an error: `{type: "error", error: {type, message}}`. */
export function anthropicError(status: number, message: string, type = "invalid_request_error") {
  return new HttpError(status, { type: "error", error: { type, message } });
}

/** An error thrown in the shared chat code (OpenAI's `{error}` shape), in Anthropic's shape. */
export function asAnthropicError(error: unknown): unknown {
  if (!(error instanceof HttpError)) return error;
  const body = error.body as { error?: { message?: unknown; type?: unknown } } | undefined;
  if (body && (body as { type?: unknown }).type === "error") return error;
  const message =
    typeof body?.error?.message === "string" ? body.error.message : String(error.message);
  const type =
    error.status === 401
      ? "authentication_error"
      : error.status === 404
        ? "not_found_error"
        : error.status === 413
          ? "request_too_large"
          : "invalid_request_error";
  return new HttpError(error.status, { type: "error", error: { type, message } }, error.headers);
}

function bad(field: string, expected: string): HttpError {
  return anthropicError(400, `${field}: ${expected}`);
}

/** The fields the Messages API requires, and its tool_choice rules, checked as it checks them. */
function checkRequest(body: Body): void {
  if (typeof body.model !== "string" || body.model === "") throw bad("model", "Field required");
  if (
    typeof body.max_tokens !== "number" ||
    !Number.isInteger(body.max_tokens) ||
    body.max_tokens < 1
  )
    throw bad("max_tokens", "a positive integer is required");
  if (!Array.isArray(body.messages)) throw bad("messages", "Field required (an array)");
  const names = Array.isArray(body.tools)
    ? body.tools.map((t) => (t as { name?: unknown })?.name)
    : [];
  const choice = body.tool_choice as { type?: unknown; name?: unknown } | undefined;
  if (choice?.type === "any" && names.length === 0)
    throw bad("tool_choice", 'tool_choice "any" needs tools; pass tools or use "auto"');
  if (choice?.type === "tool" && !names.includes(choice.name))
    throw bad(
      "tool_choice",
      `names the tool ${JSON.stringify(choice.name ?? null)}, which is not among the request's tools`,
    );
}

/** The request as the chat body the policy answers. */
function chatBody(body: Body) {
  const messages = anthropicInputToMessages({ system: body.system, messages: body.messages }).value;
  const tools = anthropicToolsToChat(body.tools).value;
  const chat = {
    model: body.model,
    messages,
    ...(tools ? { tools } : {}),
    ...anthropicToolChoiceToChat(body.tool_choice),
    max_tokens: body.max_tokens,
    ...(typeof body.temperature === "number" ? { temperature: body.temperature } : {}),
    ...(typeof body.top_p === "number" ? { top_p: body.top_p } : {}),
    ...(Array.isArray(body.stop_sequences) ? { stop: body.stop_sequences } : {}),
  };
  const parsed = ChatCompletionCreateParamsSchema.safeParse(chat);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw bad(issue?.path.join(".") || "body", issue?.message ?? "not a valid request");
  }
  return parsed.data as typeof parsed.data & Record<string, unknown>;
}

/** A tool call id in Anthropic's spelling. */
function toolUseId(id: string): string {
  return `toolu_${id.replace(/^call_/, "")}`;
}

function stopOf(
  g: Generation,
  stops: unknown,
): { stop_reason: string; stop_sequence: string | null } {
  if (g.toolCall) return { stop_reason: "tool_use", stop_sequence: null };
  if (g.finishReason === "length") return { stop_reason: "max_tokens", stop_sequence: null };
  if (typeof g.stopReason === "string" && Array.isArray(stops) && stops.includes(g.stopReason))
    return { stop_reason: "stop_sequence", stop_sequence: g.stopReason };
  return { stop_reason: "end_turn", stop_sequence: null };
}

function toolInput(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

/** The answer's content blocks: its text (when any), then its tool call. */
function contentOf(g: Generation): Body[] {
  const blocks: Body[] = [];
  if (g.content) blocks.push({ type: "text", text: g.content });
  if (g.toolCall)
    blocks.push({
      type: "tool_use",
      id: toolUseId(g.toolCall.id),
      name: g.toolCall.name,
      input: toolInput(g.toolCall.arguments),
    });
  if (!blocks.length) blocks.push({ type: "text", text: "" });
  return blocks;
}

/** Answers a Messages request from `params` (the resolved checkpoint's). */
export async function serveMessages(
  req: IncomingMessage,
  res: ServerResponse,
  raw: unknown,
  params: Params | undefined,
  drift: DriftOptions = {},
): Promise<void> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw bad("body", "a JSON object is required");
  const body = raw as Body;
  checkRequest(body);
  const chat = chatBody(body);
  checkChatBounds(chat);
  const floor = promptTokenFloor(chat.messages as never, chat.tools ?? undefined, drift);
  if (floor.tokens >= CONTEXT_TOKENS) throw tooLong(floor.tokens);
  const prompt = renderPrompt(chat.messages as never, chat.tools ?? undefined, drift);
  if (prompt.length >= CONTEXT_TOKENS) throw tooLong(prompt.length);
  const g = generate(usableParams(params), genOptions(chat as never, 0, prompt));
  const message = {
    id: `msg_${randomUUID().replaceAll("-", "")}`,
    type: "message",
    role: "assistant",
    model: body.model,
    content: contentOf(g),
    ...stopOf(g, body.stop_sequences),
    usage: {
      input_tokens: prompt.length,
      output_tokens: g.tokens.length,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(message));
    return;
  }
  await streamMessage(req, res, message, g);
}

function tooLong(tokens: number): HttpError {
  return anthropicError(
    400,
    `prompt is too long: ${tokens} tokens > ${CONTEXT_TOKENS - 1} maximum`,
  );
}

/**
 * Anthropic's event sequence: `message_start` (the message, content empty),
 * per block `content_block_start`, its deltas, `content_block_stop`, then
 * `message_delta` (stop reason, output tokens) and `message_stop`.
 */
async function streamMessage(
  req: IncomingMessage,
  res: ServerResponse,
  message: Body & { content: Body[]; usage: Record<string, number> },
  g: Generation,
): Promise<void> {
  let closed = false;
  req.on("close", () => {
    closed = true;
  });
  res.on("close", () => {
    closed = true;
  });
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const send = (type: string, data: Body) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const tick = () => new Promise<void>((r) => setImmediate(r));
  send("message_start", {
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...message.usage, output_tokens: 1 },
    },
  });
  send("ping", {});
  for (const [index, block] of message.content.entries()) {
    if (closed) return;
    const pieces = block.type === "text" ? textPieces(g, String(block.text)) : jsonPieces(block);
    send("content_block_start", {
      index,
      content_block: block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} },
    });
    for (const delta of pieces) {
      await tick();
      if (closed) return;
      send("content_block_delta", { index, delta });
    }
    send("content_block_stop", { index });
  }
  send("message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
    usage: { output_tokens: message.usage.output_tokens },
  });
  send("message_stop", {});
  res.end();
}

/** A text block's deltas: one per token (the last may be cut short by a stop sequence). */
function textPieces(g: Generation, text: string): Body[] {
  const out: Body[] = [];
  let at = 0;
  for (const t of g.tokens) {
    const piece = text.slice(at, at + t.text.length);
    at += piece.length;
    if (piece) out.push({ type: "text_delta", text: piece });
  }
  if (at < text.length) out.push({ type: "text_delta", text: text.slice(at) });
  return out;
}

/** A tool_use block's input as JSON text in three pieces, as the API streams it. */
function jsonPieces(block: Body): Body[] {
  const json = JSON.stringify(block.input ?? {});
  const step = Math.max(1, Math.ceil(json.length / 3));
  const out: Body[] = [];
  for (let i = 0; i < json.length; i += step)
    out.push({ type: "input_json_delta", partial_json: json.slice(i, i + step) });
  return out;
}
