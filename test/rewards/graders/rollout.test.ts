// A grader as the reward of real rollouts: groups sampled from the emulator's
// policy, scored by an OpenAI string_check grader against each item, trained.
import {
  applyReward,
  gatherTrajectoryGroups,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { graderReward } from "../../../src/rewards/index.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
});
afterAll(async () => {
  await emu.close();
});

it("scores sampled rollouts with a string_check grader per dataset item, and the groups train", async () => {
  const model = await TrainableModel.register(
    new TrainingClient({ apiKey: "k", baseURL: emu.url }),
    {
      project: "p",
      name: "graded",
      baseModel: "toy",
    },
  );
  const openai = model.openai();
  const reward = graderReward({
    type: "string_check",
    name: "says_target",
    input: "{{ sample.output_text }}",
    reference: "{{ item.target }}",
    operation: "ilike",
  });
  const items = [{ target: "red" }, { target: "cat" }];
  const rollout = async (item: { target: string }, seed: number) => {
    const messages = [{ role: "user" as const, content: `please say ${item.target}` }];
    const c = await openai.chat.completions.create({
      model: "",
      messages,
      max_tokens: 3,
      ...({ min_tokens: 3 } as object),
      logprobs: true,
      seed,
    });
    return new Trajectory({ messages_and_choices: [...messages, c.choices[0]!] });
  };
  const groups = await gatherTrajectoryGroups(
    items.map((item, i) =>
      TrajectoryGroup.from(Array.from({ length: 16 }, (_, k) => () => rollout(item, i * 100 + k))),
    ),
    {
      afterEach: async (group) => {
        const item = items.find(
          (it) => group.trajectories[0]?.messages()[0]?.content === `please say ${it.target}`,
        );
        return applyReward(group, (t) => reward(t, item));
      },
    },
  );
  for (const [i, group] of groups.entries()) {
    const target = items[i]?.target as string;
    for (const t of group.trajectories) {
      const said = String(t.messages().at(-1)?.content).toLowerCase().includes(target) ? 1 : 0;
      expect(t.reward).toBe(said);
      expect(t.metrics.grader_says_target).toBe(said);
    }
  }
  // Seeded sampling: each group holds hits and misses, so RL has something to learn from.
  expect(groups.every((g) => new Set(g.trajectories.map((t) => t.reward)).size === 2)).toBe(true);
  const { step } = await model.train(groups, { learningRate: 5e-5 });
  expect(step).toBe(1);
}, 60_000);
