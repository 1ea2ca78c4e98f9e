// Metrics logged under a split belong to the step they were logged at, so
// deleteCheckpoints({ keepBestBy: "val/reward" }) keeps the best step.
import { TrainableModel, TrainingClient } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: { k: "me" } });
});
afterAll(async () => {
  await emu.close();
});

/** A group of answered prompts with these rewards (no logprobs: only logged, or trained with allow). */
const group = (rewards: number[]) => ({
  trajectories: rewards.map((reward, i) => ({
    messages_and_choices: [
      { role: "user", content: "say red" },
      {
        index: 0,
        finish_reason: "stop",
        message: { role: "assistant", content: i % 2 ? "red" : "cat" },
      },
    ],
    reward,
  })),
});

it("attaches logged split metrics to the latest checkpoint, and keepBestBy finds them", async () => {
  const client = new TrainingClient({ baseURL: emu.url, apiKey: "k", maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "demo",
    name: "val-best",
    baseModel: "emulator/tiny",
  });
  const valRewards = [0.2, 0.9, 0.4];
  for (const [step, val] of valRewards.entries()) {
    if (step > 0)
      await model.train(
        [group([0, 1, 0, 1])],
        {
          learningRate: 1e-5,
          allowTrainingWithoutLogprobs: true,
        },
        { pollIntervalMs: 5 },
      );
    await client.models.log(model.id, { split: "val", trajectory_groups: [group([val, val])] });
  }
  const listed = [];
  for await (const cp of client.models.checkpoints.list(model.id)) listed.push(cp);
  expect(listed.map((c) => [c.step, c.metrics?.["val/reward"]])).toEqual([
    [0, 0.2],
    [1, 0.9],
    [2, 0.4],
  ]);
  expect(listed[1]!.metrics).toMatchObject({ "val/reward_std_dev": 0, "val/num_trajectories": 2 });
  const { deleted, kept } = await model.deleteCheckpoints({ keepBestBy: "val/reward" });
  expect(kept).toEqual([1, 2]);
  expect(deleted).toEqual([0]);
});
