import { Recorder } from "trajectory-recorder";
import { recordingRunner } from "trajectory-recorder/openai-agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../../src/emulator/index.js";
import { start } from "../../emulator/helpers.js";
import { capturingClient, runToEnd, weatherAgent } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

const WORDS = ["red", "cat", "apple", "two", "fish", "blue", "dog", "grape"];

describe("concurrent rollouts through one runner", () => {
  it("keep their calls and tool results apart", async () => {
    const recorder = new Recorder();
    const runner = recordingRunner({ client: capturingClient(emu).client, recorder });
    const rollout = (word: string, i: number) =>
      recorder.rollout(() =>
        runToEnd(runner, weatherAgent({ seed: i + 1 }), `weather ${word}`, i % 2 === 1),
      );

    const together = await Promise.all(WORDS.map(rollout));
    const alone = [];
    for (const [i, word] of WORDS.entries()) alone.push(await rollout(word, i));

    for (const [i, t] of together.entries()) {
      const j = t.toJSON() as any;
      const mc = j.messages_and_choices;
      expect(mc[1]).toEqual({ role: "user", content: `weather ${WORDS[i]}` });
      expect(mc.filter((m: any) => m.role === "user")).toHaveLength(1);
      expect(mc[3].tool_call_id).toBe(mc[2].message.tool_calls[0].id);
      expect(j.additional_histories).toEqual([]);
      // Exactly what the same rollout records when it runs alone.
      expect(j).toEqual(alone[i]!.toJSON());
    }
  });
});
