import { Agent } from "@mastra/core/agent";
import { ModelRouterLanguageModel } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { Recorder } from "trajectory-recorder";
import { recordMastraAgent } from "trajectory-recorder/ai-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Emulator } from "../../../src/emulator/index.js";
import { KEY, start } from "../../emulator/helpers.js";
import { compatibleModel, forecast, INSTRUCTIONS, MODEL } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

const weather = createTool({
  id: "weather",
  description: "The weather in a city.",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => forecast(city),
});

const options = {
  maxSteps: 2,
  modelSettings: { seed: 7 },
  prepareStep: ({ stepNumber }: { stepNumber: number }) => ({
    toolChoice: stepNumber === 0 ? ("required" as const) : ("none" as const),
  }),
};

function agentWith(model: unknown) {
  return new Agent({
    id: "forecaster",
    name: "forecaster",
    instructions: INSTRUCTIONS,
    model: model as never,
    tools: { weather },
  });
}

describe("recordMastraAgent on the model forms Mastra documents", () => {
  const forms: Array<[string, () => unknown]> = [
    ["an { id, url } config", () => ({ id: `emu/${MODEL}`, url: emu.url, apiKey: KEY })],
    [
      "a ModelRouterLanguageModel",
      () => new ModelRouterLanguageModel({ id: `emu/${MODEL}`, url: emu.url, apiKey: KEY }),
    ],
    [
      "a function of the request",
      () => async () => ({ id: `emu/${MODEL}`, url: emu.url, apiKey: KEY }),
    ],
  ];
  for (const [what, model] of forms) {
    it(`records every call of an agent given ${what}, with logprobs and token ids`, async () => {
      const agent = recordMastraAgent(agentWith(model()));
      let text = "";
      const t = await new Recorder().rollout(async () => {
        ({ text } = await agent.generate("weather in turin", options as never));
      });
      const items = t.toJSON().messages_and_choices as Record<string, any>[];
      expect(items.map((e) => ("finish_reason" in e ? "choice" : e.role))).toEqual([
        "system",
        "user",
        "choice",
        "tool",
        "choice",
      ]);
      const call = items[2]!.message.tool_calls[0];
      expect(items[3]).toEqual({
        role: "tool",
        tool_call_id: call.id,
        content: forecast(JSON.parse(call.function.arguments).city),
      });
      expect(items[4]!.message.content ?? "").toBe(text);
      for (const choice of [items[2]!, items[4]!]) {
        expect(choice.token_ids.length).toBeGreaterThan(0);
        expect(choice.logprobs.content.map((x: any) => x.token)).toEqual(
          choice.token_ids.map((id: number) => `token_id:${id}`),
        );
      }
      expect(t.logs).toEqual([]);
    });
  }

  it('records an agent given a "provider/model" string, resolved by Mastra\'s gateway', async () => {
    // The models.dev gateway reads <PROVIDER>_BASE_URL and <PROVIDER>_API_KEY.
    process.env.DEEPSEEK_BASE_URL = emu.url;
    process.env.DEEPSEEK_API_KEY = KEY;
    try {
      const agent = recordMastraAgent(agentWith("deepseek/deepseek-chat"));
      const t = await new Recorder().rollout(async () => {
        await agent.generate("weather in turin", options as never);
      });
      const items = t.toJSON().messages_and_choices as Record<string, any>[];
      expect(items.map((e) => ("finish_reason" in e ? "choice" : e.role))).toEqual([
        "system",
        "user",
        "choice",
        "tool",
        "choice",
      ]);
      expect(items[2]!.message.tool_calls[0].function.name).toBe("weather");
    } finally {
      delete process.env.DEEPSEEK_BASE_URL;
      delete process.env.DEEPSEEK_API_KEY;
    }
  });

  it("records a call once when the agent's model is also wrapped with recorderMiddleware", async () => {
    const agent = recordMastraAgent(agentWith(compatibleModel(emu)));
    const t = await new Recorder().rollout(async () => {
      await agent.generate("weather in turin", options as never);
    });
    expect(t.messages_and_choices).toHaveLength(5);
    expect(t.additional_histories).toEqual([]);
  });

  it("names the tool calls whose results Mastra's loop never reported", async () => {
    const agent = recordMastraAgent(agentWith({ id: `emu/${MODEL}`, url: emu.url, apiKey: KEY }));
    const t = await new Recorder().rollout(async () => {
      await agent.generate("weather in turin", { ...options, maxSteps: 1 } as never);
    });
    const [, , choice] = t.messages_and_choices as any[];
    const id = choice.message.tool_calls[0].id;
    expect(t.logs).toEqual([
      expect.stringContaining(`no result was recorded for tool call(s) weather (${id})`),
    ]);
  });

  it("passes calls outside a rollout through", async () => {
    const agent = recordMastraAgent(agentWith({ id: `emu/${MODEL}`, url: emu.url, apiKey: KEY }));
    const out = await agent.generate("weather in turin", options as never);
    expect(out.text.length).toBeGreaterThanOrEqual(0);
    const t = await new Recorder().rollout(async () => {});
    expect(t.messages_and_choices).toEqual([]);
  });

  it("fails at setup, naming what it needs, when given something that is not a Mastra agent", () => {
    expect(() => recordMastraAgent({ name: "x" })).toThrow(/resolveModelConfig/);
  });
});
