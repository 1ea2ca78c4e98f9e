import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { CompactLogprobs, TokenCapture } from "../logprobs/index.js";
import type { RecordedChoice, RecordedCompletion } from "./active-rollout.js";

type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
interface Acc {
  content: string | null;
  refusal: string | null;
  toolCalls: ToolCall[];
  logprobs: StreamedLogprobs | null;
  finish: RecordedChoice["finish_reason"] | null;
  /** vLLM's `stop_reason` (stop string, stop token id or null); undefined while none was sent. */
  stopReason: unknown;
  tokenIds: number[] | null;
  /** Reasoning text by the field the server streams it in (`reasoning_content`, `reasoning`). */
  reasoning: Record<string, string> | null;
}

type Lists = { content: unknown[] | null; refusal: unknown[] | null };

/**
 * A streamed Choice's logprobs, copied into columns chunk by chunk as they
 * arrive (no SDK object is kept), compacted after the stream ends. A chunk
 * whose tokens have another shape turns both lists into plain ones from then on.
 */
class StreamedLogprobs {
  content: TokenCapture | null = null;
  refusal: TokenCapture | null = null;
  plain: Lists | undefined;

  add(lp: { content?: unknown; refusal?: unknown }): void {
    this.#add("content", lp.content);
    this.#add("refusal", lp.refusal);
  }

  #add(key: "content" | "refusal", list: unknown): void {
    if (!Array.isArray(list)) return;
    if (!this.plain) {
      this[key] ??= new TokenCapture(true);
      if (this[key].append(list)) return;
      this.plain = { content: plainOf(this.content), refusal: plainOf(this.refusal) };
      this.content = null;
      this.refusal = null;
    }
    this.plain[key] ??= [];
    const plain = this.plain[key];
    // Appended in place: copying the whole list per chunk is quadratic.
    for (let i = 0; i < list.length; i++) plain.push(list[i]);
  }

  result(): RecordedChoice["logprobs"] {
    if (this.plain) return this.plain as RecordedChoice["logprobs"];
    return CompactLogprobs.fromCaptures(
      this.content,
      this.refusal,
    ) as unknown as RecordedChoice["logprobs"];
  }
}

function plainOf(capture: TokenCapture | null): unknown[] | null {
  if (!capture) return null;
  const out: unknown[] = [];
  for (let i = 0; i < capture.length; i++) out.push(capture.tokenAt(i));
  return out;
}

/** The delta fields reasoning servers stream thinking in (vLLM, DeepSeek, OpenRouter). */
export const REASONING_FIELDS = ["reasoning_content", "reasoning"] as const;

/**
 * Appends the reasoning text of a streamed `delta` to `into`, keyed by the
 * field the server used, so that the streamed Choice's message carries it
 * under the same name as a non-streamed one would. Returns `into`, created
 * when the delta brings reasoning.
 *
 * @example
 * let reasoning = null;
 * for await (const chunk of stream) reasoning = appendReasoning(reasoning, chunk.choices[0]?.delta);
 * const message = { role: "assistant", content, ...reasoning };
 */
export function appendReasoning(
  into: Record<string, string> | null,
  delta: unknown,
): Record<string, string> | null {
  if (!delta || typeof delta !== "object") return into;
  for (const field of REASONING_FIELDS) {
    const text = (delta as Record<string, unknown>)[field];
    if (typeof text !== "string" || text === "") continue;
    into ??= {};
    into[field] = (into[field] ?? "") + text;
  }
  return into;
}

type ChunkChoice = ChatCompletionChunk.Choice;
type ToolCallDelta = NonNullable<ChunkChoice["delta"]["tool_calls"]>[number];

/** Parallel tool calls arrive by index, their name and arguments in pieces. */
function addToolCall(a: Acc, tc: ToolCallDelta): void {
  let slot = a.toolCalls[tc.index];
  if (!slot) {
    slot = { id: "", type: "function", function: { name: "", arguments: "" } };
    a.toolCalls[tc.index] = slot;
  }
  if (tc.id) slot.id = tc.id;
  if (tc.function?.name) slot.function.name += tc.function.name;
  if (tc.function?.arguments) slot.function.arguments += tc.function.arguments;
}

/** Builds a recorded completion from streamed chunks, one chunk at a time. */
export class StreamAccumulator {
  #choices = new Map<number, Acc>();
  id?: string;
  model?: string;
  usage?: RecordedCompletion["response"] extends infer R
    ? R extends { usage?: infer U }
      ? U
      : never
    : never;
  promptTokenIds?: number[];

  // Runs once per streamed chunk: no allocation unless the chunk brings something.
  add(chunk: ChatCompletionChunk): void {
    if (chunk.id && !this.id) this.id = chunk.id;
    if (chunk.model && !this.model) this.model = chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    const extra = chunk as unknown as { prompt_token_ids?: number[] };
    if (extra.prompt_token_ids && !this.promptTokenIds)
      this.promptTokenIds = extra.prompt_token_ids;
    const choices = chunk.choices;
    if (!choices) return;
    for (let i = 0; i < choices.length; i++) this.#addChoice(choices[i] as ChunkChoice);
  }

  #addChoice(c: ChunkChoice): void {
    let a = this.#choices.get(c.index);
    if (!a) {
      a = {
        content: null,
        refusal: null,
        toolCalls: [],
        logprobs: null,
        finish: null,
        stopReason: undefined,
        tokenIds: null,
        reasoning: null,
      };
      this.#choices.set(c.index, a);
    }
    const d = c.delta;
    if (d) {
      if (typeof d.content === "string") a.content = (a.content ?? "") + d.content;
      if (typeof d.refusal === "string") a.refusal = (a.refusal ?? "") + d.refusal;
      a.reasoning = appendReasoning(a.reasoning, d);
      const calls = d.tool_calls;
      if (calls) for (let i = 0; i < calls.length; i++) addToolCall(a, calls[i] as ToolCallDelta);
    }
    const lp = c.logprobs;
    if (lp) {
      a.logprobs ??= new StreamedLogprobs();
      a.logprobs.add(lp);
    }
    if (c.finish_reason) a.finish = c.finish_reason;
    // vLLM sends it on every chunk, null until the one that ends the Choice.
    const stop = (c as { stop_reason?: unknown }).stop_reason;
    if (stop !== undefined && (stop !== null || a.stopReason === undefined)) a.stopReason = stop;
    const ids = (c as unknown as { token_ids?: number[] }).token_ids;
    if (ids) {
      a.tokenIds ??= [];
      for (let i = 0; i < ids.length; i++) a.tokenIds.push(ids[i]!);
    }
  }

  choices(): RecordedChoice[] {
    return [...this.#choices.entries()]
      .sort(([x], [y]) => x - y)
      .map(([index, a]) => {
        const tool_calls = a.toolCalls.filter(Boolean);
        const choice: RecordedChoice = {
          index,
          finish_reason: (a.finish ?? "stop") as RecordedChoice["finish_reason"],
          logprobs: a.logprobs ? a.logprobs.result() : null,
          message: {
            role: "assistant",
            content: a.content,
            refusal: a.refusal,
            ...(tool_calls.length ? { tool_calls } : {}),
            ...a.reasoning,
          },
        };
        // Where a non-streamed Choice has it: the lineage reads it (a stop string is sampled text).
        if (a.stopReason !== undefined)
          (choice as RecordedChoice & { stop_reason?: unknown }).stop_reason = a.stopReason;
        if (a.tokenIds) choice.token_ids = a.tokenIds;
        if (this.promptTokenIds) choice.prompt_token_ids = this.promptTokenIds;
        return choice;
      });
  }

  /** True when every choice saw a finish reason. */
  finished(): boolean {
    return this.#choices.size > 0 && [...this.#choices.values()].every((a) => a.finish !== null);
  }
}
