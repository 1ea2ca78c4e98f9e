// LangChain's output → the OpenAI `Choice` objects the trajectory stores.
// When ChatOpenAI keeps the raw response (`__includeRawResponse`) the wire
// objects are used as they are; otherwise they are rebuilt from the message.
import type { AIMessage, AIMessageChunk, BaseMessage } from "@langchain/core/messages";
import type { ChatGeneration, ChatGenerationChunk } from "@langchain/core/outputs";
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import type { RecordedChoice } from "../../recorder/index.js";

type Info = Record<string, any>;

/** The raw wire object ChatOpenAI attached to a message, if it kept one. */
export function rawResponseOf<T extends "chat.completion" | "chat.completion.chunk">(
  message: BaseMessage | undefined,
  object: T,
): (T extends "chat.completion" ? ChatCompletion : ChatCompletionChunk) | undefined {
  const raw = message?.additional_kwargs?.__raw_response as { object?: string } | undefined;
  return raw?.object === object ? (raw as never) : undefined;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .join("");
}

function toolCallsOf(message: AIMessage): unknown[] | undefined {
  // ChatOpenAI keeps the wire tool calls (exact argument strings) here.
  const wire = message.additional_kwargs?.tool_calls;
  if (Array.isArray(wire)) return structuredClone(wire);
  const parsed = (message.tool_calls ?? []).map((c) => ({
    id: c.id ?? "",
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.args) },
  }));
  const invalid = (message.invalid_tool_calls ?? []).map((c) => ({
    id: c.id ?? "",
    type: "function",
    function: { name: c.name ?? "", arguments: c.args ?? "" },
  }));
  const all = [...parsed, ...invalid];
  return all.length ? all : undefined;
}

/** The reasoning ChatOpenAI kept from a reasoning model's `reasoning_content`. */
function reasoningOf(message: BaseMessage): string | undefined {
  const reasoning = message.additional_kwargs?.reasoning_content;
  return typeof reasoning === "string" ? reasoning : undefined;
}

/** One non-streamed generation as a Choice. */
export function choiceOf(generation: ChatGeneration, index: number): RecordedChoice {
  const message = generation.message as AIMessage;
  const info: Info = generation.generationInfo ?? {};
  const meta: Info = message.response_metadata ?? {};
  const toolCalls = toolCallsOf(message);
  const text = textOf(message.content);
  // LangChain turns a null content into "": with tool calls it was null on the wire.
  const content = text === "" && toolCalls?.length ? null : text;
  const reasoning = reasoningOf(message);
  return {
    index,
    message: {
      role: "assistant",
      content,
      refusal: null,
      ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
      ...(toolCalls ? { tool_calls: toolCalls as never } : {}),
    } as RecordedChoice["message"],
    logprobs: info.logprobs ?? meta.logprobs ?? null,
    finish_reason: info.finish_reason ?? meta.finish_reason ?? "stop",
  };
}

/** A streamed LangChain chunk as the Chat Completions chunk it was made from. */
export function completionChunkOf(chunk: ChatGenerationChunk): ChatCompletionChunk {
  const message = chunk.message as AIMessageChunk;
  const info: Info = chunk.generationInfo ?? {};
  const base = { id: message.id ?? "", object: "chat.completion.chunk" as const, created: 0 };
  // ChatOpenAI's last chunk carries only the usage, without generationInfo.
  if (chunk.generationInfo === undefined && message.usage_metadata)
    return {
      ...base,
      model: "",
      choices: [],
      usage: (message.response_metadata as Info | undefined)?.usage,
    };
  const toolCalls = (message.tool_call_chunks ?? []).map((c) => ({
    index: c.index ?? 0,
    ...(c.id ? { id: c.id, type: "function" as const } : {}),
    function: { name: c.name ?? undefined, arguments: c.args ?? undefined },
  }));
  const reasoning = reasoningOf(message);
  return {
    ...base,
    model: info.model_name ?? "",
    choices: [
      {
        index: info.completion ?? 0,
        delta: {
          content: textOf(message.content),
          ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        } as ChatCompletionChunk.Choice["delta"],
        logprobs: info.logprobs ?? null,
        finish_reason: info.finish_reason ?? null,
      },
    ],
  };
}
