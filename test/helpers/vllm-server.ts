// A loopback chat completions server that answers like vLLM and logs every
// exchange, for tests that check a recorded trajectory against the wire:
// - logprob tokens spelled `token_id:N` (with `return_tokens_as_token_ids`),
//   each choice's `token_ids` and the response's `prompt_token_ids` (with
//   `return_token_ids`), streamed or not;
// - parallel tool calls, each with a fresh id;
// - reasoning streamed as `reasoning_content` (or `reasoning`) deltas;
// - `prompt_token_ids` are the request rendered by a chat template (its
//   tools and messages), so a recorded Choice names the request it answered
//   and a later turn's prompt extends an earlier one's tokens.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

type Json = Record<string, any>;

/** What the scripted model answers to one request. */
export interface Reply {
  content?: string | null;
  /** Parallel tool calls, in order; ids are made by the server. */
  tool_calls?: Array<{ name: string; arguments: string | object }>;
  /** Thinking, sent before the content. */
  reasoning?: string;
  /** The response's `model`; default: the request's. */
  model?: string;
  finish_reason?: "stop" | "length" | "tool_calls";
  /** Wait this long before answering (tools of different latency, out-of-order answers). */
  delayMs?: number;
}

/** One request and what the server answered, in arrival order. */
export interface Exchange {
  body: Json;
  /** The assistant message answered (tool call ids included). */
  message: Json;
  /** The response's model. */
  model: string;
  prompt_token_ids: number[];
}

export interface VllmServerOptions {
  /** The scripted model: the answer to each request. */
  respond: (body: Json, index: number) => Reply | Promise<Reply>;
  /** The delta field streamed reasoning goes in. Default `reasoning_content`. */
  reasoningField?: "reasoning_content" | "reasoning";
  /**
   * The template leaves earlier assistant turns' reasoning out (as Qwen3's
   * does): a later prompt no longer extends the tokens sampled for them.
   */
  stripReasoning?: boolean;
  /**
   * As Qwen3 behind a server that leaves the stop token out of `token_ids`:
   * a tool-calling turn samples a newline after its calls (`</tool_call>`
   * `\n`, `stop_reason` null), and the template ends every message with END
   * then a newline, so a later prompt holds END where the newline was sampled.
   */
  toolCallNewline?: boolean;
}

export interface VllmServer {
  /** The base URL for an `openai` client (ends in `/v1`). */
  baseURL: string;
  /** Every exchange, in the order the requests arrived. */
  exchanges: Exchange[];
  close(): Promise<void>;
}

let callCounter = 0;

function hashIds(text: string, n: number): number[] {
  const digest = createHash("sha256").update(text).digest();
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(digest.readUInt16BE((i * 2) % 30) + 1000);
  return ids;
}

// The chat template's special tokens (below the pieces' ids, which start at 1000).
const START = 1;
const END = 2;
const ROLES: Record<string, number> = { system: 3, developer: 3, user: 4, assistant: 5, tool: 6 };
const TOOLS_ROLE = 7;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => String(p?.text ?? "")).join("");
  return "";
}

/**
 * The prompt's token ids, as a chat template renders the request: the tools,
 * then each message between START and END (an assistant message as the very
 * pieces sampled for it, its reasoning only when `stripReasoning` is off),
 * then the generation prompt. So, as with vLLM and a template that renders
 * turns back as sampled, a turn's prompt extends the previous prompt and its
 * `token_ids`; with `stripReasoning`, earlier reasoning is left out as Qwen3's
 * template does, and the lineage breaks after each reasoning turn.
 */
export function promptIds(
  body: Json,
  reasoningField = "reasoning_content",
  stripReasoning = false,
  toolCallNewline = false,
): number[] {
  const ids: number[] = [];
  if (body.tools?.length)
    ids.push(START, TOOLS_ROLE, ...pieces(JSON.stringify(body.tools)).map(idOf), END);
  for (const m of (body.messages ?? []) as Json[]) {
    ids.push(START, ROLES[m.role] ?? 8);
    if (m.role === "assistant") {
      const rendered = stripReasoning ? { ...m, [reasoningField]: undefined } : m;
      ids.push(...completionPieces(rendered, reasoningField).map(idOf));
    } else ids.push(...pieces(textOf(m.content)).map(idOf));
    ids.push(END);
    if (toolCallNewline) ids.push(idOf(NEWLINE));
  }
  ids.push(START, ROLES.assistant as number);
  return ids;
}

const idOf = (piece: string) => tokenOf(piece).id;

const NEWLINE = "\n";

/** The pieces sampled for `message`: with `toolCallNewline`, a tool-calling turn ends on a newline. */
function sampledPieces(message: Json, reasoningField: string, toolCallNewline: boolean): string[] {
  const toks = completionPieces(message, reasoningField);
  return toolCallNewline && message.tool_calls ? [...toks, NEWLINE] : toks;
}

/** Splits text into the pieces the fake tokenizer calls tokens (about 4 characters). */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 4) out.push(text.slice(i, i + 4));
  return out;
}

function tokenOf(piece: string): { id: number; logprob: number } {
  const [id] = hashIds(piece, 1);
  return { id: id as number, logprob: -((id as number) % 97) / 100 - 0.01 };
}

function logprobEntry(piece: string, asIds: boolean) {
  const t = tokenOf(piece);
  return {
    token: asIds ? `token_id:${t.id}` : piece,
    logprob: t.logprob,
    bytes: [...Buffer.from(piece)],
    top_logprobs: [],
  };
}

function readBody(req: IncomingMessage): Promise<Json> {
  return new Promise((resolve, reject) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      try {
        resolve(JSON.parse(raw));
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

/** The assistant message of `reply`, with fresh tool call ids. */
function messageOf(reply: Reply, reasoningField: string): Json {
  const tool_calls = (reply.tool_calls ?? []).map((c) => ({
    id: `call_${++callCounter}_${Math.random().toString(36).slice(2, 8)}`,
    type: "function",
    function: {
      name: c.name,
      arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
    },
  }));
  const message: Json = { role: "assistant", content: reply.content ?? null };
  if (tool_calls.length) message.tool_calls = tool_calls;
  if (reply.reasoning) message[reasoningField] = reply.reasoning;
  return message;
}

/** The text the fake tokenizer reads the completion from, piece by piece. */
function completionPieces(message: Json, reasoningField: string): string[] {
  const parts = [
    ...pieces(message[reasoningField] ?? ""),
    ...pieces(message.content ?? ""),
    ...(message.tool_calls ?? []).flatMap((c: Json) =>
      pieces(`${c.function.name}${c.function.arguments}`),
    ),
  ];
  return parts.length ? parts : [""];
}

function answerJson(
  res: ServerResponse,
  body: Json,
  message: Json,
  model: string,
  finish: string,
  reasoningField: string,
  prompt: number[],
  toolCallNewline = false,
) {
  const asIds = body.return_tokens_as_token_ids === true;
  const toks = sampledPieces(message, reasoningField, toolCallNewline);
  const choice: Json = {
    index: 0,
    finish_reason: finish,
    ...(toolCallNewline ? { stop_reason: null } : {}),
    message: { ...message, refusal: null },
    logprobs: body.logprobs ? { content: toks.map((p) => logprobEntry(p, asIds)) } : null,
  };
  if (body.return_token_ids) choice.token_ids = toks.map((p) => tokenOf(p).id);
  const out: Json = {
    id: `chatcmpl-${++callCounter}`,
    object: "chat.completion",
    created: 1,
    model,
    // n > 1 (not streamed): the same answer n times, each its own choice.
    choices: Array.from({ length: Math.max(1, Number(body.n ?? 1)) }, (_, index) => ({
      ...choice,
      index,
    })),
    usage: {
      prompt_tokens: prompt.length,
      completion_tokens: toks.length,
      total_tokens: prompt.length + toks.length,
    },
  };
  if (body.return_token_ids) out.prompt_token_ids = prompt;
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(out));
}

function answerStream(
  res: ServerResponse,
  body: Json,
  message: Json,
  model: string,
  finish: string,
  reasoningField: string,
  prompt: number[],
  toolCallNewline = false,
) {
  const asIds = body.return_tokens_as_token_ids === true;
  const id = `chatcmpl-${++callCounter}`;
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (choice: Json | null, extra: Json = {}) =>
    res.write(
      `data: ${JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created: 1,
        model,
        choices: choice ? [choice] : [],
        ...extra,
      })}\n\n`,
    );
  const deltaOf = (d: Json, ps: string[]) => {
    const choice: Json = { index: 0, delta: d, finish_reason: null };
    if (ps.length && body.logprobs)
      choice.logprobs = { content: ps.map((p) => logprobEntry(p, asIds)) };
    if (ps.length && body.return_token_ids) choice.token_ids = ps.map((p) => tokenOf(p).id);
    return choice;
  };
  const delta = (d: Json, piece?: string) => deltaOf(d, piece === undefined ? [] : [piece]);
  send(
    delta({ role: "assistant", content: "" }),
    body.return_token_ids ? { prompt_token_ids: prompt } : {},
  );
  let tokens = 0;
  for (const p of pieces(message[reasoningField] ?? "")) {
    send(delta({ [reasoningField]: p }, p));
    tokens++;
  }
  for (const p of pieces(message.content ?? "")) {
    send(delta({ content: p }, p));
    tokens++;
  }
  (message.tool_calls ?? []).forEach((c: Json, index: number) => {
    // The same tokens as answered whole: the name's delta carries the first,
    // the argument deltas the others (the last delta all that are left).
    const [first, ...rest] = pieces(`${c.function.name}${c.function.arguments}`);
    send(
      deltaOf(
        {
          tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name } }],
        },
        [first ?? ""],
      ),
    );
    tokens++;
    const args: string = c.function.arguments;
    const argPieces = pieces(args);
    argPieces.forEach((a, i) => {
      const last = i === argPieces.length - 1;
      const carried = last ? rest.slice(i) : rest.slice(i, i + 1);
      send(deltaOf({ tool_calls: [{ index, function: { arguments: a } }] }, carried));
      tokens += carried.length;
    });
  });
  if (toolCallNewline && message.tool_calls) {
    // The newline after the calls: sampled, but in no delta field once the calls are parsed.
    send(deltaOf({}, [NEWLINE]));
    tokens++;
  }
  send({
    index: 0,
    delta: {},
    finish_reason: finish,
    ...(toolCallNewline ? { stop_reason: null } : {}),
  });
  if (body.stream_options?.include_usage) {
    const n = prompt.length;
    send(null, {
      usage: { prompt_tokens: n, completion_tokens: tokens, total_tokens: n + tokens },
    });
  }
  res.end("data: [DONE]\n\n");
}

/**
 * Starts the server on a loopback port.
 *
 * @example
 * const server = await startVllmServer({ respond: () => ({ content: "hi" }) });
 * const openai = new OpenAI({ baseURL: server.baseURL, apiKey: "k" });
 */
export async function startVllmServer(options: VllmServerOptions): Promise<VllmServer> {
  const reasoningField = options.reasoningField ?? "reasoning_content";
  const exchanges: Exchange[] = [];
  let index = 0;
  const server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      const reply = await options.respond(body, index++);
      const message = messageOf(reply, reasoningField);
      const model = reply.model ?? body.model;
      const newline = options.toolCallNewline === true;
      const prompt = promptIds(body, reasoningField, options.stripReasoning === true, newline);
      exchanges.push({ body, message, model, prompt_token_ids: prompt });
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      const finish = reply.finish_reason ?? (message.tool_calls ? "tool_calls" : "stop");
      if (body.stream)
        answerStream(res, body, message, model, finish, reasoningField, prompt, newline);
      else answerJson(res, body, message, model, finish, reasoningField, prompt, newline);
    } catch (error) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    }
  });
  // The SDKs keep connections alive; close them with the server.
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Item = Json;

/** An assistant turn (a Choice or a sent message) reduced to what the model reads back. */
function assistantForm(m: Json): Json {
  const calls = (m.tool_calls ?? []) as Json[];
  return {
    role: "assistant",
    content: m.content || null,
    tool_calls: calls.map((c) => ({
      id: c.id,
      name: c.function?.name,
      arguments: c.function?.arguments,
    })),
  };
}

/** A recorded item or a sent message as comparable JSON. */
function comparable(item: Item): Json {
  if (item.message) return assistantForm(item.message);
  if (item.role === "assistant") return assistantForm(item);
  return JSON.parse(JSON.stringify(item));
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The conversations of a trajectory (ART JSON or a Trajectory): main first. */
export function conversationsOf(t: { toJSON(): unknown } | Json): Item[][] {
  const j = (typeof (t as Json).toJSON === "function" ? (t as Json).toJSON() : t) as Json;
  return [
    j.messages_and_choices,
    ...j.additional_histories.map((h: Json) => h.messages_and_choices),
  ];
}

/**
 * Where a recorded trajectory differs from the wire, as sentences (empty when
 * it matches): every exchange must be a conversation's messages, message for
 * message, followed by the answer (a Choice exactly when its model is the
 * policy), and every Choice must answer a logged request of the policy.
 */
export function wireMismatches(
  t: { toJSON(): unknown } | Json,
  exchanges: readonly Exchange[],
  isPolicy: (model: string) => boolean = () => true,
): string[] {
  const conversations = conversationsOf(t);
  const problems: string[] = [];
  exchanges.forEach((x, i) => {
    const sent = (x.body.messages as Json[]).map(comparable);
    const n = sent.length;
    const found = conversations.some(
      (items) =>
        items.length > n &&
        items.slice(0, n).every((item, k) => same(comparable(item), sent[k])) &&
        same(comparable(items[n] as Item), assistantForm(x.message)) &&
        !!(items[n] as Item).message === isPolicy(x.model),
    );
    if (!found)
      problems.push(
        `request ${i} (${x.model}, ${n} messages) is not a recorded conversation followed by its answer`,
      );
  });
  conversations.forEach((items, h) => {
    items.forEach((item, k) => {
      if (!item.message) return;
      const x = exchanges.find((e) => same(e.prompt_token_ids, item.prompt_token_ids));
      if (!x) problems.push(`history ${h} item ${k}: a Choice no logged request answered`);
      else if (!isPolicy(x.model))
        problems.push(`history ${h} item ${k}: a Choice sampled by ${x.model}, not the policy`);
    });
  });
  return problems;
}
