// The report: one self-contained HTML page of a run's logged groups.
import { mkdir, open } from "node:fs/promises";
import path from "node:path";
import { InvalidArgumentError } from "../util/argument-error.js";
import { loadDataDir, loadJsonl } from "./load.js";
import { loadStore } from "./load-store.js";
import { reportParts } from "./render.js";
import type { ReportRun } from "./run.js";
import { combineRuns, loadSource, type ReportSource, sourceLabel } from "./sources.js";

export { ReportSourceError, type ReportSourceProblem } from "./errors.js";
export { loadDataDir, loadJsonl } from "./load.js";
export { loadStore } from "./load-store.js";
export { artTrainingMetrics, notTrainedReason, trajectoryMetricStats } from "./metrics.js";
export { type ReportPageOptions, renderReport, reportParts } from "./render.js";
// The root entry point (src/index.ts) re-exports writeReport, renderReport and the types.
export type {
  ReportFeedback,
  ReportGroup,
  ReportProductionTrajectory,
  ReportRun,
  ReportStep,
  ReportTraining,
  ReportTrajectory,
  StepStats,
} from "./run.js";
export { groupAdvantages, stepStats } from "./run.js";
export {
  filesVersion,
  type ReportServer,
  type ServeReportOptions,
  serveReport,
  sourceFiles,
} from "./serve.js";
export {
  combineRuns,
  loadService,
  loadSource,
  type ReportSource,
  sourceLabel,
} from "./sources.js";

/** Options of {@link writeReport}: where the run's groups are, and where the page goes. */
export interface WriteReportOptions {
  /** An emulator data directory (its `emulator-state.json`). */
  dataDir?: string;
  /** A JSONL file of groups (or steps, or trajectories). */
  groupsFile?: string;
  /** A run already in memory, instead of `dataDir` or `groupsFile`. */
  run?: ReportRun;
  /**
   * Two or more runs compared on one page (their curves overlaid, the same
   * scenario side by side), instead of `dataDir`, `groupsFile` or `run`.
   */
  runs?: ReportSource[];
  /**
   * A `TrajectoryStore`'s directory: its production trajectories, grouped by
   * session with their feedback and whether they may be trained on, in the
   * page's Production view. Alone, or beside one of the sources above. Read
   * while no process holds the store (a running proxy does).
   */
  store?: string;
  /**
   * With `dataDir`: the model, as its id, a unique id prefix, `ENTITY/PROJECT/NAME`,
   * `PROJECT/NAME` or its name; default the most recently active one.
   */
  model?: string;
  /** The HTML file to write. */
  out: string;
  title?: string;
}

/** What {@link writeReport} wrote. */
export interface WrittenReport {
  path: string;
  /** Distinct steps with logged groups (any split), a training job or a checkpoint's figures. */
  steps: number;
  /** Trajectories drawn; 0 means the run holds nothing and the page says so. */
  trajectories: number;
  /** Production trajectories drawn (from `store`, or the run's `production`). */
  production: number;
  /** Size of the HTML file in bytes. */
  bytes: number;
}

const CALL = "writeReport(options)";

/**
 * Writes the HTML report of a run (streamed to disk, so runs of any size fit)
 * and says how much it drew. A run with no trajectory still gets a page,
 * which says so; `trajectories` is then 0.
 *
 * @example
 * const { path, trajectories } = await writeReport({ dataDir: ".emulator-data", out: "report.html" });
 */
export async function writeReport(options: WriteReportOptions): Promise<WrittenReport> {
  if (!options || typeof options.out !== "string" || options.out === "")
    throw new InvalidArgumentError(
      CALL,
      "options.out",
      "the path of the HTML file to write (a non-empty string)",
      options?.out,
    );
  const sources = [options.dataDir, options.groupsFile, options.run, options.runs].filter(
    (x) => x !== undefined,
  );
  if (sources.length > 1 || (sources.length === 0 && options.store === undefined))
    throw new InvalidArgumentError(
      CALL,
      "options",
      "",
      undefined,
      `expected exactly one of dataDir (an emulator data directory), groupsFile (a JSONL file of groups), run, or runs (sources to compare), with or without store (a trajectory store's directory), received ${sources.length}${options.store === undefined ? "" : " and a store"}`,
    );
  if (options.store !== undefined && (typeof options.store !== "string" || options.store === ""))
    throw new InvalidArgumentError(
      CALL,
      "options.store",
      "a trajectory store's directory (a non-empty string)",
      options.store,
    );
  if (options.run !== undefined && !Array.isArray(options.run?.steps))
    throw new InvalidArgumentError(
      CALL,
      "options.run.steps",
      "an array of { step, split, groups }",
      options.run?.steps,
    );
  if (options.runs !== undefined && (!Array.isArray(options.runs) || options.runs.length < 1))
    throw new InvalidArgumentError(
      CALL,
      "options.runs",
      "a non-empty array of sources ({ dataDir, model? }, { groupsFile } or { store })",
      options.runs,
    );
  const run = await loadRun(options);
  if (options.title !== undefined) run.title = options.title;
  const out = path.resolve(options.out);
  await mkdir(path.dirname(out), { recursive: true });
  const file = await open(out, "w");
  let bytes = 0;
  try {
    for (const part of reportParts(run)) {
      const data = Buffer.from(part);
      bytes += data.length;
      await file.write(data);
    }
  } finally {
    await file.close();
  }
  const steps = new Set<number>();
  let trajectories = 0;
  for (const s of run.steps) {
    steps.add(s.step);
    for (const g of s.groups) trajectories += g.trajectories.length;
  }
  // A source with no groups (the service's checkpoints) still has steps.
  for (const s of run.summaries ?? []) steps.add(s.step);
  for (const t of run.training ?? []) steps.add(t.step);
  const production = run.production?.length ?? 0;
  return { path: out, steps: steps.size, trajectories, production, bytes };
}

/** The run the options name, with the store's production trajectories when one is given. */
async function loadRun(options: WriteReportOptions): Promise<ReportRun> {
  const stored = options.store === undefined ? undefined : await loadStore(options.store);
  const given =
    options.run !== undefined
      ? { ...options.run }
      : options.runs !== undefined
        ? await loadRuns(options.runs)
        : options.dataDir !== undefined
          ? await loadDataDir(options.dataDir, options.model)
          : options.groupsFile !== undefined
            ? await loadJsonl(options.groupsFile)
            : undefined;
  if (!given) return stored as ReportRun;
  if (!stored) return given;
  return {
    ...given,
    subtitle: [given.subtitle, stored.subtitle].filter((x) => x).join(" · "),
    production: [...(given.production ?? []), ...(stored.production ?? [])],
  };
}

/** The runs of several sources, as one report (a single source stays a plain run). */
export async function loadRuns(sources: readonly ReportSource[]): Promise<ReportRun> {
  const runs = [];
  for (const source of sources) runs.push(await loadSource(source));
  if (runs.length === 1) return runs[0] as ReportRun;
  // Labels: each model's title when they differ, else the sources' names.
  const titles = runs.map((r) => r.title);
  const distinct = new Set(titles).size === titles.length;
  return combineRuns(
    runs.map((run, i) => {
      const source = sources[i] as ReportSource;
      return { run, label: source.label ?? (distinct ? run.title : sourceLabel(source)) };
    }),
  );
}
