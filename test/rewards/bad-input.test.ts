import {
  applyGroupReward,
  applyJudge,
  applyReward,
  InvalidArgumentError,
  judgeGroup,
  minMaxRewards,
  rankRewards,
  Trajectory,
  TrajectoryGroup,
  zScores,
} from "trajectory-recorder";
import { InvalidRewardError, JudgeResponseError } from "trajectory-recorder/errors";
import { describe, expect, it } from "vitest";

const group = () =>
  new TrajectoryGroup([
    new Trajectory({ messages_and_choices: [{ role: "user", content: "a" }] }),
    new Trajectory({ messages_and_choices: [{ role: "user", content: "b" }] }),
  ]);

describe("the relative reward helpers name the bad score", () => {
  for (const [name, fn] of [
    ["rankRewards", rankRewards],
    ["zScores", zScores],
    ["minMaxRewards", minMaxRewards],
  ] as const) {
    it(name, () => {
      expect(() => fn(null as never)).toThrow(InvalidArgumentError);
      expect(() => fn(null as never)).toThrow(
        `${name}(scores): scores: expected an array of finite numbers, received null.`,
      );
      expect(() => fn([1, Symbol("s"), 3] as never)).toThrow(
        `${name}(scores): scores[1]: expected a finite number, received a symbol.`,
      );
      expect(() => fn([1, Number.NaN] as never)).toThrow(/scores\[1\]: expected a finite number/);
      // biome-ignore lint/suspicious/noSparseArray: a hole is a missing score.
      expect(() => fn([1, , 3] as never)).toThrow(/scores\[1\]: .* received undefined/);
    });
  }
  it("minMaxRewards takes a group too large to spread into Math.min", () => {
    const scores = Array.from({ length: 200_000 }, (_, i) => i % 7);
    expect(minMaxRewards(scores)[6]).toBe(1);
  });
});

describe("applyReward, applyGroupReward, judgeGroup and applyJudge reject bad arguments", () => {
  const client = { chat: { completions: { create: async () => ({ choices: [] }) } } };
  it("name the group, the reward function and the judge's options", async () => {
    await expect(applyReward(null as never, () => 1)).rejects.toThrow(
      "applyReward(group, reward): group: expected a TrajectoryGroup, received null.",
    );
    await expect(applyReward(group(), 5 as never)).rejects.toThrow(
      "applyReward(group, reward): reward: expected a function, received a number.",
    );
    await expect(applyGroupReward({ trajectories: [1] } as never, () => [1])).rejects.toThrow(
      "applyGroupReward(group, reward): group.trajectories[0]: expected a Trajectory, received a number.",
    );
    await expect(applyGroupReward(group(), (() => 1) as never)).rejects.toThrow(InvalidRewardError);
    await expect(applyGroupReward(group(), (() => 1) as never)).rejects.toThrow(
      "The group reward returned a number; expected an array of one reward per trajectory.",
    );
    await expect(judgeGroup(undefined as never, { client, model: "j" })).rejects.toThrow(
      "judgeGroup(group, options): group: expected a TrajectoryGroup, received undefined.",
    );
    await expect(judgeGroup(group(), null as never)).rejects.toThrow(
      /judgeGroup\(group, options\): options: expected an object/,
    );
    await expect(applyJudge(group(), { client: {} as never, model: "j" })).rejects.toThrow(
      /applyJudge\(group, options\): options.client: expected an openai client/,
    );
    await expect(applyJudge(group(), { client, model: 5 as never })).rejects.toThrow(
      "applyJudge(group, options): options.model: expected a model name, received a number.",
    );
    await expect(judgeGroup(group(), { client, model: "j", rubric: 1n as never })).rejects.toThrow(
      InvalidArgumentError,
    );
  });
  it("judgeGroup names a message JSON cannot hold, and takes an answer that is not text as unusable", async () => {
    const g = group();
    (g.trajectories[1] as Trajectory).messages_and_choices.push({
      role: "user",
      content: 1n,
    } as never);
    await expect(judgeGroup(g, { client, model: "j" })).rejects.toThrow(
      "judgeGroup(group, options): group.trajectories[1].messages_and_choices[1].content: expected a JSON value, received a BigInt.",
    );
    const odd = Object.create(null);
    const oddClient = {
      chat: { completions: { create: async () => ({ choices: [{ message: { content: odd } }] }) } },
    };
    await expect(judgeGroup(group(), { client: oddClient, model: "j" })).rejects.toThrow(
      JudgeResponseError,
    );
  });
  it("reject rather than throw, so a caller's .catch sees the error", () => {
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = applyReward(null as never, null as never);
    }).not.toThrow();
    return expect(promise).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
