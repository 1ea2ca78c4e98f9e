// Reading a run's logged groups: the emulator's data directory, or JSONL.
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ReportGroup, ReportRun, ReportStep } from "./run.js";

type Json = Record<string, unknown>;

const isObject = (x: unknown): x is Json => !!x && typeof x === "object" && !Array.isArray(x);

/**
 * The groups an emulator data directory holds for one model (by id or name;
 * by default the one trained or logged most recently): each RL job's groups as
 * `train` at the step they were sampled on, and each `log` under its split.
 */
export async function loadDataDir(dataDir: string, model?: string): Promise<ReportRun> {
  const file = path.join(dataDir, "emulator-state.json");
  let state: Json;
  try {
    state = JSON.parse(await readFile(file, "utf8")) as Json;
  } catch (error) {
    throw new Error(
      `Cannot read the emulator's state at ${file} (${(error as Error).message}); pass the --data-dir the emulator ran with, or a JSONL file of groups.`,
    );
  }
  const models = ((state.models ?? []) as Json[]).filter(isObject);
  const jobs = ((state.jobs ?? []) as Json[]).filter((j) => isObject(j) && j.kind === "rl");
  const logs = ((state.logs ?? []) as Json[]).filter(isObject);
  let chosen = models.find((m) => m.id === model || m.name === model);
  if (model !== undefined && !chosen)
    throw new Error(
      `No model ${JSON.stringify(model)} in ${file}; it holds ${models.map((m) => m.name).join(", ") || "no models"}.`,
    );
  if (!chosen) {
    // The model whose last job or log came last (jobs are in creation order).
    const last = [...jobs, ...logs].at(-1);
    chosen = models.find((m) => m.id === last?.model_id) ?? models.at(-1);
  }
  const steps: ReportStep[] = [];
  if (chosen) {
    let sampled = 0;
    for (const job of jobs) {
      if (job.model_id !== chosen.id) continue;
      const request = (job.request ?? {}) as Json;
      // A job trains on rollouts of the checkpoint before the one it writes.
      const step = typeof job.checkpoint_step === "number" ? job.checkpoint_step - 1 : sampled;
      sampled = step + 1;
      steps.push({ step, split: "train", groups: groupsOf(request.trajectory_groups) });
    }
    for (const log of logs) {
      if (log.model_id !== chosen.id) continue;
      steps.push({
        step: typeof log.step === "number" ? log.step : 0,
        split: String(log.split ?? "val"),
        groups: groupsOf(log.trajectory_groups),
      });
    }
  }
  return {
    title: chosen ? `${chosen.project}/${chosen.name}` : "Trajectory report",
    subtitle: `from ${dataDir}`,
    steps: merge(steps),
  };
}

/**
 * A JSONL file, one JSON value a line: a group (`{trajectories}`, its step
 * from `step` or `metadata.step`, else 0), a step (`{step, split?,
 * trajectory_groups}`), or a lone trajectory (`{messages_and_choices}`,
 * gathered into one group per step).
 */
export async function loadJsonl(file: string): Promise<ReportRun> {
  const text = await readFile(file, "utf8");
  const steps: ReportStep[] = [];
  const loose = new Map<number, ReportGroup>();
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw new Error(`${file}:${i + 1} is not JSON; each line must be one group or trajectory.`);
    }
    if (!isObject(row))
      throw new Error(`${file}:${i + 1} is not a JSON object; expected a group or a trajectory.`);
    const meta = isObject(row.metadata) ? row.metadata : {};
    const step =
      typeof row.step === "number" ? row.step : typeof meta.step === "number" ? meta.step : 0;
    const split = typeof row.split === "string" ? row.split : "train";
    if (Array.isArray(row.trajectory_groups))
      steps.push({ step, split, groups: groupsOf(row.trajectory_groups) });
    else if (Array.isArray(row.trajectories)) steps.push({ step, split, groups: groupsOf([row]) });
    else if (Array.isArray(row.messages_and_choices)) {
      const g = loose.get(step) ?? { trajectories: [] };
      g.trajectories.push(row as ReportGroup["trajectories"][number]);
      loose.set(step, g);
    } else
      throw new Error(
        `${file}:${i + 1} has neither trajectories, trajectory_groups nor messages_and_choices.`,
      );
  });
  for (const [step, g] of loose) steps.push({ step, split: "train", groups: [g] });
  return { title: path.basename(file), subtitle: `from ${file}`, steps: merge(steps) };
}

function groupsOf(value: unknown): ReportGroup[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((g) => ({
    ...g,
    trajectories: (Array.isArray(g.trajectories) ? g.trajectories : [])
      .filter(isObject)
      .map((t) => ({
        ...t,
        messages_and_choices: Array.isArray(t.messages_and_choices) ? t.messages_and_choices : [],
        reward: typeof t.reward === "number" ? t.reward : Number.NaN,
      })),
  }));
}

/** One entry per (split, step), groups in the order they came. */
function merge(steps: ReportStep[]): ReportStep[] {
  const by = new Map<string, ReportStep>();
  for (const s of steps) {
    const key = `${s.split}\u0000${s.step}`;
    const seen = by.get(key);
    if (seen) seen.groups.push(...s.groups);
    else by.set(key, { ...s, groups: [...s.groups] });
  }
  return [...by.values()].sort((a, b) => a.step - b.step || a.split.localeCompare(b.split));
}
