// The SDK's own run() with the recording provider set as the default. This file
// has its own process: run()'s default runner keeps the first provider it sees.
import { run, setDefaultModelProvider } from "@openai/agents";
import { Recorder } from "trajectory-recorder";
import { attachRecorder, recordingModelProvider } from "trajectory-recorder/openai-agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../../src/emulator/index.js";
import { start } from "../../emulator/helpers.js";
import { capturingClient, forecast, MODEL, weatherAgent } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

describe("setDefaultModelProvider(recordingModelProvider(...))", () => {
  it("records run() calls, and the agent's hooks record its tool results", async () => {
    const { client, bodies } = capturingClient(emu);
    setDefaultModelProvider(recordingModelProvider({ client, defaultModel: MODEL }));
    const agent = weatherAgent({ seed: 3, stopAtTool: true });
    agent.model = ""; // named by the provider's defaultModel
    attachRecorder(agent);
    let finalOutput: unknown;
    const t = await new Recorder().rollout(async () => {
      finalOutput = (await run(agent, "weather red")).finalOutput;
    });
    expect(bodies.map((b) => b.model)).toEqual([MODEL]);
    const mc = (t.toJSON() as any).messages_and_choices;
    expect(mc.map((m: any) => m.role ?? m.finish_reason)).toEqual([
      "system",
      "user",
      "tool_calls",
      "tool",
    ]);
    // <tool>, the tool's name, the city's word, and the end token (as vLLM's).
    expect(mc[2].logprobs.content).toHaveLength(4);
    expect(mc[2].token_ids).toHaveLength(4);
    const tc = mc[2].message.tool_calls[0];
    expect(mc[3]).toEqual({ role: "tool", tool_call_id: tc.id, content: finalOutput });
    expect(finalOutput).toBe(forecast(JSON.parse(tc.function.arguments)));
  });
});
