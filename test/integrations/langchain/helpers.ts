import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import OpenAI from "openai";
import type { Recorder, Trajectory } from "trajectory-recorder";
import { z } from "zod";
import type { Emulator } from "../../../src/emulator/index.js";
import { KEY } from "../../emulator/helpers.js";

export { KEY, start } from "../../emulator/helpers.js";

export const MODEL = "emulator/tiny";

/** Every Chat Completions body a model sent, as it went on the wire. */
export function wireLog() {
  const bodies: Record<string, any>[] = [];
  const fetchAndLog: typeof fetch = async (input, init) => {
    if (typeof init?.body === "string" && String(input).endsWith("/chat/completions"))
      bodies.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  return { bodies, fetch: fetchAndLog };
}

/** A ChatOpenAI aimed at the emulator, logging its wire bodies. */
export function chatModel(emu: Emulator, fields: Record<string, unknown> = {}) {
  const wire = wireLog();
  const model = new ChatOpenAI({
    model: MODEL,
    apiKey: KEY,
    maxRetries: 0,
    configuration: { baseURL: emu.url, fetch: wire.fetch },
    ...fields,
  });
  return { model, wire };
}

export const paint = tool(async ({ color }) => `painted ${color}`, {
  name: "paint",
  description: "Paint the wall in a colour.",
  schema: z.object({ color: z.string() }),
});

export const measure = tool(async ({ wall }) => `wall ${wall} is 3 metres`, {
  name: "measure",
  description: "Measure a wall.",
  schema: z.object({ wall: z.string() }),
});

export const broken = tool(
  async () => {
    throw new Error("the brush broke");
  },
  { name: "broken", description: "Always fails.", schema: z.object({ how: z.string() }) },
);

/**
 * A LangGraph agent: the model must call a tool for its first `toolTurns`
 * turns and may not afterwards, so every run takes the same path. With
 * `endWithTools` the graph stops right after the tools ran.
 */
export function agentGraph(
  model: ChatOpenAI,
  opts: { tools?: any[]; toolTurns?: number; seed?: number; endWithTools?: boolean } = {},
) {
  const tools = opts.tools ?? [paint, measure];
  const toolTurns = opts.toolTurns ?? 2;
  const agent = async (state: typeof MessagesAnnotation.State) => {
    const turns = state.messages.filter((m) => m.getType() === "ai").length;
    const bound = model.bindTools(tools, {
      tool_choice: turns < toolTurns ? "required" : "none",
      // A new seed each turn: the emulator derives tool call ids from it.
      seed: (opts.seed ?? 7) + turns,
    } as never);
    return { messages: [await bound.invoke(state.messages)] };
  };
  const next = (state: typeof MessagesAnnotation.State) => {
    const last = state.messages.at(-1) as { tool_calls?: unknown[] };
    return last.tool_calls?.length ? "tools" : END;
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", next, ["tools", END])
    .addEdge("tools", opts.endWithTools ? END : "agent")
    .compile();
}

/**
 * Sends the same wire bodies through the raw `openai` client wrapped by a
 * recorder, in one rollout: the trajectory the raw client records.
 */
export async function replayRaw(
  emu: Emulator,
  bodies: Record<string, any>[],
  recorder: Recorder,
): Promise<Trajectory> {
  const openai = recorder.wrap(new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 }));
  return recorder.rollout(async () => {
    for (const body of bodies) {
      const res = await openai.chat.completions.create(body as never);
      if (body.stream) for await (const _ of res as unknown as AsyncIterable<unknown>);
    }
  });
}
