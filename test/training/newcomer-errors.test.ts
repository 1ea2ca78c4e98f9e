// The errors a newcomer meets first: each names what was done and what to do.
import {
  InvalidTrainingOptionsError,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { trainableChoice } from "../helpers/trainable.js";

let emu: Emulator;
let client: TrainingClient;
let model: TrainableModel;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
  model = await TrainableModel.register(client, { project: "p", name: "m", baseModel: "toy" });
});
afterAll(async () => {
  await emu.close();
});

const prompt = { role: "user" as const, content: "say red" };
function scored(...rewards: number[]): TrajectoryGroup {
  return new TrajectoryGroup(
    rewards.map(
      (reward) => new Trajectory({ messages_and_choices: [prompt, trainableChoice()], reward }),
    ),
  );
}

it("a NaN reward is named as NaN at its path, not as a null the caller never wrote", async () => {
  const group = scored(1, 0);
  (group.trajectories[1] as Trajectory).reward = Number.NaN;
  const err = await model.train([group]).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidTrainingOptionsError);
  expect((err as Error).message).toContain("groups[0].trajectories[1].reward: is NaN");
  expect((err as Error).message).toContain("finite number");
  expect((err as Error).message).not.toContain("null");
  const log = await model.log([scored(Number.POSITIVE_INFINITY)]).catch((e: unknown) => e);
  expect((log as Error).message).toMatch(
    /^Invalid trajectory groups given to log.*trajectories\[0\]\.reward: is Infinity/,
  );
});

it("train([]) names train and says there is nothing to train on", async () => {
  const err = await model.train([]).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidTrainingOptionsError);
  expect((err as Error).message).toMatch(/^Invalid options to train, nothing was sent: groups:/);
  expect((err as Error).message).toContain("empty array");
  expect((err as Error).message).not.toContain("trainingJobs.create");
});

it("groups without trajectories are refused as such, not as rewards that are all equal", async () => {
  const err = await model.train([new TrajectoryGroup([])]).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidTrainingOptionsError);
  expect((err as Error).message).toContain("holds a trajectory");
  expect((err as Error).message).not.toContain("equal");
});

it("a negative or non-finite learning rate is refused before anything is sent (0 is taken, as ART takes it)", async () => {
  for (const learningRate of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
    const err = await model.train([scored(1, 0)], { learningRate }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidTrainingOptionsError);
    expect((err as Error).message).toContain("learningRate: expected 0 or a positive number");
  }
  const sft = await model
    .trainSft(
      [new Trajectory({ messages_and_choices: [prompt, { role: "assistant", content: "red" }] })],
      { learningRate: [1e-5, -1] },
      {
        uploader: { upload: async () => "file:///nowhere" },
      },
    )
    .catch((e: unknown) => e);
  expect((sft as Error).message).toContain("learningRate: expected 0 or a positive number");
  expect(await model.getStep()).toBe(0);
});

it("deleteCheckpoints warns when no checkpoint carries the keepBestBy metric", async () => {
  const m = await TrainableModel.register(client, { project: "p", name: "best", baseModel: "toy" });
  const fast = { pollIntervalMs: 10 };
  await m.train([scored(1, 0)], { learningRate: 1e-3 }, fast);
  await m.train([scored(0, 1)], { learningRate: 1e-3 }, fast);
  const warnings: string[] = [];
  const logger = { warn: (line: string) => warnings.push(line) };
  const out = await m.deleteCheckpoints({ keepBestBy: "val/reward", logger });
  expect(out.kept).toEqual([2]);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain('carries the metric "val/reward"');

  // Once a val split is logged, its metrics sit on the step it was logged at.
  await m.train([scored(1, 0)], { learningRate: 1e-3 }, fast);
  await m.log([scored(1, 1)], { split: "val" });
  await m.train([scored(0, 1)], { learningRate: 1e-3 }, fast);
  await m.log([scored(0, 0)], { split: "val" });
  const again = await m.deleteCheckpoints({ keepBestBy: "val/reward", logger });
  expect(again.kept).toEqual([3, 4]);
  expect(warnings).toHaveLength(1);
});
