import { InvalidArgumentError, Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { History, PendingGroup } from "trajectory-recorder/core";
import { describe, expect, it } from "vitest";
import {
  createProgressBar,
  formatProgress,
  messagesAndChoicesToJson,
  toChatMessage,
  toChatMessages,
} from "../../src/trajectory/index.js";

const progress = { done: 1, total: 2, exceptions: 0, rewardMean: null };

describe("progress", () => {
  it("formatProgress names the bad field of the snapshot or the options", () => {
    expect(() => formatProgress(null as never)).toThrow(InvalidArgumentError);
    expect(() => formatProgress(null as never)).toThrow(
      "formatProgress(p, options): p: expected an object { done, total, exceptions, rewardMean }, received null.",
    );
    expect(() => formatProgress({ ...progress, total: "2" } as never)).toThrow(
      "formatProgress(p, options): p.total: expected a number, received a string.",
    );
    expect(() => formatProgress({ ...progress, rewardMean: 1n } as never)).toThrow(
      /p\.rewardMean: expected a number or null, received a BigInt/,
    );
    expect(() => formatProgress(progress, null as never)).toThrow(/options: expected an object/);
    expect(() => formatProgress(progress, { width: -1 })).toThrow(
      /options\.width: expected an integer from 0 to 1000, received a number/,
    );
  });
  it("formatProgress draws an empty bar for a negative count instead of throwing", () => {
    expect(formatProgress({ ...progress, done: -5 }, { width: 4 })).toContain("[....]");
  });
  it("createProgressBar checks its label and stream, and update() its snapshot", () => {
    expect(() => createProgressBar("x", null as never)).toThrow(
      "createProgressBar(label, stream): stream: expected a writable stream (an object with write()), received null.",
    );
    expect(() => createProgressBar(Symbol() as never)).toThrow(/label: expected a string/);
    const bar = createProgressBar("x", { isTTY: true, write: () => true });
    expect(() => bar.update(undefined as never)).toThrow(
      /progressBar\.update\(p\): p: expected an object/,
    );
  });
});

describe("messages", () => {
  it("toChatMessage and toChatMessages name the item that is not a message or a Choice", () => {
    expect(() => toChatMessage(null as never)).toThrow(
      "toChatMessage(item): item: expected a message or a Choice (an object), received null.",
    );
    expect(() => toChatMessages(undefined as never)).toThrow(
      "toChatMessages(items): items: expected an array of messages and Choices, received undefined.",
    );
    expect(() => toChatMessages([{ role: "user", content: "hi" }, null] as never)).toThrow(
      /toChatMessages\(items\): items\[1\]: expected a message or a Choice/,
    );
    expect(() => toChatMessage({ message: null } as never)).toThrow(
      "toChatMessage(item): item.message: expected an object, received null.",
    );
    expect(() =>
      toChatMessage({ index: 0, finish_reason: "stop", message: { tool_calls: 5 } } as never),
    ).toThrow(/item\.message\.tool_calls: expected an array or null, received a number/);
  });
  it("messagesAndChoicesToJson names the item, and a message nested past the JSON limit", () => {
    expect(() => messagesAndChoicesToJson(5 as never)).toThrow(
      /messagesAndChoicesToJson\(items\): items: expected an array/,
    );
    let deep: unknown = "x";
    for (let i = 0; i < 10_000; i++) deep = { n: deep };
    const items = [
      { role: "user", content: "a" },
      { role: "user", content: deep },
    ];
    expect(() => messagesAndChoicesToJson(items)).toThrow(InvalidArgumentError);
    expect(() => messagesAndChoicesToJson(items)).toThrow(
      /messages_and_choices\[1\]\.content\.n\.n.*: expected JSON nested at most 256 levels deep/,
    );
  });
});

describe("constructors", () => {
  it("new History, new Trajectory and new PendingGroup name the bad field", () => {
    expect(() => new History(null as never)).toThrow(
      "new History(init): init: expected an object of fields, received null.",
    );
    expect(() => new History({ messages_and_choices: "hi" as never })).toThrow(
      "new History(init): init.messages_and_choices: expected an array, received a string.",
    );
    expect(() => new Trajectory({ reward: 1n as never })).toThrow(
      "new Trajectory(init): init.reward: expected a number, received a BigInt.",
    );
    expect(() => new Trajectory({ metadata: [] as never })).toThrow(
      /init\.metadata: expected a plain object, received an array/,
    );
    expect(() => new PendingGroup(null as never, {})).toThrow(
      "new PendingGroup(rollouts, options): rollouts: expected an array of rollouts, received null.",
    );
    expect(() => new PendingGroup([], { exceptions: 5 } as never)).toThrow(
      /options\.exceptions: expected an iterable of errors, received a number/,
    );
    expect(() => TrajectoryGroup.from(5 as never)).toThrow(
      /TrajectoryGroup\.from\(rollouts, options\): rollouts: expected an iterable/,
    );
    expect(() => new TrajectoryGroup([], { logs: [1] } as never)).toThrow(
      /options\.logs: expected an array of strings/,
    );
  });
  it("toJSON of data JSON cannot hold names the path: BigInt, cycle, deep nesting", () => {
    const t = new Trajectory({ metadata: { big: 1n } });
    expect(() => JSON.stringify(t)).toThrow(InvalidArgumentError);
    expect(() => JSON.stringify(t)).toThrow(
      "Copying JSON data: metadata.big: expected a JSON value, received a BigInt.",
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => new TrajectoryGroup([], { metadata: { cyclic } }).toJSON()).toThrow(
      "Copying JSON data: metadata.cyclic.self: expected a JSON value, received a circular reference.",
    );
  });
});

describe("the check, the wire helpers and the shipper", () => {
  it("name the bad argument instead of failing inside the engine", async () => {
    const { TrajectoryShipper, validateGroup, validateTrajectory } = await import(
      "trajectory-recorder"
    );
    const { checkGroups, choiceToJson, refuseUntrainableBytes } = await import(
      "../../src/trajectory/index.js"
    );
    const { toWireGroups } = await import("../../src/training/index.js");
    expect(() => choiceToJson(null as never)).toThrow(
      "choiceToJson(choice): choice: expected a Choice (an object), received null.",
    );
    expect(() => checkGroups(null as never, undefined, "train")).toThrow(
      /^train: groups: expected an array of trajectory groups, received null\.$/,
    );
    expect(() => refuseUntrainableBytes(null as never, "train")).toThrow(InvalidArgumentError);
    expect(() => refuseUntrainableBytes([null] as never, "train")).toThrow(
      /groups\[0\]: expected an array of Uint8Array, received null/,
    );
    expect(() => validateGroup({ trajectories: [] }, null as never)).toThrow(
      /validateGroup\(value, options\): options: expected an object, received null/,
    );
    expect(() => validateTrajectory({}, 5 as never)).toThrow(/options: expected an object/);
    expect(() => toWireGroups([{ trajectories: [], metadata: { n: 1n } }] as never, "log")).toThrow(
      /groups\[0\]\.metadata\.n: expected a JSON value, received a BigInt/,
    );
    expect(() => toWireGroups([Symbol("x")] as never, "log")).toThrow(/groups\[0\]/);
    expect(() => toWireGroups({} as never, [1] as never)).toThrow(
      /method: expected a string, received an array/,
    );
    expect(() => new TrajectoryShipper(null as never)).toThrow(
      "new TrajectoryShipper(options): options: expected an object, received null.",
    );
    expect(() => new TrajectoryShipper({ model: 5 } as never)).toThrow(
      /options\.model: expected a TrainableModel, received a number/,
    );
  });
});
