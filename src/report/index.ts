// The report: one self-contained HTML page of a run's logged groups.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { loadDataDir, loadJsonl } from "./load.js";
import { renderReport } from "./render.js";
import type { ReportRun } from "./run.js";

export { loadDataDir, loadJsonl } from "./load.js";
export { renderReport } from "./render.js";
export type { ReportGroup, ReportRun, ReportStep, ReportTrajectory, StepStats } from "./run.js";
export { stepStats } from "./run.js";

/** Options of {@link writeReport}: where the run's groups are, and where the page goes. */
export interface WriteReportOptions {
  /** An emulator data directory (its `emulator-state.json`). */
  dataDir?: string;
  /** A JSONL file of groups (or steps, or trajectories). */
  groupsFile?: string;
  /** With `dataDir`: the model (id or name); default the most recently active one. */
  model?: string;
  /** The HTML file to write. */
  out: string;
  title?: string;
}

/**
 * Writes the HTML report of a run and says how much it drew.
 *
 * @example
 * const { path, steps } = await writeReport({ dataDir: ".emulator-data", out: "report.html" });
 */
export async function writeReport(
  options: WriteReportOptions,
): Promise<{ path: string; steps: number; trajectories: number }> {
  if (!options || typeof options.out !== "string" || options.out === "")
    throw new TypeError("writeReport: out: expected the path of the HTML file to write");
  if ((options.dataDir === undefined) === (options.groupsFile === undefined))
    throw new TypeError(
      "writeReport: pass exactly one of dataDir (an emulator data directory) or groupsFile (a JSONL file of groups)",
    );
  const run: ReportRun =
    options.dataDir !== undefined
      ? await loadDataDir(options.dataDir, options.model)
      : await loadJsonl(options.groupsFile as string);
  if (options.title !== undefined) run.title = options.title;
  const out = path.resolve(options.out);
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, renderReport(run));
  return {
    path: out,
    steps: new Set(run.steps.map((s) => s.step)).size,
    trajectories: run.steps.reduce(
      (n, s) => n + s.groups.reduce((m, g) => m + g.trajectories.length, 0),
      0,
    ),
  };
}
