// Newer ART (its trajectory models dump with exclude_defaults) leaves out every
// field that holds its default, at every depth. Each compact fixture reads back
// to the same objects as the full dump older ART writes of the same data.
import { readFileSync } from "node:fs";
import { Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { History } from "trajectory-recorder/core";
import { TrajectoryGroupJsonSchema, TrajectoryGroupWireSchema } from "trajectory-recorder/wire";
import { describe, expect, it } from "vitest";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/art/${name}`, import.meta.url), "utf8"));

describe("ART's compact JSON", () => {
  it("reads a compact group to the same group as its full dump", () => {
    const compact = TrajectoryGroup.fromJSON(fixture("group-compact.json"));
    const full = TrajectoryGroup.fromJSON(fixture("group-compact-expanded.json"));
    expect(compact.toJSON()).toStrictEqual(full.toJSON());
    // ...which is the full dump itself, key for key.
    expect(compact.toJSON()).toStrictEqual(fixture("group-compact-expanded.json"));
  });

  it("gives each omitted trajectory field ART's default", () => {
    const [first, second, empty] = TrajectoryGroup.fromJSON(
      fixture("group-compact.json"),
    ).trajectories;
    expect(first).toMatchObject({ reward: 1, initial_policy_version: 2, additional_histories: [] });
    expect(second).toMatchObject({
      reward: 0,
      tools: null,
      initial_policy_version: null,
      final_policy_version: null,
      metrics: {},
      metadata: {},
      logs: ["judge said no"],
    });
    expect(second?.additional_histories[0]).toBeInstanceOf(History);
    expect(second?.additional_histories[0]?.tools).toBeNull();
    expect(empty).toBeInstanceOf(Trajectory);
    expect(empty?.toJSON()).toStrictEqual(new Trajectory().toJSON());
  });

  it("reads a group whose rollouts all failed, dumped without trajectories", () => {
    const group = TrajectoryGroup.fromJSON(fixture("group-all-failed-compact.json"));
    expect(group.trajectories).toEqual([]);
    expect(group.exceptions).toHaveLength(1);
    expect(group.exceptions[0]?.type).toBe("<class 'TimeoutError'>");
    expect(group.toJSON()).toStrictEqual(fixture("group-all-failed-expanded.json"));
    expect(group.toJSON()).toStrictEqual(
      TrajectoryGroup.fromJSON(fixture("group-all-failed-expanded.json")).toJSON(),
    );
  });

  it("reads an empty group and an exception record without its traceback", () => {
    expect(TrajectoryGroup.fromJSON("{}").toJSON()).toStrictEqual(new TrajectoryGroup().toJSON());
    const group = TrajectoryGroup.fromJSON({ exceptions: [{ type: "<class 'E'>", message: "x" }] });
    expect(group.exceptions).toEqual([{ type: "<class 'E'>", message: "x", traceback: "" }]);
  });

  it("still names a field that is present but wrong", () => {
    expect(() => TrajectoryGroup.fromJSON({ trajectories: [{}, { reward: "high" }] })).toThrow(
      /trajectories\[1\]\.reward/,
    );
    expect(() => TrajectoryGroup.fromJSON({ trajectories: null })).toThrow(/trajectories/);
  });

  it("keeps trajectories required in the service's request bodies", () => {
    expect(TrajectoryGroupJsonSchema.safeParse({}).success).toBe(true);
    expect(TrajectoryGroupWireSchema.safeParse({}).success).toBe(false);
  });
});
