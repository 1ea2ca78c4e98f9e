// Where a report's runs come from, and two or more runs in one report.
import path from "node:path";
import type { TrainingClient } from "../client/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { loadDataDir, loadJsonl } from "./load.js";
import { loadStore } from "./load-store.js";
import type { ReportRun, StepStats } from "./run.js";

/**
 * One run to draw: an emulator data directory (and a model in it), a JSONL
 * file of groups, or a trajectory store's directory (production trajectories
 * and their feedback, drawn in the Production view).
 */
export interface ReportSource {
  /** An emulator data directory (its `emulator-state.json`). */
  dataDir?: string;
  /** A JSONL file of groups (or steps, or trajectories). */
  groupsFile?: string;
  /**
   * A `TrajectoryStore`'s directory (a proxy's or recorder's `--store DIR`),
   * read while no process holds it.
   */
  store?: string;
  /**
   * With `dataDir`: the model, as its id, a unique id prefix (4+ characters),
   * `ENTITY/PROJECT/NAME`, `PROJECT/NAME` or a name; default the most recently active.
   */
  model?: string;
  /** The run's name on the page when runs are compared; default the model's name or the file's. */
  label?: string;
}

/** Reads one source. */
export async function loadSource(source: ReportSource): Promise<ReportRun> {
  const given = [source.dataDir, source.groupsFile, source.store].filter((x) => x !== undefined);
  if (given.length !== 1)
    throw new InvalidArgumentError(
      "loadSource(source)",
      "source",
      "",
      undefined,
      `expected exactly one of dataDir (an emulator data directory), groupsFile (a JSONL file of groups) or store (a trajectory store's directory), received ${given.length}`,
    );
  if (source.store !== undefined) return loadStore(source.store);
  return source.dataDir !== undefined
    ? loadDataDir(source.dataDir, source.model)
    : loadJsonl(source.groupsFile as string);
}

/**
 * Several runs as one report: each step and job keeps its run's label, so the
 * curves overlay (one series per run and split) and the Checkpoints view puts
 * the same scenario of two runs side by side. Labels default to each run's
 * title, made unique.
 */
export function combineRuns(runs: readonly { run: ReportRun; label?: string }[]): ReportRun {
  const used = new Set<string>();
  const labels = runs.map(({ run, label }, i) => {
    let base = label ?? run.title ?? `run ${i + 1}`;
    if (base.length > 80) base = `${base.slice(0, 79)}…`;
    let name = base;
    for (let k = 2; used.has(name); k++) name = `${base} (${k})`;
    used.add(name);
    return name;
  });
  return {
    title: `${labels.join(" vs ")}`,
    subtitle: runs.map(({ run }, i) => `${labels[i]}: ${run.subtitle ?? ""}`).join(" · "),
    steps: runs.flatMap(({ run }, i) => run.steps.map((s) => ({ ...s, run: labels[i] as string }))),
    training: runs.flatMap(({ run }, i) =>
      (run.training ?? []).map((t) => ({ ...t, run: labels[i] as string })),
    ),
    summaries: runs.flatMap(({ run }, i) =>
      (run.summaries ?? []).map((s) => ({ ...s, run: labels[i] as string })),
    ),
    ...(runs.some(({ run }) => run.production !== undefined)
      ? { production: runs.flatMap(({ run }) => run.production ?? []) }
      : {}),
  };
}

/** The default label of a source: the directory's or file's base name (else the model it names). */
export function sourceLabel(source: ReportSource): string | undefined {
  if (source.label !== undefined) return source.label;
  const p = source.dataDir ?? source.groupsFile ?? source.store;
  return p === undefined ? source.model : path.basename(path.resolve(p));
}

const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/**
 * A model's run as the service shows it: its checkpoint list. Checkpoint
 * `N` holds the metrics of the job that trained on step `N - 1`'s rollouts
 * (their mean reward and spread among them); the service's API has no read
 * of logged groups, so the page draws the curves, the metrics and the steps,
 * and its Groups view stays empty.
 */
export async function loadService(
  client: TrainingClient,
  modelId: string,
  title?: string,
): Promise<ReportRun> {
  const training: NonNullable<ReportRun["training"]> = [];
  const summaries: StepStats[] = [];
  for await (const cp of client.models.checkpoints.list(modelId, { order: "asc", limit: 100 })) {
    if (!finite(cp.step) || cp.step < 1) continue;
    const step = cp.step - 1;
    const metrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(cp.metrics ?? {})) if (finite(v)) metrics[k] = v;
    training.push({ step, job: { id: cp.id, status: "COMPLETED" }, metrics });
    const mean = metrics.reward;
    if (finite(mean)) {
      const std = finite(metrics.reward_std_dev) ? metrics.reward_std_dev : 0;
      summaries.push({
        step,
        split: "train",
        mean,
        std,
        // The checkpoint holds no lowest and highest reward: the whiskers span the band.
        min: mean - std,
        max: mean + std,
        count: finite(metrics.num_trajectories) ? metrics.num_trajectories : 0,
      });
    }
  }
  return {
    title: title ?? `model ${modelId}`,
    subtitle: `checkpoints of model ${modelId} (the service's API lists checkpoints, not logged groups)`,
    steps: [],
    training,
    summaries,
  };
}
