import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { Recorder, type Trajectory } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startVllmServer, type VllmServer, wireMismatches } from "../../helpers/vllm-server.js";
import { forecast, INSTRUCTIONS, vllmModel, weatherScript } from "./helpers.js";

let server: VllmServer;
beforeAll(async () => {
  server = await startVllmServer({ respond: weatherScript });
});
afterAll(async () => {
  await server.close();
});

function weatherAgent(): Agent {
  const weather = createTool({
    id: "weather",
    description: "The weather in a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => forecast(city),
  });
  // A Mastra agent takes the wrapped AI SDK model like any other. (Mastra 1.71
  // declares its own LanguageModelV4 shape, which ai 7's does not match in type
  // only; hence the cast.)
  return new Agent({
    id: "forecaster",
    name: "forecaster",
    instructions: INSTRUCTIONS,
    model: vllmModel(server.baseURL) as never,
    tools: { weather },
  });
}

type Entry = Record<string, any>;

function expectRecorded(t: Trajectory, prompt: string, answer: string) {
  const items = t.toJSON().messages_and_choices as Entry[];
  expect(items.map((e) => ("finish_reason" in e ? "choice" : e.role))).toEqual([
    "system",
    "user",
    "choice",
    "tool",
    "choice",
  ]);
  expect(items[0]).toEqual({ role: "system", content: INSTRUCTIONS });
  expect(items[1]).toEqual({ role: "user", content: prompt });
  const call = items[2]!.message.tool_calls[0];
  expect(items[2]!.finish_reason).toBe("tool_calls");
  expect(call.function.name).toBe("weather");
  expect(items[3]).toEqual({
    role: "tool",
    tool_call_id: call.id,
    content: forecast(JSON.parse(call.function.arguments).city),
  });
  expect(items[4]!.message.content ?? "").toBe(answer);
  for (const choice of [items[2]!, items[4]!]) {
    expect(Array.isArray(choice.logprobs.content)).toBe(true);
    expect(choice.token_ids).toHaveLength(choice.logprobs.content.length);
    expect(choice.prompt_token_ids.length).toBeGreaterThan(0);
  }
  expect(t.tools?.map((x: Entry) => x.function.name)).toEqual(["weather"]);
  expect(t.logs).toEqual([]);
}

describe("Mastra agents on a wrapped model", () => {
  const options = { maxSteps: 2 };

  it("records the model calls, the tool call and its result (generate)", async () => {
    const agent = weatherAgent();
    let text = "";
    const first = server.exchanges.length;
    const t = await new Recorder().rollout(async () => {
      ({ text } = await agent.generate("weather in turin", options as never));
    });
    expectRecorded(t, "weather in turin", text);
    expect(wireMismatches(t, server.exchanges.slice(first))).toEqual([]);
  });

  it("records the same run streamed", async () => {
    const agent = weatherAgent();
    let text = "";
    const first = server.exchanges.length;
    const t = await new Recorder().rollout(async () => {
      const out = await agent.stream("weather in turin", options as never);
      text = await out.text;
    });
    expectRecorded(t, "weather in turin", text);
    expect(wireMismatches(t, server.exchanges.slice(first))).toEqual([]);
  });
});
