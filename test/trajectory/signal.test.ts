import { hasRewardSignal, Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { describe, expect, it } from "vitest";

const group = (...rewards: number[]) =>
  new TrajectoryGroup(
    rewards.map((reward) => new Trajectory({ messages_and_choices: [], reward })),
  );

describe("hasRewardSignal", () => {
  it("is true only when some rewards of the group differ", () => {
    expect(hasRewardSignal(group(0, 1, 1))).toBe(true);
    expect(hasRewardSignal(group(0.5, 0.5, 0.5))).toBe(false);
    expect(hasRewardSignal(group(1))).toBe(false);
    expect(hasRewardSignal(group())).toBe(false);
  });
});
