// A Mastra agent given its model the way Mastra's docs do ({ id, url } for an
// OpenAI-compatible server), recorded as a trajectory.
//
//   npx tsx examples/mastra/main.ts                 # against the emulator, started in-process
//   BASE_URL=http://localhost:8000/v1 API_KEY=... MODEL=my-model npx tsx examples/mastra/main.ts
//
// recordMastraAgent() is the one change: it records whatever model form the
// agent resolves. Prints the trajectory JSON (ART's format).
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { Recorder } from "trajectory-recorder";
import { recordMastraAgent } from "trajectory-recorder/ai-sdk";
import { startEmulator } from "trajectory-recorder/emulator";
import { z } from "zod";

const weather = createTool({
  id: "weather",
  description: "The weather in a city.",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

async function main(): Promise<void> {
  const emulator = process.env.BASE_URL ? undefined : await startEmulator({ port: 0 });
  try {
    const agent = recordMastraAgent(
      new Agent({
        id: "forecaster",
        name: "forecaster",
        instructions: "You tell the weather.",
        model: {
          id: `local/${process.env.MODEL ?? "emulator/tiny"}`,
          url: emulator?.url ?? (process.env.BASE_URL as string),
          apiKey: process.env.API_KEY ?? "dev-key",
        },
        tools: { weather },
      }),
    );

    const trajectory = await new Recorder().rollout(
      async (t) => {
        const { text } = await agent.generate("What is the weather in Paris?", {
          maxSteps: 3,
          // The emulator's tiny model calls tools only when told to.
          prepareStep: ({ stepNumber }) => ({
            toolChoice: stepNumber === 0 ? "required" : "auto",
          }),
          modelSettings: { seed: 1 },
        });
        t.reward = text.includes("sunny") ? 1 : 0;
      },
      { metadata: { city: "Paris" } },
    );
    console.log(JSON.stringify(trajectory.toJSON(), null, 2));
  } finally {
    await emulator?.close();
  }
}

await main();
