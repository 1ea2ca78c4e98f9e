import { Agent } from "@mastra/core/agent";
import { ModelRouterLanguageModel } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { Recorder, validateTrajectory } from "trajectory-recorder";
import { recordMastraAgent } from "trajectory-recorder/ai-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { KEY } from "../../emulator/helpers.js";
import { startVllmServer, type VllmServer, wireMismatches } from "../../helpers/vllm-server.js";
import { forecast, INSTRUCTIONS, vllmModel, weatherScript } from "./helpers.js";

let server: VllmServer;
beforeAll(async () => {
  server = await startVllmServer({ respond: weatherScript });
});
afterAll(async () => {
  await server.close();
});
const MODEL = "policy";
/** The exchanges of one run: the server logs every request of the file. */
const since = (n: number) => server.exchanges.slice(n);

const weather = createTool({
  id: "weather",
  description: "The weather in a city.",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => forecast(city),
});

const options = { maxSteps: 2 };

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
    ["an { id, url } config", () => ({ id: `emu/${MODEL}`, url: server.baseURL, apiKey: KEY })],
    [
      "a ModelRouterLanguageModel",
      () => new ModelRouterLanguageModel({ id: `emu/${MODEL}`, url: server.baseURL, apiKey: KEY }),
    ],
    [
      "a fallback list",
      () => [{ model: { id: `emu/${MODEL}`, url: server.baseURL, apiKey: KEY }, maxRetries: 0 }],
    ],
    [
      "a function of the request",
      () => async () => ({ id: `emu/${MODEL}`, url: server.baseURL, apiKey: KEY }),
    ],
  ];
  for (const [what, model] of forms) {
    it(`records every call of an agent given ${what}, with logprobs and token ids`, async () => {
      const agent = recordMastraAgent(agentWith(model()));
      let text = "";
      const first = server.exchanges.length;
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
      expect(wireMismatches(t, since(first))).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      expect(since(first)).toHaveLength(2);
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
    process.env.DEEPSEEK_BASE_URL = server.baseURL;
    process.env.DEEPSEEK_API_KEY = KEY;
    const first = server.exchanges.length;
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
      // Every request is a recorded conversation followed by its answer. The
      // DeepSeek provider forwards neither logprobs nor return_token_ids, so
      // the Choices carry no prompt token ids to name their request by, and
      // logs say so.
      expect(wireMismatches(t, since(first)).filter((p) => p.startsWith("request"))).toEqual([]);
      expect(t.logs).toEqual([
        expect.stringContaining("did not send logprobs: true"),
        expect.stringContaining("does not forward return_token_ids"),
        expect.stringContaining("token lineage not checked"),
      ]);
    } finally {
      delete process.env.DEEPSEEK_BASE_URL;
      delete process.env.DEEPSEEK_API_KEY;
    }
  });

  it("records a call once when the agent's model is also wrapped with recorderMiddleware", async () => {
    const agent = recordMastraAgent(agentWith(vllmModel(server.baseURL)));
    const first = server.exchanges.length;
    const t = await new Recorder().rollout(async () => {
      await agent.generate("weather in turin", options as never);
    });
    expect(t.messages_and_choices).toHaveLength(5);
    expect(wireMismatches(t, since(first))).toEqual([]);
    expect(t.additional_histories).toEqual([]);
  });

  it("records the result of a tool run after the last model call, from generate()'s output", async () => {
    const agent = recordMastraAgent(
      agentWith({ id: `emu/${MODEL}`, url: server.baseURL, apiKey: KEY }),
    );
    const t = await new Recorder().rollout(async () => {
      await agent.generate("weather in turin", { maxSteps: 1 } as never);
    });
    const items = t.messages_and_choices as any[];
    expect(items.map((e) => e.role ?? "choice")).toEqual(["system", "user", "choice", "tool"]);
    expect(items[3]).toEqual({
      role: "tool",
      tool_call_id: items[2].message.tool_calls[0].id,
      content: forecast("turin"),
    });
    expect(t.logs).toEqual([]);
  });

  it("records the result of a tool run after a stream()'s last model call, and still runs the caller's onStepFinish", async () => {
    const agent = recordMastraAgent(
      agentWith({ id: `emu/${MODEL}`, url: server.baseURL, apiKey: KEY }),
    );
    const steps: unknown[] = [];
    const t = await new Recorder().rollout(async () => {
      const out = await agent.stream("weather in turin", {
        maxSteps: 1,
        onStepFinish: (step: unknown) => {
          steps.push(step);
        },
      } as never);
      await out.consumeStream();
    });
    const items = t.messages_and_choices as any[];
    expect(items.map((e) => e.role ?? "choice")).toEqual(["system", "user", "choice", "tool"]);
    expect(items[3]).toEqual({
      role: "tool",
      tool_call_id: items[2].message.tool_calls[0].id,
      content: forecast("turin"),
    });
    expect(steps).toHaveLength(1);
    expect(t.logs).toEqual([]);
  });

  it("50 concurrent rollouts of one recorded agent: no cross-talk", async () => {
    const agent = recordMastraAgent(
      agentWith({ id: `emu/${MODEL}`, url: server.baseURL, apiKey: KEY }),
    );
    const cities = Array.from({ length: 50 }, (_, i) => `m${i}burg`);
    const recorder = new Recorder();
    const trajectories = await Promise.all(
      cities.map((city) =>
        recorder.rollout(async () => {
          await agent.generate(`weather in ${city}`, options as never);
        }),
      ),
    );
    trajectories.forEach((t, i) => {
      const city = cities[i] as string;
      const wire = server.exchanges.filter((x) =>
        (x.body.messages as Array<{ role: string; content: unknown }>).some(
          (m) => m.role === "user" && m.content === `weather in ${city}`,
        ),
      );
      expect(wire).toHaveLength(2);
      expect(wireMismatches(t, wire)).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      expect(t.additional_histories).toEqual([]);
      expect(t.logs).toEqual([]);
    });
  });

  it("passes calls outside a rollout through", async () => {
    const agent = recordMastraAgent(
      agentWith({ id: `emu/${MODEL}`, url: server.baseURL, apiKey: KEY }),
    );
    const out = await agent.generate("weather in turin", options as never);
    expect(out.text.length).toBeGreaterThanOrEqual(0);
    const t = await new Recorder().rollout(async () => {});
    expect(t.messages_and_choices).toEqual([]);
  });

  it("fails at setup, naming what it needs, when given something that is not a Mastra agent", () => {
    expect(() => recordMastraAgent({ name: "x" })).toThrow(/resolveModelConfig/);
  });
});
