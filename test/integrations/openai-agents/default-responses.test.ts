// The Agents SDK as its docs set it up: the default model, through the
// default Responses API, over the client given to setDefaultOpenAIClient. This
// file has its own process: the default client is process-wide.
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from "@openai/agents";
import {
  Recorder,
  TrainableModel,
  TrainingClient,
  TrajectoryGroup,
  validateGroup,
} from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Emulator, startEmulator } from "../../../src/emulator/index.js";

setTracingDisabled(true);

let emu: Emulator;
let model: TrainableModel;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  const client = new TrainingClient({ apiKey: "local", baseURL: emu.url, maxRetries: 0 });
  model = await TrainableModel.register(client, {
    project: "agents",
    name: "student",
    baseModel: "emulator/tiny",
  });
});
afterAll(async () => {
  await emu.close();
});

// The SDK's quickstart agent: one function tool, no model named.
const getWeather = tool({
  name: "get_weather",
  description: "Get the weather for a given city",
  parameters: z.object({ city: z.string() }),
  execute: async (input) => `The weather in ${input.city} is sunny`,
});
const agent = new Agent({
  name: "Weather agent",
  instructions: "You tell the weather. Call the tool, then answer.",
  tools: [getWeather],
});

type Msg = { role: string; tool_call_id?: string; tool_calls?: { id: string }[] };

describe("setDefaultOpenAIClient(model.openai({ recorder })) with the default Responses model", () => {
  it("records each run as a teacher trace: every tool call paired with its result, no Choice", async () => {
    const recorder = new Recorder();
    setDefaultOpenAIClient(model.openai({ recorder }) as never);
    const trajectories = [];
    for (let i = 0; i < 16; i++)
      trajectories.push(
        await recorder.rollout(async (t) => {
          const result = await run(agent, "What is the weather in Tokyo?");
          t.reward = String(result.finalOutput ?? "").length > 0 ? 1 : 0;
        }),
      );
    let calls = 0;
    for (const t of trajectories) {
      const messages = t.messages() as unknown as Msg[];
      expect(messages.slice(0, 2).map((m) => m.role)).toEqual(["system", "user"]);
      expect(messages.at(-1)?.role).toBe("assistant");
      const issued = messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
      const answered = messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
      expect(answered).toEqual(issued);
      calls += issued.length;
      // The SDK's default model is not the trainable one: its turns are messages, said nowhere as a problem.
      expect(t.messages_and_choices.every((m) => "role" in m)).toBe(true);
      expect(t.logs.filter((l) => /policy being trained|not recorded/.test(l))).toEqual([]);
    }
    expect(calls).toBeGreaterThan(0);
    const group = new TrajectoryGroup(trajectories);
    expect(validateGroup(group, { requireTrainable: false }).problems).toEqual([]);
    // It is a teacher's group: nothing in it for RL.
    expect(() => validateGroup(group)).toThrow(/no trajectory holds a trainable Choice/);
  });

  it("says once when the trainable model itself answers through the Responses API", async () => {
    const recorder = new Recorder();
    setDefaultOpenAIClient(model.openai({ recorder }) as never);
    const own = agent.clone({ model: model.inferenceName() });
    const t = await recorder.rollout(() => run(own, "What is the weather in Tokyo?"));
    const notes = t.logs.filter((l) => l.includes("is the policy being trained"));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain('setOpenAIAPI("chat_completions")');
  });
});
