import { Recorder } from "trajectory-recorder";
import { recordingRunner } from "trajectory-recorder/openai-agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../../src/emulator/index.js";
import { start } from "../../emulator/helpers.js";
import { capturingClient, handWrittenAgent, runToEnd, weatherAgent } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

// The same agent twice: once through the Agents SDK on the recording runner,
// once written by hand against `recorder.wrap(new OpenAI())`. With the same
// seed the emulator samples the same tokens, so equal trajectories mean the
// integration records exactly what the raw client records, no more, no less.
const cases = [
  { stream: false, stopAtTool: false, seed: 4, input: "weather red" },
  { stream: true, stopAtTool: false, seed: 7, input: "weather apple" },
  { stream: false, stopAtTool: true, seed: 2, input: "weather cat" },
  { stream: true, stopAtTool: true, seed: 9, input: "weather two" },
];

describe("a trajectory recorded through the Agents SDK", () => {
  for (const c of cases) {
    it(`equals the raw client's for the same agent (stream: ${c.stream}, ends at a tool: ${c.stopAtTool})`, async () => {
      const { client, bodies } = capturingClient(emu);
      const framework = new Recorder();
      const runner = recordingRunner({ client, recorder: framework });
      const viaAgents = await framework.rollout(
        () => runToEnd(runner, weatherAgent(c), c.input, c.stream),
        { metadata: { scenario: c.input } },
      );

      const raw = new Recorder();
      const rawWire = capturingClient(emu);
      const openai = raw.wrap(rawWire.client);
      const viaRaw = await raw.rollout(() => handWrittenAgent(openai, c.input, c), {
        metadata: { scenario: c.input },
      });

      const a = viaAgents.toJSON() as any;
      const b = viaRaw.toJSON() as any;
      expect(a.messages_and_choices.length).toBe(c.stopAtTool ? 4 : 5);
      expect(a.messages_and_choices[2].logprobs.content.length).toBeGreaterThan(0);
      expect(a).toEqual(b);
      // The requests themselves match too, message for message.
      const wire = (x: Record<string, unknown>[]) =>
        x.map(({ messages, tools, tool_choice, seed }) => ({ messages, tools, tool_choice, seed }));
      expect(wire(bodies)).toEqual(wire(rawWire.bodies));
    });
  }
});
