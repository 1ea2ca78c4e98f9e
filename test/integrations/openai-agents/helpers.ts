// Shared pieces of the OpenAI Agents SDK tests: a weather agent over the
// emulator, a fetch that keeps the wire requests, and the same agent written
// by hand against a raw openai client.
import { Agent, type Runner, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { currentRollout } from "trajectory-recorder";
import type { Emulator } from "../../../src/emulator/index.js";
import { KEY } from "../../emulator/helpers.js";

// The SDK would export traces to OpenAI otherwise; nothing may leave loopback.
setTracingDisabled(true);

/** Any name other than a registered model is the emulator's untrained base. */
export const MODEL = "emulator/tiny";
export const INSTRUCTIONS = "You tell the weather.";

export const WEATHER_PARAMETERS = {
  type: "object" as const,
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false as const,
};

/** What the weather tool answers for `city`. */
export function forecast(args: unknown): string {
  return `sunny in ${(args as { city: string }).city}`;
}

export function weatherTool() {
  return tool({
    name: "weather",
    description: "The weather in a city.",
    parameters: WEATHER_PARAMETERS,
    strict: true,
    execute: async (args) => forecast(args),
  });
}

export interface AgentOptions {
  seed: number;
  /** End the run with the tool's result instead of asking the model again. */
  stopAtTool?: boolean;
  name?: string;
}

/** Calls the weather tool on its first turn (tool_choice "required"), then answers. */
export function weatherAgent(o: AgentOptions): Agent {
  return new Agent({
    name: o.name ?? "forecaster",
    instructions: INSTRUCTIONS,
    model: MODEL,
    tools: [weatherTool()],
    modelSettings: { toolChoice: "required", providerData: { seed: o.seed } },
    ...(o.stopAtTool ? { toolUseBehavior: "stop_on_first_tool" as const } : {}),
  });
}

/** An openai client on the emulator whose fetch keeps every request body. */
export function capturingClient(emu: Emulator, bodies: Record<string, unknown>[] = []) {
  const client = new OpenAI({
    baseURL: emu.url,
    apiKey: KEY,
    maxRetries: 0,
    fetch: async (url, init) => {
      if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
      return fetch(url, init);
    },
  });
  return { client, bodies };
}

type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
type Message = { content: string | null; tool_calls?: ToolCall[] };

async function readStream(stream: AsyncIterable<any>): Promise<Message> {
  const msg: Message = { content: null };
  const calls: ToolCall[] = [];
  for await (const chunk of stream) {
    const d = chunk.choices?.[0]?.delta;
    if (!d) continue;
    if (typeof d.content === "string") msg.content = (msg.content ?? "") + d.content;
    for (const tc of d.tool_calls ?? []) {
      calls[tc.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
      const slot = calls[tc.index] as ToolCall;
      if (tc.id) slot.id = tc.id;
      slot.function.name += tc.function?.name ?? "";
      slot.function.arguments += tc.function?.arguments ?? "";
    }
  }
  if (calls.length) msg.tool_calls = calls;
  return msg;
}

/**
 * The weather agent written by hand against a (recorder-wrapped) openai
 * client, the way a user without a framework would: call, run the tools,
 * send their results, until the model answers.
 */
export async function handWrittenAgent(
  openai: OpenAI,
  input: string,
  o: AgentOptions & { stream?: boolean },
): Promise<void> {
  const tools = [
    {
      type: "function" as const,
      function: {
        name: "weather",
        description: "The weather in a city.",
        parameters: WEATHER_PARAMETERS,
        strict: true,
      },
    },
  ];
  const messages: ChatCompletionMessageParam[] = [
    { role: "system", content: INSTRUCTIONS },
    { role: "user", content: input },
  ];
  for (let turn = 0; turn < 10; turn++) {
    const body = {
      model: MODEL,
      messages,
      tools,
      seed: o.seed,
      ...(turn === 0 ? { tool_choice: "required" as const } : {}),
    };
    const msg: Message = o.stream
      ? await readStream(await openai.chat.completions.create({ ...body, stream: true }))
      : ((await openai.chat.completions.create(body)).choices[0]!.message as Message);
    const calls = msg.tool_calls ?? [];
    if (calls.length === 0) return;
    messages.push({ role: "assistant", content: msg.content || null, tool_calls: calls });
    for (const call of calls) {
      const content = forecast(JSON.parse(call.function.arguments));
      messages.push({ role: "tool", tool_call_id: call.id, content });
      // Recorded as a user would; when a next request carries it, the recorder keeps one copy.
      currentRollout()?.recordToolResult({ tool_call_id: call.id, content });
    }
    if (o.stopAtTool) return;
  }
}

/** Runs `agent` to the end, streamed or not, and returns its final output. */
export async function runToEnd(
  runner: Runner,
  agent: Agent,
  input: string,
  stream: boolean,
): Promise<unknown> {
  if (!stream) return (await runner.run(agent, input)).finalOutput;
  const result = await runner.run(agent, input, { stream: true });
  await result.completed;
  return result.finalOutput;
}
