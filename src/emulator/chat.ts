// POST /v1/chat/completions: OpenAI-shaped answers and streams from the policy.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChatCompletionCreateParams } from "../wire/index.js";
import { chatError } from "./errors.js";
import { type Generation, type GenOptions, type GenToken, generate } from "./generate.js";
import { type Params, promptFeatures, usableParams } from "./model.js";
import { CONTEXT_TOKENS, endingOf } from "./sampling.js";
import { type DriftOptions, promptTokenFloor, renderPrompt } from "./template.js";

type Body = ChatCompletionCreateParams & Record<string, unknown>;

export function genOptions(
  body: Body,
  choiceIndex: number,
  prompt: readonly number[] = [],
): GenOptions {
  const tools = (body.tools ?? []).map((t) => ({
    name: t.function.name,
    parameters: t.function.parameters as Record<string, unknown> | undefined,
  }));
  const tc = body.tool_choice;
  let toolMode: GenOptions["toolMode"] = "auto";
  if (tc === "none" || tc === "required") toolMode = tc;
  else if (tc && typeof tc === "object") {
    const fn = (tc as { function?: { name?: string } }).function;
    if (fn?.name) toolMode = { name: fn.name };
  }
  const seed = typeof body.seed === "number" ? body.seed : Math.floor(Math.random() * 2 ** 31);
  return {
    features: promptFeatures(body.messages),
    ...endingOf(body, prompt.length),
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    seed: seed * 1009 + choiceIndex,
    stop: body.stop == null ? [] : Array.isArray(body.stop) ? body.stop : [body.stop],
    topLogprobs: body.logprobs ? (body.top_logprobs ?? 0) : 0,
    tools,
    toolMode,
    idSalt: hashIds(prompt),
  };
}

/** FNV-1a over token ids: the same prompt, the same salt. */
function hashIds(ids: readonly number[]): number {
  let h = 0x811c9dc5;
  for (const id of ids) h = Math.imul(h ^ id, 0x01000193) >>> 0;
  return h;
}

function tokenLabel(t: { id: number; text: string }, asIds: boolean): string {
  return asIds ? `token_id:${t.id}` : t.text;
}

// As in vLLM, a sampled token's `bytes` are its text's, even when its label
// is `token_id:N`; a top-logprobs entry's are its label's.
function logprobEntry(t: GenToken, asIds: boolean) {
  const label = tokenLabel(t, asIds);
  return {
    token: label,
    logprob: t.logprob,
    bytes: [...Buffer.from(t.text, "utf8")],
    top_logprobs: t.top.map((x) => {
      const l = tokenLabel(x, asIds);
      return { token: l, logprob: x.logprob, bytes: [...Buffer.from(l, "utf8")] };
    }),
  };
}

function messageOf(g: Generation) {
  return {
    role: "assistant" as const,
    content: g.content,
    refusal: null,
    tool_calls: g.toolCall
      ? [
          {
            id: g.toolCall.id,
            type: "function",
            function: { name: g.toolCall.name, arguments: g.toolCall.arguments },
          },
        ]
      : [],
  };
}

/** Rejects, as vLLM and OpenAI do with a 400, requests the policy cannot honour. */
function checkRequest(body: Body): void {
  if (typeof body.top_logprobs === "number" && body.top_logprobs > 0 && body.logprobs !== true) {
    throw chatError(
      400,
      "top_logprobs needs logprobs: true; set logprobs to true or leave top_logprobs out.",
      null,
      "top_logprobs",
    );
  }
  const offered = (body.tools ?? []).map((t) => t.function.name);
  const tc = body.tool_choice;
  if (tc === "required" && offered.length === 0) {
    throw chatError(
      400,
      'tool_choice "required" needs tools; pass tools or use tool_choice "auto" or "none".',
      null,
      "tool_choice",
    );
  }
  if (tc && typeof tc === "object") {
    const name = (tc as { function?: { name?: unknown } }).function?.name;
    if (typeof name !== "string" || !offered.includes(name)) {
      const list = offered.length ? offered.join(", ") : "none";
      throw chatError(
        400,
        `tool_choice names the function ${JSON.stringify(name ?? null)}, which is not among the request's tools (${list}); name one of them or use tool_choice "auto".`,
        null,
        "tool_choice",
      );
    }
  }
}

/** vLLM's and OpenAI's answer to a prompt that leaves no room in the context. */
function contextExceeded(tokens: number, exact: boolean) {
  return chatError(
    400,
    `This model's maximum context length is ${CONTEXT_TOKENS} tokens. However, your messages resulted in ${exact ? "" : "at least "}${tokens} tokens, which leaves no room for the completion. Please reduce the length of the messages.`,
    "context_length_exceeded",
    "messages",
  );
}

/**
 * Samples a chat request's answers from `params`: its prompt's token ids and
 * one generation per choice. Throws the 400 a server answers to a request the
 * policy cannot honour (a bad tool_choice, a prompt that fills the context).
 */
export function sampleChat(
  body: Body,
  params: Params | undefined,
  drift: DriftOptions = {},
): { prompt: number[]; gens: Generation[] } {
  checkRequest(body);
  const p = usableParams(params);
  const n = body.n ?? 1;
  // The chat template (template.ts): as with vLLM, a turn's prompt extends the
  // previous turn's prompt and its `token_ids`, unless a drift mode is on.
  // Counted before anything is rendered or sampled: a prompt of a million
  // words costs one pass over its text.
  const floor = promptTokenFloor(body.messages as never, body.tools ?? undefined, drift);
  if (floor.tokens >= CONTEXT_TOKENS) throw contextExceeded(floor.tokens, floor.exact);
  const prompt = renderPrompt(body.messages as never, body.tools ?? undefined, drift);
  if (prompt.length >= CONTEXT_TOKENS) throw contextExceeded(prompt.length, true);
  const gens = Array.from({ length: n }, (_, i) => generate(p, genOptions(body, i, prompt)));
  return { prompt, gens };
}

/** Answers a chat completion request from `params` (the resolved checkpoint's). */
export async function serveChat(
  req: IncomingMessage,
  res: ServerResponse,
  body: Body,
  params: Params | undefined,
  drift: DriftOptions = {},
): Promise<void> {
  const { prompt, gens } = sampleChat(body, params, drift);
  const asIds = body.return_tokens_as_token_ids === true;
  const wantIds = body.return_token_ids === true;
  const completionTokens = gens.reduce((a, g) => a + g.tokens.length, 0);
  const usage = {
    prompt_tokens: prompt.length,
    completion_tokens: completionTokens,
    total_tokens: prompt.length + completionTokens,
  };
  const id = `chatcmpl-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  if (!body.stream) {
    const out = {
      id,
      object: "chat.completion",
      created,
      model: body.model,
      choices: gens.map((g, index) => ({
        index,
        message: messageOf(g),
        logprobs: body.logprobs
          ? { content: g.tokens.map((t) => logprobEntry(t, asIds)), refusal: null }
          : null,
        finish_reason: g.finishReason,
        // vLLM's: the stop string or stop token id that ended the answer.
        stop_reason: g.stopReason,
        ...(wantIds ? { token_ids: g.tokens.map((t) => t.id) } : {}),
      })),
      usage,
      ...(wantIds ? { prompt_token_ids: prompt } : {}),
    };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(out));
    return;
  }
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
  const includeUsage = body.stream_options?.include_usage === true;
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) => {
    const chunk = {
      id,
      object: "chat.completion.chunk",
      created,
      model: body.model,
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  const tick = () => new Promise<void>((r) => setImmediate(r));
  for (const [index, g] of gens.entries()) {
    if (closed) return;
    let emitted = 0;
    send(
      [{ index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
      // vLLM's first chunk of every choice carries the prompt's ids.
      wantIds ? { prompt_token_ids: prompt } : {},
    );
    if (g.toolCall) {
      // A tool call's tokens (`<tool>`, the name, the argument words) travel
      // with its first delta; the arguments follow in pieces.
      await tick();
      if (closed) return;
      const tc = g.toolCall;
      send([
        {
          index,
          delta: {
            tool_calls: [
              { index: 0, id: tc.id, type: "function", function: { name: tc.name, arguments: "" } },
            ],
          },
          logprobs: body.logprobs
            ? { content: g.tokens.map((t) => logprobEntry(t, asIds)), refusal: null }
            : null,
          finish_reason: null,
          ...(wantIds ? { token_ids: g.tokens.map((t) => t.id) } : {}),
        },
      ]);
      const args = tc.arguments;
      const step = Math.max(1, Math.ceil(args.length / 3));
      for (let i = 0; i < args.length; i += step) {
        await tick();
        if (closed) return;
        send([
          {
            index,
            delta: { tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + step) } }] },
            logprobs: null,
            finish_reason: null,
          },
        ]);
      }
    }
    for (const t of g.toolCall ? [] : g.tokens) {
      await tick();
      if (closed) return;
      // A stop string may cut the last token short: deltas follow the final content.
      const piece = (g.content ?? "").slice(emitted, emitted + t.text.length);
      emitted += piece.length;
      send([
        {
          index,
          delta: { content: piece },
          logprobs: body.logprobs ? { content: [logprobEntry(t, asIds)], refusal: null } : null,
          finish_reason: null,
          ...(wantIds ? { token_ids: [t.id] } : {}),
        },
      ]);
    }
    send([
      {
        index,
        delta: {},
        logprobs: null,
        finish_reason: g.finishReason,
        stop_reason: g.stopReason,
      },
    ]);
  }
  if (includeUsage) send([], { usage });
  res.end("data: [DONE]\n\n");
}
