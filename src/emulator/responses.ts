// POST /v1/responses: OpenAI Responses API answers and event streams from
// the policy, for any model name the chat endpoint serves. The request is
// read as a chat request (responses-request.ts) and sampled as one; the
// answer is a message item or a function_call item. Recent responses are
// kept, so `previous_response_id` continues a conversation.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sampleChat } from "./chat.js";
import { chatError } from "./errors.js";
import type { Generation } from "./generate.js";
import type { Params } from "./model.js";
import { chatBodyOf, readResponsesRequest } from "./responses-request.js";
import type { DriftOptions } from "./template.js";

type Obj = Record<string, unknown>;
type Msg = Record<string, unknown>;

/** How many responses a `previous_response_id` may name: the newest, oldest forgotten first. */
export const REMEMBERED_RESPONSES = 1000;

/** The conversations of recent responses (their messages after any instructions, and the answer). */
export class ResponseMemory {
  readonly #byId = new Map<string, Msg[]>();
  constructor(readonly capacity = REMEMBERED_RESPONSES) {}

  get(id: string): Msg[] | undefined {
    return this.#byId.get(id);
  }

  set(id: string, conversation: Msg[]): void {
    this.#byId.set(id, conversation);
    while (this.#byId.size > this.capacity) {
      const oldest = this.#byId.keys().next().value as string;
      this.#byId.delete(oldest);
    }
  }
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

/** The output item of a generation: a function call, or a message with its text. */
function outputItem(g: Generation): Obj {
  if (g.toolCall)
    return {
      type: "function_call",
      id: newId("fc"),
      call_id: g.toolCall.id,
      name: g.toolCall.name,
      arguments: g.toolCall.arguments,
      status: "completed",
    };
  return {
    type: "message",
    id: newId("msg"),
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: g.content ?? "", annotations: [], logprobs: [] }],
  };
}

/** The chat form of the answer, kept for a later `previous_response_id`. */
function chatTurn(g: Generation): Msg {
  if (!g.toolCall) return { role: "assistant", content: g.content ?? "" };
  const { id, name, arguments: args } = g.toolCall;
  return {
    role: "assistant",
    content: "",
    tool_calls: [{ id, type: "function", function: { name, arguments: args } }],
  };
}

/** Answers a Responses request from `params` (the resolved checkpoint's). */
export async function serveResponses(
  req: IncomingMessage,
  res: ServerResponse,
  raw: unknown,
  resolveParams: (model: string) => Params | undefined,
  memory: ResponseMemory,
  drift: DriftOptions = {},
): Promise<void> {
  const request = readResponsesRequest(raw);
  let prior: Msg[] = [];
  if (request.previousId !== undefined) {
    const found = memory.get(request.previousId);
    if (!found)
      throw chatError(
        400,
        `Previous response with id '${request.previousId}' not found: this server keeps the newest ${memory.capacity} responses made with store not false.`,
        "previous_response_not_found",
        "previous_response_id",
      );
    prior = found;
  }
  const { chat, messages } = chatBodyOf(request, prior);
  const params = resolveParams(request.model);
  const { prompt, gens } = sampleChat(chat, params, drift);
  const g = gens[0] as Generation;
  const item = outputItem(g);
  const incomplete = g.finishReason === "length" && !g.toolCall;
  const body = request.body;
  const base: Obj = {
    id: newId("resp"),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "in_progress",
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: request.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: request.previousId ?? null,
    reasoning: { effort: null, summary: null },
    store: request.store,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    usage: null,
    user: null,
    metadata: body.metadata ?? {},
  };
  const final: Obj = {
    ...base,
    status: incomplete ? "incomplete" : "completed",
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output: [item],
    usage: {
      input_tokens: prompt.length,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: g.tokens.length,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: prompt.length + g.tokens.length,
    },
  };
  if (request.store) {
    // A later request's instructions replace these (the API's rule): kept without them.
    const kept = request.instructions ? messages.slice(1) : messages;
    memory.set(final.id as string, [...kept, chatTurn(g)]);
  }
  if (!request.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(final));
    return;
  }
  await streamResponse(req, res, base, final, item);
}

/**
 * The event sequence of a streamed response, as OpenAI sends it: created,
 * in_progress, the item added, its text or arguments in deltas, the item
 * done, then completed (or incomplete) with the whole response.
 */
async function streamResponse(
  req: IncomingMessage,
  res: ServerResponse,
  base: Obj,
  final: Obj,
  item: Obj,
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
  let sequence = 0;
  const send = (type: string, fields: Obj) => {
    const event = { type, sequence_number: sequence++, ...fields };
    res.write(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`);
  };
  const tick = () => new Promise<void>((r) => setImmediate(r));
  send("response.created", { response: base });
  send("response.in_progress", { response: base });
  const at = { output_index: 0 };
  const pieces = item.type === "function_call" ? argumentPieces(item) : textPieces(item);
  for (const event of pieces) {
    await tick();
    if (closed) return;
    send(event.type, { ...at, ...event.fields });
  }
  send("response.output_item.done", { ...at, item });
  send(final.status === "completed" ? "response.completed" : "response.incomplete", {
    response: final,
  });
  res.end();
}

type Piece = { type: string; fields: Obj };

/** A function call: added with empty arguments, the arguments in three pieces, then done. */
function argumentPieces(item: Obj): Piece[] {
  const args = String(item.arguments);
  const step = Math.max(1, Math.ceil(args.length / 3));
  const pieces: Piece[] = [
    {
      type: "response.output_item.added",
      fields: { item: { ...item, arguments: "", status: "in_progress" } },
    },
  ];
  for (let i = 0; i < args.length; i += step)
    pieces.push({
      type: "response.function_call_arguments.delta",
      fields: { item_id: item.id, delta: args.slice(i, i + step) },
    });
  pieces.push({
    type: "response.function_call_arguments.done",
    fields: { item_id: item.id, name: item.name, arguments: args },
  });
  return pieces;
}

/** A message: added empty, its output_text part added, the text word by word, then done. */
function textPieces(item: Obj): Piece[] {
  const part = (item.content as Obj[])[0] as Obj;
  const text = String(part.text);
  const empty = { ...part, text: "" };
  const at = { item_id: item.id, content_index: 0 };
  const pieces: Piece[] = [
    {
      type: "response.output_item.added",
      fields: { item: { ...item, status: "in_progress", content: [] } },
    },
    { type: "response.content_part.added", fields: { ...at, part: empty } },
  ];
  // Words with the space before them, as the policy's tokens are.
  for (const delta of text.match(/\s*\S+/g) ?? [])
    pieces.push({ type: "response.output_text.delta", fields: { ...at, delta, logprobs: [] } });
  pieces.push(
    { type: "response.output_text.done", fields: { ...at, text, logprobs: [] } },
    { type: "response.content_part.done", fields: { ...at, part } },
  );
  return pieces;
}
