// Shared pieces of the AI SDK tests: a weather agent over the emulator, models
// whose fetch keeps the wire requests, and the same agent written by hand
// against a raw openai client.
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { jsonSchema, type LanguageModel, stepCountIs, tool, wrapLanguageModel } from "ai";
import type OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { recorderMiddleware } from "trajectory-recorder/ai-sdk";
import type { Emulator } from "../../../src/emulator/index.js";
import { KEY } from "../../emulator/helpers.js";

/** The `ai` major under test: vitest.config.ts points `ai` at it (AI_MAJOR, default 7). */
export const AI_MAJOR = Number(process.env.AI_MAJOR ?? "7");

/** Any name other than a registered model is the emulator's untrained base. */
export const MODEL = "emulator/tiny";
export const INSTRUCTIONS = "You tell the weather.";

export const WEATHER_PARAMETERS = {
  type: "object" as const,
  properties: { city: { type: "string" as const } },
  required: ["city"],
  additionalProperties: false,
};

/** What the weather tool answers for `city`. */
export function forecast(city: string): string {
  return `sunny in ${city}`;
}

export const tools = {
  weather: tool({
    description: "The weather in a city.",
    inputSchema: jsonSchema<{ city: string }>(WEATHER_PARAMETERS),
    execute: async ({ city }) => forecast(city),
  }),
};

/** The weather tool as Chat Completions declares it. */
export const CHAT_TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "weather",
      description: "The weather in a city.",
      parameters: WEATHER_PARAMETERS,
    },
  },
];

/** Calls the weather tool on its first two turns, then answers in text. */
export function agentSettings(seed: number) {
  return {
    system: INSTRUCTIONS,
    tools,
    seed,
    stopWhen: stepCountIs(3),
    prepareStep: ({ stepNumber }: { stepNumber: number }) => ({
      toolChoice: stepNumber < 2 ? ("required" as const) : ("none" as const),
    }),
  };
}

export type Bodies = Record<string, any>[];

function capturing(bodies: Bodies): typeof fetch {
  return async (url, init) => {
    if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
    return fetch(url, init);
  };
}

/** The emulator behind `@ai-sdk/openai-compatible`, recorded. */
export function compatibleModel(emu: Emulator, bodies: Bodies = [], name = "emu"): LanguageModel {
  const provider = createOpenAICompatible({
    name,
    baseURL: emu.url,
    apiKey: KEY,
    includeUsage: true,
    fetch: capturing(bodies),
  });
  return wrapLanguageModel({ model: provider(MODEL), middleware: recorderMiddleware() });
}

/** The emulator behind `@ai-sdk/openai`'s Chat Completions model, recorded. */
export function openaiChatModel(emu: Emulator, bodies: Bodies = []): LanguageModel {
  const provider = createOpenAI({ baseURL: emu.url, apiKey: KEY, fetch: capturing(bodies) });
  return wrapLanguageModel({ model: provider.chat(MODEL), middleware: recorderMiddleware() });
}

type Message = { content: string | null; tool_calls?: OpenAI.ChatCompletionMessageToolCall[] };

async function streamedMessage(openai: OpenAI, body: Record<string, unknown>): Promise<Message> {
  const stream = (await openai.chat.completions.create({
    ...body,
    stream: true,
    stream_options: { include_usage: true },
  } as never)) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
  const message: Message = { content: null };
  const calls: OpenAI.ChatCompletionMessageToolCall[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) message.content = (message.content ?? "") + delta.content;
    for (const tc of delta?.tool_calls ?? []) {
      calls[tc.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
      const slot = calls[tc.index] as OpenAI.ChatCompletionMessageFunctionToolCall;
      if (tc.id) slot.id = tc.id;
      slot.function.name += tc.function?.name ?? "";
      slot.function.arguments += tc.function?.arguments ?? "";
    }
  }
  if (calls.length) message.tool_calls = calls;
  return message;
}

/** The weather agent written by hand against a (wrapped) openai client. */
export async function handWrittenAgent(
  openai: OpenAI,
  o: { prompt: string; seed: number; stream: boolean },
): Promise<string | null> {
  const messages: ChatCompletionMessageParam[] = [
    { role: "system", content: INSTRUCTIONS },
    { role: "user", content: o.prompt },
  ];
  for (let step = 0; step < 3; step++) {
    const body = {
      model: MODEL,
      messages,
      tools: CHAT_TOOLS,
      tool_choice: step < 2 ? "required" : "none",
      seed: o.seed,
    };
    const message = o.stream
      ? await streamedMessage(openai, body)
      : (await openai.chat.completions.create(body as never)).choices[0]!.message;
    messages.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]) {
      const { city } = JSON.parse(call.function.arguments) as { city: string };
      messages.push({ role: "tool", tool_call_id: call.id, content: forecast(city) });
    }
  }
  return null;
}

/**
 * A scripted weather model for the vLLM-like server: it calls the weather
 * tool for the city in the last user message, then answers from the tool's
 * result. Every reply depends on the request only, so concurrent rollouts
 * get the same answers as one alone.
 */
export function weatherScript(body: Record<string, any>) {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  if (last?.role === "tool") return { content: `It is ${String(last.content)}.` };
  const user = [...messages].reverse().find((m) => m.role === "user");
  const text = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content);
  const city = /weather in (\w+)/.exec(text)?.[1] ?? "paris";
  return { tool_calls: [{ name: "weather", arguments: { city } }] };
}

/** A provider on the vLLM-like server, recorded by the middleware. */
export function vllmModel(baseURL: string, id = "policy"): LanguageModel {
  const provider = createOpenAICompatible({
    name: "vllm",
    baseURL,
    apiKey: KEY,
    includeUsage: true,
  });
  return wrapLanguageModel({ model: provider(id), middleware: recorderMiddleware() });
}
