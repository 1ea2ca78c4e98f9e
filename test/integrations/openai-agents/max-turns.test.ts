// An agent that runs out of turns: with scoreMaxTurns() its rollout is a
// scored, trainable trajectory; without, the SDK's error fails the rollout.
import { MaxTurnsExceededError } from "@openai/agents";
import { Recorder } from "trajectory-recorder";
import { recordingRunner, scoreMaxTurns } from "trajectory-recorder/openai-agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../../src/emulator/index.js";
import { start } from "../../emulator/helpers.js";
import { capturingClient, weatherAgent } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

/** One turn allowed: the forced tool call uses it, and the answer would need a second. */
const outOfTurns = (recorder: Recorder) => {
  const { client } = capturingClient(emu);
  const runner = recordingRunner({ client, recorder });
  return async () => {
    await runner.run(weatherAgent({ seed: 4 }), "weather red", { maxTurns: 1 });
  };
};

describe("a run that exceeds maxTurns", () => {
  it("is a trajectory scored with the given reward, its tool-calling turn still trainable", async () => {
    const recorder = new Recorder();
    const t = await recorder.rollout(outOfTurns(recorder), { scoreError: scoreMaxTurns() });
    expect(t.reward).toBe(0);
    const j = t.toJSON() as any;
    const choice = j.messages_and_choices.find((m: any) => "finish_reason" in m);
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.logprobs.content.length).toBeGreaterThan(0);
    expect(j.logs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^rollout ended in an error, scored 0 by options\.scoreError: .*turns/i,
        ),
      ]),
    );
    const scoredLow = await recorder.rollout(outOfTurns(recorder), {
      scoreError: scoreMaxTurns(-1),
    });
    expect(scoredLow.reward).toBe(-1);
  });

  it("fails the rollout with the SDK's own error when no scorer is given", async () => {
    const recorder = new Recorder();
    await expect(recorder.rollout(outOfTurns(recorder))).rejects.toBeInstanceOf(
      MaxTurnsExceededError,
    );
  });

  it("refuses a reward that is not a finite number, naming it", () => {
    expect(() => scoreMaxTurns(Number.NaN)).toThrow(/reward: expected a finite number/);
  });
});
