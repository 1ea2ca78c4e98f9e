// The SDK's own run(), streamed, with the recording provider as the default
// and every agent hooked, as the docs write a handoff. Its own file: run()'s
// default runner keeps the first provider it sees.
import { Agent, run, setDefaultModelProvider, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { Recorder, validateTrajectory } from "trajectory-recorder";
import { attachRecorder, recordingModelProvider } from "trajectory-recorder/openai-agents";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startVllmServer, type VllmServer, wireMismatches } from "../../helpers/vllm-server.js";

setTracingDisabled(true);

type Json = Record<string, any>;

let server: VllmServer;
beforeAll(async () => {
  server = await startVllmServer({
    reasoningField: "reasoning_content",
    respond: (body) => {
      const messages = body.messages as Json[];
      const last = messages.at(-1) as Json;
      if (String(messages[0]?.content).startsWith("Triage")) {
        const transfer = (body.tools as Json[]).find((t) =>
          t.function.name.startsWith("transfer_to"),
        );
        return {
          reasoning: "this is about weather",
          tool_calls: [{ name: transfer!.function.name, arguments: {} }],
        };
      }
      if (last.role === "tool" && String(last.content).startsWith("sunny"))
        return { reasoning: "I have the forecast", content: `It is ${last.content}` };
      return { tool_calls: [{ name: "weather", arguments: { city: "Paris" } }] };
    },
  });
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: "k", maxRetries: 0 });
  setDefaultModelProvider(recordingModelProvider({ client, defaultModel: "policy-m" }));
});
afterAll(() => server.close());

it("records a streamed run() with a handoff: wire-exact histories, reasoning kept on the streamed Choices", async () => {
  const weather = new Agent({
    name: "Weather agent",
    instructions: "Weather agent: you tell the weather.",
    tools: [
      tool({
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
      }),
    ],
  });
  const triage = new Agent({
    name: "Triage agent",
    instructions: "Triage agent: hand the user to the right agent.",
    handoffs: [weather],
  });
  attachRecorder(triage);
  attachRecorder(weather);
  let output: unknown;
  const t = await new Recorder().rollout(async () => {
    const result = await run(triage, "What is the weather in Paris?", { stream: true });
    for await (const _ of result.toTextStream());
    await result.completed;
    output = result.finalOutput;
  });
  expect(output).toBe("It is sunny in Paris");
  expect(server.exchanges.every((x) => x.body.stream === true)).toBe(true);
  expect(wireMismatches(t, server.exchanges)).toEqual([]);
  expect(validateTrajectory(t)).toEqual([]);
  const triageTurn = t.messages_and_choices[2] as Json;
  expect(triageTurn.message.reasoning_content).toBe("this is about weather");
  const answer = t.additional_histories[0]!.messages_and_choices.at(-1) as Json;
  expect(answer.message).toMatchObject({
    content: "It is sunny in Paris",
    reasoning_content: "I have the forecast",
  });
});
