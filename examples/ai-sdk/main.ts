// A small tool-using AI SDK agent, recorded as a trajectory.
//
//   npx tsx examples/ai-sdk/main.ts                 # against the emulator, started in-process
//   BASE_URL=http://localhost:8000/v1 API_KEY=... MODEL=my-model npx tsx examples/ai-sdk/main.ts
//
// The model is an OpenAI-compatible chat model wrapped with recorderMiddleware();
// the agent is unchanged. Prints the trajectory JSON (ART's format).
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from "ai";
import { Recorder } from "trajectory-recorder";
import { recorderMiddleware } from "trajectory-recorder/ai-sdk";
import { startEmulator } from "trajectory-recorder/emulator";

const weather = tool({
  description: "The weather in a city.",
  inputSchema: jsonSchema<{ city: string }>({
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  }),
  execute: async ({ city }) => `sunny in ${city}`,
});

async function main(): Promise<void> {
  const emulator = process.env.BASE_URL ? undefined : await startEmulator({ port: 0 });
  try {
    const provider = createOpenAICompatible({
      name: "local",
      baseURL: emulator?.url ?? (process.env.BASE_URL as string),
      apiKey: process.env.API_KEY ?? "dev-key",
      includeUsage: true,
    });
    // The one-line change: wrap the model.
    const model = wrapLanguageModel({
      model: provider(process.env.MODEL ?? "emulator/tiny"),
      middleware: recorderMiddleware(),
    });

    const trajectory = await new Recorder().rollout(
      async (t) => {
        const { text } = await generateText({
          model,
          system: "You tell the weather.",
          prompt: "What is the weather in Paris?",
          tools: { weather },
          stopWhen: stepCountIs(3),
          // The emulator's tiny model calls tools only when told to.
          prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? "required" : "none" }),
          seed: 1,
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
