// Record an OpenAI Agents SDK run as a trajectory.
//
//   npx tsx examples/openai-agents/main.ts            # against the emulator, started in-process
//   OPENAI_BASE_URL=http://localhost:8000/v1 OPENAI_API_KEY=... MODEL=my-model \
//     npx tsx examples/openai-agents/main.ts          # against any Chat Completions server
//
// A weather agent calls its tool, reads the result and answers; the rollout's
// trajectory (messages, tool calls, tool results, logprobs, token ids) is printed.
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { recordingRunner, scoreMaxTurns } from "trajectory-recorder/openai-agents";

// The SDK exports traces to OpenAI by default; this example keeps everything local.
setTracingDisabled(true);

const weather = tool({
  name: "weather",
  description: "The weather in a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
  execute: async (args) => `sunny in ${(args as { city: string }).city}`,
});

const useEmulator = !process.env.OPENAI_BASE_URL;
const emulator = useEmulator ? await startEmulator({ port: 0, apiKeys: ["demo-key"] }) : undefined;
try {
  const client = emulator
    ? new OpenAI({ baseURL: emulator.url, apiKey: "demo-key" })
    : new OpenAI(); // OPENAI_BASE_URL and OPENAI_API_KEY from the environment
  const agent = new Agent({
    name: "forecaster",
    instructions: "You tell the weather. Call the weather tool, then answer.",
    model: process.env.MODEL ?? "emulator/tiny",
    tools: [weather],
    // "required" on the first turn only: the SDK resets it once a tool has run.
    modelSettings: { toolChoice: "required", providerData: { seed: 4 } },
  });

  const recorder = new Recorder();
  const runner = recordingRunner({ client, recorder });
  const trajectory = await recorder.rollout(
    async (t) => {
      const result = await runner.run(agent, "What is the weather in Paris? Say red.", {
        maxTurns: 4,
      });
      t.reward = String(result.finalOutput ?? "").includes("red") ? 1 : 0;
    },
    // An agent that calls its tool until maxTurns is scored 0 and kept for training.
    { metadata: { example: "openai-agents" }, scoreError: scoreMaxTurns(0) },
  );
  console.log(JSON.stringify(trajectory.toJSON(), null, 2));
} finally {
  await emulator?.close();
}
