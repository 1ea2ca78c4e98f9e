// `new TrajectoryGroup({...})` takes its fields as `new Trajectory({...})`
// does; the older `(items, options)` form still works (deprecated until 0.3).
import { InvalidArgumentError, Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { expect, it } from "vitest";

const t = (reward: number) => new Trajectory({ reward });

it("builds a group from one init object", () => {
  const g = new TrajectoryGroup({
    trajectories: [t(1), new Error("tool timed out"), t(0)],
    metadata: { scenario: "q42" },
    logs: ["a"],
  });
  expect(g.trajectories.map((x) => x.reward)).toEqual([1, 0]);
  expect(g.exceptions).toHaveLength(1);
  expect(g.exceptions[0]?.message).toBe("tool timed out");
  expect(g.metadata).toEqual({ scenario: "q42" });
  expect(g.logs).toEqual(["a"]);
  expect(new TrajectoryGroup().trajectories).toEqual([]);
});

it("still accepts (items, options), with the same result", () => {
  const items = [t(1), t(0)];
  const old = new TrajectoryGroup(items, { metadata: { s: 1 } });
  const now = new TrajectoryGroup({ trajectories: items, metadata: { s: 1 } });
  expect(JSON.stringify(old)).toBe(JSON.stringify(now));
  // A Set is an iterable too: the old form, not an init object.
  expect(new TrajectoryGroup(new Set(items)).trajectories).toHaveLength(2);
});

it("names the bad field of either form", () => {
  expect(() => new TrajectoryGroup({ trajectories: 5 as never })).toThrow(
    "new TrajectoryGroup(init): init.trajectories: expected an iterable of Trajectory or Error, received a number.",
  );
  expect(() => new TrajectoryGroup([t(1)], { metadata: 5 as never })).toThrow(InvalidArgumentError);
});
