import {
  applyReward,
  type GroupSink,
  gatherTrajectoryGroups,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
  TrajectoryShipper,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
});
afterAll(async () => {
  await emu.close();
});

it("ships groups as the gather finishes them and trains every N, moving rollouts to the new checkpoint", async () => {
  const client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "pipeline",
    baseModel: "toy",
  });
  const shipper = new TrajectoryShipper({
    model,
    trainEvery: { groups: 2, config: { learningRate: 5e-5 }, pollIntervalMs: 10 },
    flushOnExit: false,
  });
  const openai = model.openai();
  const rollout = async (target: string, seed: number) => {
    const messages = [{ role: "user" as const, content: `please say ${target}` }];
    const c = await openai.chat.completions.create({
      model: "",
      messages,
      max_tokens: 3,
      logprobs: true,
      seed,
    });
    return new Trajectory({
      messages_and_choices: [...messages, c.choices[0]!],
      metadata: { target },
    });
  };
  const said = (t: Trajectory) =>
    String(t.messages().at(-1)?.content ?? "")
      .split(/\s+/)
      .includes(String(t.metadata.target))
      ? 1
      : 0;
  const groups = ["red", "cat", "apple", "two"].map((target, i) =>
    TrajectoryGroup.from(Array.from({ length: 12 }, (_, k) => () => rollout(target, i * 100 + k))),
  );
  // Rewards are set before the group reaches the sink.
  const scored = {
    add: async (group: TrajectoryGroup) => {
      await applyReward(group, said);
      await shipper.add(group);
    },
  };
  await gatherTrajectoryGroups(groups, { sink: scored });
  const stats = await shipper.close();
  expect(stats).toMatchObject({ shipped: 4, trainingJobs: 2, failed: 0, awaitingTraining: 0 });
  expect(await model.getStep()).toBe(2);
  // The shipper is a GroupSink: tsc checks this assignment.
  const sink: GroupSink = shipper;
  expect(sink).toBe(shipper);
});
