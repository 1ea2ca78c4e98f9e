import {
  applyGroupReward,
  applyReward,
  type GroupSink,
  gatherTrajectoryGroups,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
  TrajectoryShipper,
  zScores,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startFaultProxy } from "./fault-proxy.js";

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
      // vLLM's min_tokens: three words each, so every group of 16 holds a hit (seeded).
      ...({ min_tokens: 3 } as object),
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
    TrajectoryGroup.from(Array.from({ length: 16 }, (_, k) => () => rollout(target, i * 1000 + k))),
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

it("applies a group-relative reward in afterEach before the shipper logs the group", async () => {
  const proxy = await startFaultProxy(emu.url, () => undefined);
  try {
    const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url });
    const model = await TrainableModel.register(client, {
      project: "p",
      name: "after-each",
      baseModel: "toy",
    });
    const shipper = new TrajectoryShipper({ model, flushOnExit: false });
    const rollout = (key: string, length: number) => async () =>
      new Trajectory({
        messages_and_choices: [{ role: "assistant", content: "x".repeat(length) }],
        metadata: { key },
      });
    const groups = ["a", "b"].map((key) =>
      TrajectoryGroup.from([rollout(key, 1), rollout(key, 2), rollout(key, 3)], {
        metadata: { key },
      }),
    );
    const length = (t: Trajectory) => String(t.messages().at(-1)?.content ?? "").length;
    await gatherTrajectoryGroups(groups, {
      afterEach: (g) => applyGroupReward(g, (group) => zScores(group.trajectories.map(length))),
      sink: shipper,
    });
    await shipper.close();
    const expected = zScores([1, 2, 3]);
    expect(proxy.loggedGroups).toHaveLength(2);
    for (const g of proxy.loggedGroups) {
      expect(g.trajectories.map((t) => t.reward)).toEqual(expected);
    }
  } finally {
    await proxy.close();
  }
});
