import {
  applyGroupReward,
  applyReward,
  minMaxRewards,
  rankRewards,
  Trajectory,
  TrajectoryGroup,
  zScores,
} from "trajectory-recorder";
import { describe, expect, it } from "vitest";

const group = (...texts: string[]) =>
  new TrajectoryGroup(
    texts.map(
      (text) => new Trajectory({ messages_and_choices: [{ role: "assistant", content: text }] }),
    ),
  );
const lastText = (t: Trajectory) => String(t.messages().at(-1)?.content);

describe("group-relative helpers", () => {
  it("ranks onto [0, 1] with ties sharing their mean rank", () => {
    expect(rankRewards([3, 10, 3, 7])).toEqual([1 / 6, 1, 1 / 6, 2 / 3]);
    expect(rankRewards([5, 5])).toEqual([0.5, 0.5]);
    expect(rankRewards([2])).toEqual([0.5]);
  });

  it("standardises with the population standard deviation", () => {
    const z = zScores([1, 2, 3]);
    expect(z[0]).toBeCloseTo(-1.224744871, 8);
    expect(z[1]).toBe(0);
    expect(z[2]).toBeCloseTo(1.224744871, 8);
    expect(zScores([4, 4, 4])).toEqual([0, 0, 0]);
    expect(zScores([])).toEqual([]);
  });

  it("rescales min to 0 and max to 1", () => {
    expect(minMaxRewards([2, 4, 6])).toEqual([0, 0.5, 1]);
    expect(minMaxRewards([3, 3])).toEqual([0.5, 0.5]);
  });
});

describe("applying rewards", () => {
  it("sets each trajectory's reward from a sync or async per-trajectory function", async () => {
    const g = group("4", "five", "4");
    await applyReward(g, (t) => (lastText(t) === "4" ? 1 : 0));
    expect(g.trajectories.map((t) => t.reward)).toEqual([1, 0, 1]);
    await applyReward(g, async (t) => lastText(t).length / 10);
    expect(g.trajectories.map((t) => t.reward)).toEqual([0.1, 0.4, 0.1]);
  });

  it("sets rewards from a group-relative function, in trajectory order", async () => {
    const g = group("a", "abc", "ab");
    await applyGroupReward(g, (grp) =>
      rankRewards(grp.trajectories.map((t) => -lastText(t).length)),
    );
    expect(g.trajectories.map((t) => t.reward)).toEqual([1, 0, 0.5]);
  });

  it("refuses a wrong number of rewards or a non-finite one, naming the trajectory", async () => {
    await expect(applyGroupReward(group("a", "b"), () => [1])).rejects.toThrow(
      "The group reward returned 1 rewards for 2 trajectories; expected one per trajectory.",
    );
    await expect(
      applyReward(group("a", "b"), (t) => (lastText(t) === "b" ? Number.NaN : 1)),
    ).rejects.toThrow("The reward for trajectory 1 is NaN; expected a finite number.");
  });
});
