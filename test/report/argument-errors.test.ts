// The report's entry points and the gathers refuse bad input with errors of
// the library's family that name the field (or the file and line) and what
// was expected, never a bare TypeError or Error.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  gatherTrajectories,
  gatherTrajectoryGroups,
  InvalidArgumentError,
  TrajectoryGroup,
  TrajectoryRecorderError,
} from "trajectory-recorder";
import { ReportSourceError } from "trajectory-recorder/errors";
import { writeReport } from "trajectory-recorder/report";
import { describe, expect, it } from "vitest";
import { exitCodeOf } from "../../src/cli/main.js";
import { loadDataDir, loadJsonl, loadSource, serveReport } from "../../src/report/index.js";

async function failure(p: Promise<unknown> | (() => unknown)): Promise<Error> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a failure");
}

function expectArgument(e: Error, argument: string, text: RegExp) {
  expect(InvalidArgumentError.isInstance(e)).toBe(true);
  expect(TrajectoryRecorderError.isInstance(e)).toBe(true);
  expect((e as InvalidArgumentError).argument).toBe(argument);
  expect(e.message).toMatch(text);
}

describe("the report's arguments", () => {
  it("writeReport names out, the sources, run.steps and runs", async () => {
    expectArgument(
      await failure(writeReport({} as never)),
      "options.out",
      /writeReport\(options\): options\.out: expected the path of the HTML file/,
    );
    expectArgument(
      await failure(writeReport({ out: "x.html" } as never)),
      "options",
      /exactly one of dataDir .* received 0/,
    );
    expectArgument(
      await failure(writeReport({ out: "x.html", run: { steps: "no" } } as never)),
      "options.run.steps",
      /expected an array of \{ step, split, groups \}, received a string/,
    );
    expectArgument(
      await failure(writeReport({ out: "x.html", runs: [] })),
      "options.runs",
      /a non-empty array of sources/,
    );
  });

  it("serveReport names load, host and interval; loadSource its source", async () => {
    expectArgument(await failure(serveReport({} as never)), "options.load", /a function/);
    const load = async () => ({ title: "t", subtitle: "", steps: [] });
    expectArgument(
      await failure(serveReport({ load, host: "0.0.0.0" })),
      "options.host",
      /127\.0\.0\.1, ::1 or localhost .* received "0\.0\.0\.0"/,
    );
    expectArgument(
      await failure(serveReport({ load, interval: 10 })),
      "options.interval",
      /at least 50, received 10/,
    );
    expectArgument(
      await failure(serveReport({ load, interval: "1s" as never })),
      "options.interval",
      /received a string/,
    );
    expectArgument(await failure(loadSource({})), "source", /exactly one of dataDir/);
  });
});

describe("a report source that cannot be read", () => {
  it("is a ReportSourceError naming the file and line, with the CLI's exit code", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "report-errors-"));
    const file = path.join(dir, "groups.jsonl");
    await writeFile(file, `${JSON.stringify({ trajectories: [] })}\n[1]\n`);
    const invalid = (await failure(loadJsonl(file))) as ReportSourceError;
    expect(ReportSourceError.isInstance(invalid)).toBe(true);
    expect(invalid).toMatchObject({ source: file, line: 2, reason: "invalid" });
    expect(invalid.message).toBe(
      `${file}:2 is not a JSON object; expected a group or a trajectory.`,
    );
    expect(exitCodeOf(invalid)).toBe(3);

    const missing = (await failure(loadJsonl(path.join(dir, "none.jsonl")))) as ReportSourceError;
    expect(missing).toMatchObject({ reason: "unreadable", line: undefined });
    expect(missing.message).toMatch(/Cannot read .*none\.jsonl \(ENOENT\)/);
    expect(exitCodeOf(missing)).toBe(2);

    const noState = (await failure(loadDataDir(dir))) as ReportSourceError;
    expect(noState).toMatchObject({ reason: "unreadable" });
    expect(noState.source).toBe(path.join(dir, "emulator-state.json"));

    await writeFile(
      path.join(dir, "emulator-state.json"),
      JSON.stringify({ models: [{ id: "m1", entity: "e", project: "p", name: "a" }] }),
    );
    const unknown = (await failure(loadDataDir(dir, "zzz"))) as ReportSourceError;
    expect(unknown).toMatchObject({ reason: "model_not_found" });
    expect(unknown.message).toMatch(/No model "zzz" in .* it holds e\/p\/a \(m1\)/);
    expect(exitCodeOf(unknown)).toBe(4);
  });
});

describe("the gathers", () => {
  it("name what a promised group, an afterEach or a rollout gave instead", async () => {
    const tooMany = await failure(
      gatherTrajectoryGroups([Promise.resolve(42) as never], { maxExceptions: 0 }),
    );
    expectArgument(
      tooMany.cause as Error,
      "groups[0]",
      /groups\[0\]: a group given as a promise must resolve to a TrajectoryGroup; it resolved to a number\.$/,
    );

    const warnings: string[] = [];
    const kept = await gatherTrajectoryGroups([TrajectoryGroup.from([])], {
      afterEach: () => "yes" as never,
      logger: { warn: (m) => warnings.push(m) },
    });
    expect(kept).toEqual([]);
    expect(warnings.join("\n")).toMatch(
      /options\.afterEach: returned a string; expected a TrajectoryGroup, a list of them, or null to drop the group/,
    );

    const trajectories = await gatherTrajectories([async () => "no" as never], {
      maxExceptions: 1,
    });
    expectArgument(
      trajectories[0] as Error,
      "rollouts[0]",
      /must resolve to a Trajectory or an iterable of Trajectories; it resolved to a string/,
    );
  });
});
