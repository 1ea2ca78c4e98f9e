// Bounding and stopping a gather: its signal, the per-rollout and per-hook
// timeouts, and options checked before anything runs.
import {
  gatherTrajectories,
  gatherTrajectoryGroups,
  InvalidArgumentError,
  Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { GatherTimeoutError } from "trajectory-recorder/errors";
import { describe, expect, it } from "vitest";

const never = () => new Promise<Trajectory>(() => {});
const quick = (reward: number) => async () => new Trajectory({ reward });
const quiet = { warn: () => {} };

describe("gatherTrajectoryGroups: signal and timeouts", () => {
  it("rejects with the signal's reason as soon as it aborts, and starts nothing more", async () => {
    const controller = new AbortController();
    let started = 0;
    const slow = () => {
      started++;
      return never();
    };
    const gather = gatherTrajectoryGroups(
      [TrajectoryGroup.from([slow, slow]), TrajectoryGroup.from([slow, slow])],
      { concurrency: 2, signal: controller.signal },
    );
    await new Promise((r) => setTimeout(r, 20));
    const reason = new Error("stop now");
    controller.abort(reason);
    await expect(gather).rejects.toBe(reason);
    await new Promise((r) => setTimeout(r, 20));
    expect(started).toBe(2);
  });

  it("never starts with a signal that already aborted", async () => {
    let started = 0;
    await expect(
      gatherTrajectoryGroups(
        [
          TrajectoryGroup.from([
            () => {
              started++;
              return never();
            },
          ]),
        ],
        {
          signal: AbortSignal.abort(),
        },
      ),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(started).toBe(0);
  });

  it("counts a rollout past rolloutTimeout as a failed rollout", async () => {
    const [group] = await gatherTrajectoryGroups(
      [TrajectoryGroup.from([quick(1), never, quick(0)])],
      { rolloutTimeout: 30, maxExceptions: 1 },
    );
    expect(group?.trajectories.map((t) => t.reward)).toEqual([1, 0]);
    expect(group?.exceptions).toHaveLength(1);
    expect(JSON.stringify(group?.exceptions[0])).toMatch(
      /GatherTimeoutError|did not settle within 30 ms/,
    );
    // With no failure allowed, the gather fails with the timeout as its cause.
    const error = await gatherTrajectoryGroups([TrajectoryGroup.from([never])], {
      rolloutTimeout: 30,
    }).catch((e: unknown) => e);
    expect((error as Error).cause).toBeInstanceOf(GatherTimeoutError);
  });

  it("leaves out a group whose afterEach never settles, and keeps the others", async () => {
    const warnings: string[] = [];
    const groups = await gatherTrajectoryGroups(
      [TrajectoryGroup.from([quick(1)]), TrajectoryGroup.from([quick(2)])],
      {
        hookTimeout: 30,
        afterEach: (g) => (g.trajectories[0]?.reward === 1 ? new Promise(() => {}) : g),
        logger: { warn: (m) => warnings.push(m) },
      },
    );
    expect(groups.map((g) => g.trajectories[0]?.reward)).toEqual([2]);
    expect(warnings.join()).toMatch(
      /afterEach of groups\[0\] did not settle within 30 ms \(options\.hookTimeout\)/,
    );
  });

  it("fails the gather when sink.add never settles", async () => {
    const error = await gatherTrajectoryGroups([TrajectoryGroup.from([quick(1)])], {
      hookTimeout: 30,
      sink: { add: () => new Promise(() => {}) },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatherTimeoutError);
    expect((error as GatherTimeoutError).step).toBe("sink.add of groups[0]");
  });

  it("gatherTrajectories takes the same signal and rolloutTimeout", async () => {
    const results = await gatherTrajectories([quick(1), never], {
      rolloutTimeout: 30,
      maxExceptions: 1,
    });
    expect(results[1]).toBeInstanceOf(GatherTimeoutError);
    const controller = new AbortController();
    const gather = gatherTrajectories([never], { signal: controller.signal });
    controller.abort();
    await expect(gather).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("gather options are checked before anything runs", () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ maxExceptions: Number.NaN }, "options.maxExceptions", /received NaN/],
    [{ maxExceptions: "abc" }, "options.maxExceptions", /received a string/],
    [{ maxExceptions: -1 }, "options.maxExceptions", /-1/],
    [{ concurrency: "2" }, "options.concurrency", /whole number of rollouts of at least 1/],
    [{ concurrency: 0 }, "options.concurrency", /at least 1/],
    [{ afterEach: "yes" }, "options.afterEach", /a function/],
    [{ sink: {} }, "options.sink", /add\(group\)/],
    [{ signal: "stop" }, "options.signal", /an AbortSignal/],
    [{ rolloutTimeout: 0 }, "options.rolloutTimeout", /positive number of ms/],
    [{ hookTimeout: Number.POSITIVE_INFINITY }, "options.hookTimeout", /positive number of ms/],
  ];
  for (const [options, name, expected] of cases) {
    it(`${Object.entries(options).map(([k, v]) => `${k}: ${typeof v === "string" ? `"${v}"` : String(v)}`)} → ${name}`, async () => {
      let started = 0;
      const error = await gatherTrajectoryGroups(
        [
          TrajectoryGroup.from([
            async () => {
              started++;
              return new Trajectory({ reward: 1 });
            },
          ]),
        ],
        { logger: quiet, ...(options as object) },
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe(name);
      expect((error as Error).message).toMatch(expected);
      expect((error as Error).message).toContain(
        `gatherTrajectoryGroups(groups, options): ${name}:`,
      );
      expect(started).toBe(0);
    });
  }

  it("gatherTrajectories checks its options the same way", async () => {
    const error = await gatherTrajectories([quick(1)], { maxExceptions: Number.NaN }).catch(
      (e: unknown) => e,
    );
    expect((error as InvalidArgumentError).argument).toBe("options.maxExceptions");
  });

  it("a limit given as undefined is the default", async () => {
    const groups = await gatherTrajectoryGroups([TrajectoryGroup.from([quick(1)])], {
      maxExceptions: undefined,
      concurrency: undefined,
    });
    expect(groups).toHaveLength(1);
  });
});
