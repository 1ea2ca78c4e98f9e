// The AI SDK plugin records through the same rollout as the wrapped client:
// against a server whose chat template strips earlier reasoning (as Qwen3's
// does), a tool loop's later turn no longer extends the tokens of the turn
// before it, and goes on in its own history, the split said in `logs`.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { Recorder, TrajectoryGroup, validateGroup } from "trajectory-recorder";
import { recorderMiddleware } from "trajectory-recorder/ai-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY } from "../../emulator/helpers.js";
import { startVllmServer, type VllmServer, wireMismatches } from "../../helpers/vllm-server.js";
import { forecast, WEATHER_PARAMETERS } from "./helpers.js";

let server: VllmServer;
beforeAll(async () => {
  server = await startVllmServer({
    stripReasoning: true,
    respond: (body) => {
      const last = (body.messages as Array<Record<string, unknown>>).at(-1)!;
      if (last.role === "tool") return { reasoning: "I have the forecast", content: "Sunny." };
      return {
        reasoning: "I should look the weather up",
        tool_calls: [{ name: "weather", arguments: { city: "quito" } }],
      };
    },
  });
});
afterAll(() => server.close());

const weather = tool({
  description: "The weather in a city.",
  inputSchema: jsonSchema<{ city: string }>(WEATHER_PARAMETERS),
  execute: async ({ city }) => forecast(city),
});

function model() {
  const provider = createOpenAICompatible({ name: "vllm", baseURL: server.baseURL, apiKey: KEY });
  return wrapLanguageModel({ model: provider("policy"), middleware: recorderMiddleware() });
}

describe("AI SDK tool loop against a template that strips earlier reasoning", () => {
  for (const stream of [false, true]) {
    it(`splits the history where the tokens diverge (${stream ? "streamText" : "generateText"})`, async () => {
      const from = server.exchanges.length;
      const t = await new Recorder().rollout(async () => {
        const settings = {
          model: model(),
          tools: { weather },
          stopWhen: stepCountIs(3),
          prompt: "weather in quito",
        };
        if (stream) await streamText(settings).consumeStream();
        else await generateText(settings);
      });
      expect(server.exchanges.length - from).toBe(2);
      const splits = t.logs.filter((l) => l.startsWith("token lineage split:"));
      expect(splits).toHaveLength(1);
      expect(splits[0]).toMatch(
        /goes on in additional_histories\[0\]\.messages_and_choices\[\d+\]$/,
      );
      // Main ends on the first turn; the second turn's history holds its full prompt.
      const last = t.messages_and_choices.at(-1) as Record<string, any>;
      expect(last.message.tool_calls).toHaveLength(1);
      expect(t.additional_histories).toHaveLength(1);
      expect(wireMismatches(t, server.exchanges.slice(from))).toEqual([]);
      const { problems, tokens } = validateGroup(new TrajectoryGroup([t]), {
        mode: "warn",
        logger: { warn() {} },
      });
      expect(problems).toEqual([]);
      expect(tokens).toMatchObject({ histories: 2, splits: 1 });
    });
  }
});
