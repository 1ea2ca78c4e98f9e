// A loopback chat completions server that answers like vLLM and logs every
// exchange, for tests that check a recorded trajectory against the wire:
// - logprob tokens spelled `token_id:N` (with `return_tokens_as_token_ids`),
//   each choice's `token_ids` and the response's `prompt_token_ids` (with
//   `return_token_ids`), streamed or not;
// - parallel tool calls, each with a fresh id;
// - reasoning streamed as `reasoning_content` (or `reasoning`) deltas;
// - `prompt_token_ids` are a hash of the request's messages, so a recorded
//   Choice names the request it answered (see `exchangeOf`).
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

/** The prompt's token ids: a hash of the messages (and tools), so equal prompts share them. */
export function promptIds(body: Json): number[] {
  return hashIds(JSON.stringify([body.messages, body.tools ?? null]), 8);
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
) {
  const asIds = body.return_tokens_as_token_ids === true;
  const toks = completionPieces(message, reasoningField);
  const prompt = promptIds(body);
  const choice: Json = {
    index: 0,
    finish_reason: finish,
    message: { ...message, refusal: null },
    logprobs: body.logprobs ? { content: toks.map((p) => logprobEntry(p, asIds)) } : null,
  };
  if (body.return_token_ids) choice.token_ids = toks.map((p) => tokenOf(p).id);
  const out: Json = {
    id: `chatcmpl-${++callCounter}`,
    object: "chat.completion",
    created: 1,
    model,
    choices: [choice],
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
  const delta = (d: Json, piece?: string) => {
    const choice: Json = { index: 0, delta: d, finish_reason: null };
    if (piece !== undefined) {
      if (body.logprobs) choice.logprobs = { content: [logprobEntry(piece, asIds)] };
      if (body.return_token_ids) choice.token_ids = [tokenOf(piece).id];
    }
    return choice;
  };
  send(
    delta({ role: "assistant", content: "" }),
    body.return_token_ids ? { prompt_token_ids: promptIds(body) } : {},
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
    const [first, ...rest] = pieces(`${c.function.name}${c.function.arguments}`);
    // The name in one delta, the arguments in pieces, as vLLM streams them.
    send(
      delta(
        {
          tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name } }],
        },
        first,
      ),
    );
    tokens++;
    const args: string = c.function.arguments;
    const argPieces = pieces(args);
    argPieces.forEach((a, i) => {
      send(delta({ tool_calls: [{ index, function: { arguments: a } }] }, rest[i] ?? a));
      tokens++;
    });
  });
  send({ index: 0, delta: {}, finish_reason: finish });
  if (body.stream_options?.include_usage) {
    const prompt = promptIds(body).length;
    send(null, {
      usage: { prompt_tokens: prompt, completion_tokens: tokens, total_tokens: prompt + tokens },
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
      exchanges.push({ body, message, model, prompt_token_ids: promptIds(body) });
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      const finish = reply.finish_reason ?? (message.tool_calls ? "tool_calls" : "stop");
      if (body.stream) answerStream(res, body, message, model, finish, reasoningField);
      else answerJson(res, body, message, model, finish, reasoningField);
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
