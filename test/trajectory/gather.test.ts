import {
  type GatherProgress,
  type GroupSink,
  gatherTrajectories,
  gatherTrajectoryGroups,
  TooManyExceptionsError,
  Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { describe, expect, it } from "vitest";
import { createProgressBar, formatProgress } from "../../src/trajectory/index.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ok =
  (reward: number, ms = 1) =>
  async () => {
    await sleep(ms);
    return new Trajectory({ reward });
  };
const boom =
  (message: string, ms = 1) =>
  async (): Promise<Trajectory> => {
    await sleep(ms);
    throw new Error(message);
  };

describe("TrajectoryGroup.from", () => {
  it("awaits rollout promises and functions, recording each failure as an exception", async () => {
    const group = await TrajectoryGroup.from(
      [ok(1), Promise.resolve(new Trajectory({ reward: 0.5 })), boom("no tool")],
      {
        metadata: { scenario: "s1" },
      },
    );
    expect(group).toBeInstanceOf(TrajectoryGroup);
    expect(group.trajectories.map((t) => t.reward)).toEqual([1, 0.5]);
    expect(group.exceptions).toMatchObject([{ type: "<class 'Error'>", message: "no tool" }]);
    expect(group.metadata).toEqual({ scenario: "s1" });
  });

  it("says so when a rollout resolves to something other than a Trajectory", async () => {
    const group = await TrajectoryGroup.from([async () => ({ reward: 1 }) as never]);
    expect(group.exceptions[0]?.message).toMatch(/must resolve to a Trajectory/);
  });
});

describe("gatherTrajectoryGroups", () => {
  it("returns finished groups in input order and hands each to the sink", async () => {
    const sunk: TrajectoryGroup[] = [];
    const sink: GroupSink = {
      add: async (g) => {
        await sleep(1);
        sunk.push(g);
      },
    };
    const groups = await gatherTrajectoryGroups(
      [
        TrajectoryGroup.from([ok(1, 20), ok(0, 20)], { metadata: { i: 0 } }),
        [ok(0.5, 1)],
        new TrajectoryGroup([new Trajectory({ reward: 0.25 })]),
        Promise.resolve(new TrajectoryGroup([new Trajectory({ reward: 0.75 })])),
      ],
      { sink },
    );
    expect(groups.map((g) => g.trajectories.map((t) => t.reward))).toEqual([
      [1, 0],
      [0.5],
      [0.25],
      [0.75],
    ]);
    expect(groups[0]?.metadata).toEqual({ i: 0 });
    expect(sunk).toHaveLength(4);
    expect(new Set(sunk)).toEqual(new Set(groups));
  });

  it("never runs more rollouts at once than the concurrency allows", async () => {
    let running = 0;
    let peak = 0;
    const rollout = async () => {
      running++;
      peak = Math.max(peak, running);
      await sleep(5);
      running--;
      return new Trajectory({ reward: 1 });
    };
    const groups = Array.from({ length: 5 }, () =>
      TrajectoryGroup.from(Array.from({ length: 4 }, () => rollout)),
    );
    const result = await gatherTrajectoryGroups(groups, { concurrency: 3 });
    expect(result.flatMap((g) => g.trajectories)).toHaveLength(20);
    expect(peak).toBe(3);
  });

  it("keeps going past failures up to maxExceptions and records them on their group", async () => {
    const groups = await gatherTrajectoryGroups(
      [TrajectoryGroup.from([ok(1), boom("a")]), TrajectoryGroup.from([boom("b"), ok(0)])],
      { maxExceptions: 2 },
    );
    expect(groups[0]?.exceptions.map((e) => e.message)).toEqual(["a"]);
    expect(groups[1]?.exceptions.map((e) => e.message)).toEqual(["b"]);
    expect(groups.flatMap((g) => g.trajectories)).toHaveLength(2);
  });

  it("treats a maxExceptions below 1 as a fraction of all rollouts", async () => {
    // 10 rollouts, 0.2 allows 2 failures; the third aborts.
    const rollouts = (fail: number) =>
      Array.from({ length: 5 }, (_, i) => (i < fail ? boom(`f${i}`) : ok(1)));
    await expect(
      gatherTrajectoryGroups(
        [TrajectoryGroup.from(rollouts(1)), TrajectoryGroup.from(rollouts(1))],
        {
          maxExceptions: 0.2,
        },
      ),
    ).resolves.toHaveLength(2);
    await expect(
      gatherTrajectoryGroups(
        [TrajectoryGroup.from(rollouts(2)), TrajectoryGroup.from(rollouts(1))],
        {
          maxExceptions: 0.2,
        },
      ),
    ).rejects.toThrow(TooManyExceptionsError);
  });

  it("throws a clear error at the first failure by default and starts nothing more", async () => {
    let started = 0;
    const counted = (r: () => Promise<Trajectory>) => () => {
      started++;
      return r();
    };
    const sunk: TrajectoryGroup[] = [];
    const error = await gatherTrajectoryGroups(
      [
        TrajectoryGroup.from([
          counted(boom("rate limited")),
          ...Array.from({ length: 9 }, () => counted(ok(1, 5))),
        ]),
      ],
      { concurrency: 1, sink: { add: (g) => void sunk.push(g) } },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TooManyExceptionsError);
    expect((error as Error).message).toBe(
      "1 rollouts failed, more than maxExceptions allows (0); the last error was: rate limited",
    );
    expect(((error as Error).cause as Error).message).toBe("rate limited");
    expect(started).toBe(1);
    expect(sunk).toHaveLength(0);
  });

  it("drops a promised group that rejects within the limit, counting it as one failure and logging it", async () => {
    const warnings: string[] = [];
    const groups = await gatherTrajectoryGroups(
      [
        Promise.reject(new Error("scenario failed")),
        new TrajectoryGroup([new Trajectory({ reward: 1 })]),
      ],
      { maxExceptions: 1, logger: { warn: (m) => warnings.push(m) } },
    );
    expect(groups).toHaveLength(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("groups[0] failed and is left out");
    expect(warnings[0]).toContain("scenario failed");
  });

  it("fails the gather when the sink fails, so no group is lost silently", async () => {
    await expect(
      gatherTrajectoryGroups([[ok(1)]], {
        sink: {
          add: () => {
            throw new Error("disk full");
          },
        },
      }),
    ).rejects.toThrow("disk full");
  });

  it("reports progress with the running reward mean after each rollout", async () => {
    const seen: GatherProgress[] = [];
    await gatherTrajectoryGroups([TrajectoryGroup.from([ok(1, 1), ok(0, 10), boom("x", 20)])], {
      maxExceptions: 1,
      concurrency: 1,
      onProgress: (p) => seen.push({ ...p }),
    });
    expect(seen).toEqual([
      { done: 1, total: 3, exceptions: 0, rewardMean: 1 },
      { done: 2, total: 3, exceptions: 0, rewardMean: 0.5 },
      { done: 3, total: 3, exceptions: 1, rewardMean: 0.5 },
    ]);
  });
});

describe("gatherTrajectoryGroups afterEach", () => {
  it("rescores each finished group before the sink gets it and before its rewards are reported", async () => {
    const order: string[] = [];
    const seen: GatherProgress[] = [];
    const sunkRewards: number[][] = [];
    await gatherTrajectoryGroups([TrajectoryGroup.from([ok(3, 1), ok(1, 5)])], {
      concurrency: 1,
      afterEach: (g) => {
        order.push("afterEach");
        const best = Math.max(...g.trajectories.map((t) => t.reward));
        for (const t of g.trajectories) t.reward = t.reward === best ? 1 : 0;
        return g;
      },
      sink: {
        add: (g) => {
          order.push("sink");
          sunkRewards.push(g.trajectories.map((t) => t.reward));
        },
      },
      onProgress: (p) => seen.push({ ...p }),
    });
    expect(order).toEqual(["afterEach", "sink"]);
    expect(sunkRewards).toEqual([[1, 0]]);
    // The raw rewards (3 and 1) never reach the mean; only the rescored ones do.
    expect(seen.map((p) => p.rewardMean)).toEqual([null, null, 0.5]);
    expect(seen.at(-1)).toEqual({
      done: 2,
      total: 2,
      exceptions: 0,
      rewardMean: 0.5,
    });
  });

  it("uses the group the hook returns, in the result and in the sink", async () => {
    const replacement = new TrajectoryGroup([new Trajectory({ reward: 0.25 })]);
    const sunk: TrajectoryGroup[] = [];
    const groups = await gatherTrajectoryGroups(
      [new TrajectoryGroup([new Trajectory({ reward: 1 })])],
      { afterEach: async () => replacement, sink: { add: (g) => void sunk.push(g) } },
    );
    expect(groups).toEqual([replacement]);
    expect(sunk).toEqual([replacement]);
  });

  it("loses only the group whose hook throws: counted, logged, and every other group kept", async () => {
    const sunk: TrajectoryGroup[] = [];
    const warnings: string[] = [];
    const seen: GatherProgress[] = [];
    const groups = await gatherTrajectoryGroups([[ok(1)], [ok(2)], [ok(3)]], {
      afterEach: (g) => {
        if (g.trajectories[0]?.reward === 2) throw new Error("judge unavailable");
        return g;
      },
      sink: { add: (g) => void sunk.push(g) },
      logger: { warn: (m) => warnings.push(m) },
      onProgress: (p) => seen.push({ ...p }),
    });
    expect(groups.map((g) => g.trajectories[0]?.reward)).toEqual([1, 3]);
    expect(sunk.map((g) => g.trajectories[0]?.reward).sort()).toEqual([1, 3]);
    expect(seen.at(-1)?.failedGroups).toBe(1);
    expect(warnings).toEqual([
      "gatherTrajectoryGroups: afterEach failed on groups[1], which is left out (1 so far): judge unavailable",
    ]);
    // A hook returning something other than groups fails that group the same way.
    const bad = await gatherTrajectoryGroups([[ok(1)]], {
      afterEach: () => 42 as never,
      logger: { warn: (m) => warnings.push(m) },
    });
    expect(bad).toEqual([]);
    expect(warnings.at(-1)).toMatch(
      /options\.afterEach: returned a number; expected a TrajectoryGroup, a list of them, or null to drop the group/,
    );
  });
});

describe("ART's gather semantics (OpenPipe/ART src/art/gather.py)", () => {
  it("drops a group whose afterEach returns None (undefined or null), as after_each does", async () => {
    const sunk: TrajectoryGroup[] = [];
    const groups = await gatherTrajectoryGroups([[ok(1)], [ok(0)], [ok(2)]], {
      afterEach: (g) =>
        (g.trajectories[0]?.reward ?? 0) > 0
          ? g
          : g.trajectories[0]?.reward === 0
            ? null
            : undefined,
      sink: { add: (g) => void sunk.push(g) },
    });
    expect(groups.map((g) => g.trajectories[0]?.reward)).toEqual([1, 2]);
    expect(sunk).toHaveLength(2);
  });

  it("flattens a list afterEach returns into the result, in place, each group to the sink", async () => {
    const split = (g: TrajectoryGroup) => g.trajectories.map((t) => new TrajectoryGroup([t]));
    const sunk: TrajectoryGroup[] = [];
    const groups = await gatherTrajectoryGroups([[ok(1), ok(2)], [ok(3)]], {
      afterEach: split,
      sink: { add: (g) => void sunk.push(g) },
    });
    expect(groups.map((g) => g.trajectories.map((t) => t.reward))).toEqual([[1], [2], [3]]);
    expect(sunk).toHaveLength(3);
  });

  it("shows at most maxMetrics trajectory metrics (means, first seen first) in the progress, as max_metrics", async () => {
    const withMetrics = (reward: number) => () =>
      new Trajectory({ reward, metrics: { accuracy: reward, turns: 2, cost: 0.5 } });
    const seen: GatherProgress[] = [];
    await gatherTrajectoryGroups([[withMetrics(1), withMetrics(0)]], {
      maxMetrics: 2,
      onProgress: (p) => seen.push({ ...p }),
    });
    expect(seen.at(-1)?.metrics).toEqual({ accuracy: 0.5, turns: 2 });
    const all: GatherProgress[] = [];
    await gatherTrajectoryGroups([[withMetrics(1)]], { onProgress: (p) => all.push({ ...p }) });
    expect(Object.keys(all.at(-1)?.metrics ?? {})).toEqual(["accuracy", "turns", "cost"]);
  });

  it("records completion_tokens on each trajectory whose every Choice has a token count, as record_metrics", async () => {
    const choice = (ids: number[]) => ({
      finish_reason: "stop" as const,
      index: 0,
      logprobs: null,
      message: { role: "assistant" as const, content: "x", refusal: null },
      token_ids: ids,
    });
    const counted = new Trajectory({
      messages_and_choices: [
        { role: "user", content: "q" },
        choice([1, 2, 3]),
        { role: "user", content: "again" },
        choice([4]),
      ],
    });
    const uncounted = new Trajectory({
      messages_and_choices: [{ role: "user", content: "q" }, choice([])],
    });
    const seen: GatherProgress[] = [];
    await gatherTrajectoryGroups([new TrajectoryGroup([counted, uncounted])], {
      onProgress: (p) => seen.push({ ...p }),
    });
    expect(counted.metrics.completion_tokens).toBe(4);
    expect(uncounted.metrics).not.toHaveProperty("completion_tokens");
    expect(seen.at(-1)?.metrics).toEqual({ completion_tokens: 4 });
  });
});

describe("progress bar", () => {
  it("formats the bar, the count, the reward mean and any exceptions", () => {
    expect(
      formatProgress(
        { done: 5, total: 10, exceptions: 1, rewardMean: 0.42 },
        { label: "gather", width: 10 },
      ),
    ).toBe("gather [#####.....] 5/10 reward=0.420 exceptions=1");
    expect(
      formatProgress({ done: 0, total: 4, exceptions: 0, rewardMean: null }, { width: 4 }),
    ).toBe("gather [....] 0/4 reward=-");
  });

  it("draws only on a terminal", async () => {
    const written: string[] = [];
    const tty = { isTTY: true, write: (s: string) => written.push(s) };
    await gatherTrajectoryGroups([[ok(1)]], { progressStream: tty, label: "eval" });
    expect(written).toEqual(["\reval [####################] 1/1 reward=1.000", "\n"]);

    const piped: string[] = [];
    await gatherTrajectoryGroups([[ok(1)]], {
      progressStream: { isTTY: false, write: (s: string) => piped.push(s) },
    });
    expect(piped).toEqual([]);
    expect(createProgressBar("x", { write: () => true }).enabled).toBe(false);
  });
});

describe("gatherTrajectories, as ART's gather_trajectories", () => {
  it("returns one result per input in input order: a Trajectory, or a list from a rollout that gave several", async () => {
    const results = await gatherTrajectories([
      () => ok(1)(),
      async () => [new Trajectory({ reward: 2 }), new Trajectory({ reward: 3 })],
      Promise.resolve(new Trajectory({ reward: 4 })),
    ]);
    expect(
      results.map((r) => (Array.isArray(r) ? r.map((t) => t.reward) : (r as Trajectory).reward)),
    ).toEqual([1, [2, 3], 4]);
  });

  it("rejects on the first failure by default; with maxExceptions, returns each failure in its slot", async () => {
    const boom = () => Promise.reject(new Error("boom"));
    await expect(gatherTrajectories([ok(1), boom])).rejects.toThrow(TooManyExceptionsError);
    const seen: GatherProgress[] = [];
    const results = await gatherTrajectories([ok(1), boom, ok(2)], {
      maxExceptions: 1,
      onProgress: (p) => seen.push({ ...p }),
    });
    expect(results[1]).toBeInstanceOf(Error);
    expect((results[1] as Error).message).toBe("boom");
    expect((results[2] as Trajectory).reward).toBe(2);
    expect(seen.at(-1)).toMatchObject({ done: 3, total: 3, exceptions: 1, rewardMean: 1.5 });
    await expect(gatherTrajectories([boom, boom], { maxExceptions: 1 })).rejects.toThrow(
      TooManyExceptionsError,
    );
  });
});
