// Calls with data of the wrong shape get the library's errors, naming the
// argument or field, never the engine's raw TypeError.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  hasRewardSignal,
  InvalidArgumentError,
  InvalidTrainingOptionsError,
  LocalFileUploader,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
  TrajectoryShipper,
  TrajectoryValidationError,
} from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { InvalidGroupDataError } from "trajectory-recorder/errors";
import { renderReport } from "trajectory-recorder/report";
import { describe, expect, it } from "vitest";

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (error) {
    return error as Error;
  }
  throw new Error("did not throw");
}

describe("library errors naming the argument", () => {
  it("hasRewardSignal", () => {
    for (const [group, argument] of [
      [{}, "group.trajectories"],
      [null, "group"],
      [{ trajectories: [{ reward: 1 }, null] }, "group.trajectories[1].reward"],
    ] as const) {
      const error = thrown(() => hasRewardSignal(group as never));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
      expect(error.message).toMatch(/^hasRewardSignal\(group\): /);
    }
    expect(hasRewardSignal({ trajectories: [{ reward: 1 }, { reward: 0 }] } as never)).toBe(true);
  });

  it("LocalFileUploader.upload", async () => {
    const uploader = new LocalFileUploader(await mkdtemp(path.join(tmpdir(), "tr-up-")));
    for (const [artifact, argument] of [
      [{}, "artifact.name"],
      [undefined, "artifact"],
      [{ name: "a.jsonl", data: 5 }, "artifact.data"],
    ] as const) {
      const error = await uploader.upload(artifact as never).catch((e: Error) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
    }
  });

  it("renderReport", () => {
    for (const [run, argument] of [
      [{}, "run.steps"],
      [null, "run"],
      [
        { steps: [{ step: 0, split: "train", groups: [{}] }] },
        "run.steps[0].groups[0].trajectories",
      ],
      [
        {
          steps: [
            {
              step: 0,
              split: "train",
              groups: [{ trajectories: [{ messages_and_choices: [], reward: "1" }] }],
            },
          ],
        },
        "run.steps[0].groups[0].trajectories[0].reward",
      ],
    ] as const) {
      const error = thrown(() => renderReport(run as never));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(argument);
      expect(error.message).toMatch(/^renderReport\(run\): /);
    }
    expect(renderReport({ steps: [] })).toMatch(/<html/i);
  });

  it("Trajectory.fromJSON and new Trajectory with a start_time that is no date", () => {
    const error = thrown(() =>
      Trajectory.fromJSON({ messages_and_choices: [], reward: 0, start_time: "yesterday" }),
    );
    expect(error).toBeInstanceOf(TrajectoryValidationError);
    expect(error.message).toMatch(/start_time: expected a date and time as ISO 8601/);
    const fake = thrown(() => new Trajectory({ start_time: Object.create(Date.prototype) }));
    expect(fake).toBeInstanceOf(InvalidArgumentError);
    expect((fake as InvalidArgumentError).argument).toBe("init.start_time");
    // Python's isoformat, with microseconds and no zone, still reads.
    const t = Trajectory.fromJSON({
      messages_and_choices: [],
      reward: 0,
      start_time: "2025-07-01T12:30:05.123456",
    });
    expect(t.start_time.getFullYear()).toBe(2025);
  });

  it("shipper.add: bad data is an InvalidGroupDataError about the group, not about options", async () => {
    const emu = await startEmulator({ port: 0, apiKeys: { k: "me" } });
    const client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
    const model = await TrainableModel.register(client, {
      project: "p",
      name: "n",
      baseModel: "toy",
    });
    const shipper = new TrajectoryShipper({ model, flushOnExit: false });
    const group = new TrajectoryGroup([
      new Trajectory({ reward: 1 }),
      new Trajectory({ reward: 0 }),
    ]);
    (group.trajectories[0] as { reward: unknown }).reward = "high";
    const error = await shipper.add(group).catch((e: Error) => e);
    await shipper.close().catch(() => {});
    await emu.close();
    expect(error).toBeInstanceOf(InvalidGroupDataError);
    expect(error).toBeInstanceOf(InvalidTrainingOptionsError);
    expect((error as Error).message).toMatch(
      /^Invalid trajectory groups given to TrajectoryShipper\.add, nothing was sent: groups\[0\]\.trajectories\[0\]\.reward/,
    );
    expect((error as Error).message).not.toMatch(/options/);
  });
});
