// Reading a run's logged groups: the emulator's data directory, or JSONL.
// Lines are read one at a time and nothing is spread into arguments, so a
// file of any size and any nesting JSON.parse accepts can be read.
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { LEFT_OUT_INFRA_FAILURE, LEFT_OUT_KEY, LEFT_OUT_NO_SIGNAL } from "../training/index.js";
import { ReportSourceError } from "./errors.js";
import type { ReportGroup, ReportRun, ReportStep, ReportTraining } from "./run.js";

type Json = Record<string, unknown>;

const isObject = (x: unknown): x is Json => !!x && typeof x === "object" && !Array.isArray(x);
const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/**
 * The groups an emulator data directory holds for one model (by id or name;
 * by default the one trained or logged most recently): each RL job's groups as
 * `train` at the step they were sampled on, with the job and its metrics, and
 * each `log` under its split, at the step its groups name
 * (`metadata.checkpoint_step`, as `evaluateCheckpoints` writes) or else at
 * the step the model had when they were logged.
 */
export async function loadDataDir(dataDir: string, model?: string): Promise<ReportRun> {
  const file = path.join(dataDir, "emulator-state.json");
  let state: Json;
  try {
    state = JSON.parse(await readFile(file, "utf8")) as Json;
  } catch (error) {
    throw new ReportSourceError(
      `Cannot read the emulator's state at ${file} (${(error as Error).message}); pass the --data-dir the emulator ran with, or a JSONL file of groups.`,
      file,
      "unreadable",
      undefined,
      { cause: error },
    );
  }
  const list = (key: string) =>
    (Array.isArray(state[key]) ? (state[key] as unknown[]) : []).filter(isObject);
  const models = list("models");
  const jobs = list("jobs").filter((j) => j.kind === "rl");
  const logs = list("logs");
  const events = list("events");
  let chosen = model === undefined ? undefined : findModel(models, model, file);
  if (!chosen) {
    // The model whose last job or log came last (jobs are in creation order).
    const last = logs.at(-1) ?? jobs.at(-1);
    chosen = models.find((m) => m.id === last?.model_id) ?? models.at(-1);
  }
  const steps: ReportStep[] = [];
  const training: ReportTraining[] = [];
  if (chosen) {
    const eventsOf = new Map<unknown, Json[]>();
    for (const e of events) {
      const seen = eventsOf.get(e.job_id);
      if (seen) seen.push(e);
      else eventsOf.set(e.job_id, [e]);
    }
    let sampled = 0;
    for (const job of jobs) {
      if (job.model_id !== chosen.id) continue;
      const request = isObject(job.request) ? job.request : {};
      const config = isObject(request.experimental_config) ? request.experimental_config : {};
      // A job trains on rollouts of the checkpoint before the one it writes.
      const step = finite(job.checkpoint_step) ? job.checkpoint_step - 1 : sampled;
      sampled = step + 1;
      const groups = groupsOf(request.trajectory_groups);
      steps.push({
        step,
        split: "train",
        groups,
        scaleRewards: config.scale_rewards !== false && config.normalize_advantages !== false,
        advantageBalance: finite(config.advantage_balance) ? config.advantage_balance : 0,
      });
      training.push({
        step,
        job: {
          id: String(job.id),
          status: String(job.status ?? "?"),
          createdAt: typeof job.created_at === "string" ? job.created_at : null,
          startedAt: typeof job.training_start === "string" ? job.training_start : null,
          endedAt: typeof job.training_end === "string" ? job.training_end : null,
          error: typeof job.error_message === "string" ? job.error_message : null,
          groups: groups.length,
        },
        metrics: jobMetrics(eventsOf.get(job.id) ?? []),
      });
    }
    // Steps a job sampled at (the emulator's rule for a step's history): a
    // shipper logs every group before its job trains on it, so there a
    // logged `train` group counts only when marked as left out of the job.
    const trainedAt = new Set(steps.map((s) => s.step));
    for (const log of logs) {
      if (log.model_id !== chosen.id) continue;
      const at = finite(log.step) ? log.step : 0;
      const split = String(log.split ?? "val");
      for (const g of groupsOf(log.trajectory_groups)) {
        const step = pinnedStep(g) ?? at;
        if (split === "train" && trainedAt.has(step) && !markedLeftOut(g)) continue;
        steps.push({ step, split, groups: [g] });
      }
    }
  }
  return {
    title: chosen ? `${String(chosen.project)}/${String(chosen.name)}` : "Trajectory report",
    subtitle: `from ${dataDir}`,
    steps: merge(steps),
    training,
  };
}

const fullName = (m: Json) => `${String(m.entity ?? "?")}/${String(m.project)}/${String(m.name)}`;

/**
 * The model `ref` names, in every form the other commands take: its id, a
 * unique prefix of its id (4 characters or more), `ENTITY/PROJECT/NAME`,
 * `PROJECT/NAME`, or a name only one model holds.
 */
function findModel(models: readonly Json[], ref: string, file: string): Json {
  const held = () =>
    models.length ? models.map((m) => `${fullName(m)} (${String(m.id)})`).join(", ") : "no models";
  const parts = ref.split("/");
  let found: Json[];
  if (parts.length === 3)
    found = models.filter(
      (m) => m.entity === parts[0] && m.project === parts[1] && m.name === parts[2],
    );
  else if (parts.length === 2)
    found = models.filter((m) => m.project === parts[0] && m.name === parts[1]);
  else {
    found = models.filter((m) => m.id === ref);
    if (!found.length) found = models.filter((m) => m.name === ref);
    if (!found.length && ref.length >= 4)
      found = models.filter(
        (m) => typeof m.id === "string" && m.id.toLowerCase().startsWith(ref.toLowerCase()),
      );
  }
  if (found.length === 1) return found[0] as Json;
  if (found.length > 1)
    throw new ReportSourceError(
      `The model ${JSON.stringify(ref)} is ambiguous in ${file}: ${found.map((m) => `${fullName(m)} (${String(m.id)})`).join(", ")}; give ENTITY/PROJECT/NAME or the id.`,
      file,
      "model_ambiguous",
    );
  throw new ReportSourceError(
    `No model ${JSON.stringify(ref)} in ${file} (as an id, a unique id prefix, ENTITY/PROJECT/NAME, PROJECT/NAME or a name); it holds ${held()}.`,
    file,
    "model_not_found",
  );
}

/**
 * Each metric of a job's `gradient_step` events averaged over them, as
 * `model.train` reports them, with `clipped_fraction` derived from the clipped
 * and trainable token counts when the service sent those.
 */
function jobMetrics(events: readonly Json[]): Record<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const e of events) {
    if (e.type !== "gradient_step" || !isObject(e.data)) continue;
    for (const [k, v] of Object.entries(e.data)) {
      if (!finite(v)) continue;
      const s = sums.get(k) ?? { sum: 0, n: 0 };
      s.sum += v;
      s.n += 1;
      sums.set(k, s);
    }
  }
  const out: Record<string, number> = {};
  for (const [k, { sum, n }] of sums) out[k] = sum / n;
  if (out.clipped_fraction === undefined && finite(out.clipped_tokens) && out.num_trainable_tokens)
    out.clipped_fraction = out.clipped_tokens / out.num_trainable_tokens;
  return out;
}

/** Whether `train` (or a shipper's `trainEvery`) logged the group as left out of its job. */
function markedLeftOut(group: ReportGroup): boolean {
  const t = group.trajectories[0];
  const why = t && isObject(t.metadata) ? t.metadata[LEFT_OUT_KEY] : undefined;
  return why === LEFT_OUT_NO_SIGNAL || why === LEFT_OUT_INFRA_FAILURE;
}

/** The checkpoint a logged group was sampled from, when it names one. */
function pinnedStep(group: ReportGroup): number | undefined {
  const meta = isObject(group.metadata) ? group.metadata : {};
  if (finite(meta.checkpoint_step)) return meta.checkpoint_step;
  const t = group.trajectories[0];
  const tmeta = t && isObject(t.metadata) ? t.metadata : {};
  if (finite(tmeta.checkpoint_step)) return tmeta.checkpoint_step;
  return undefined;
}

/**
 * A JSONL file, one JSON value a line: a group (`{trajectories}`, its step
 * from `step` or `metadata.step`, else 0), a step (`{step, split?,
 * trajectory_groups}`), or a lone trajectory (`{messages_and_choices}`,
 * gathered into one group per step).
 */
export async function loadJsonl(file: string): Promise<ReportRun> {
  const steps: ReportStep[] = [];
  const loose = new Map<string, ReportStep>();
  let i = 0;
  const lines = createInterface({
    input: createReadStream(file, "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  try {
    for await (const line of lines) {
      i += 1;
      if (!line.trim()) continue;
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        throw new ReportSourceError(
          `${file}:${i} is not JSON; each line must be one group or trajectory.`,
          file,
          "invalid",
          i,
        );
      }
      if (!isObject(row))
        throw new ReportSourceError(
          `${file}:${i} is not a JSON object; expected a group or a trajectory.`,
          file,
          "invalid",
          i,
        );
      const meta = isObject(row.metadata) ? row.metadata : {};
      const stated = finite(row.step) ? row.step : finite(meta.step) ? meta.step : undefined;
      const split = typeof row.split === "string" ? row.split : "train";
      if (Array.isArray(row.trajectory_groups))
        steps.push({ step: stated ?? 0, split, groups: groupsOf(row.trajectory_groups) });
      else if (Array.isArray(row.trajectories)) {
        const [g] = groupsOf([row]) as [ReportGroup];
        steps.push({ step: stated ?? pinnedStep(g) ?? 0, split, groups: [g] });
      } else if (Array.isArray(row.messages_and_choices)) {
        const step = stated ?? (finite(meta.checkpoint_step) ? meta.checkpoint_step : 0);
        const key = `${split}\u0000${step}`;
        const s = loose.get(key) ?? { step, split, groups: [{ trajectories: [] }] };
        (s.groups[0] as ReportGroup).trajectories.push(trajectoryOf(row));
        loose.set(key, s);
      } else
        throw new ReportSourceError(
          `${file}:${i} has neither trajectories, trajectory_groups nor messages_and_choices.`,
          file,
          "invalid",
          i,
        );
    }
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code === "ENOENT" ||
      (error as NodeJS.ErrnoException).code === "EISDIR"
    )
      throw new ReportSourceError(
        `Cannot read ${file} (${(error as NodeJS.ErrnoException).code}); pass a JSONL file of groups.`,
        file,
        "unreadable",
        undefined,
        { cause: error },
      );
    throw error;
  } finally {
    lines.close();
  }
  for (const s of loose.values()) steps.push(s);
  return { title: path.basename(file), subtitle: `from ${file}`, steps: merge(steps) };
}

function trajectoryOf(t: Json): ReportGroup["trajectories"][number] {
  return {
    ...t,
    messages_and_choices: Array.isArray(t.messages_and_choices) ? t.messages_and_choices : [],
    reward: typeof t.reward === "number" ? t.reward : t.reward === undefined ? 0 : Number.NaN,
  };
}

function groupsOf(value: unknown): ReportGroup[] {
  if (!Array.isArray(value)) return [];
  const out: ReportGroup[] = [];
  for (const g of value) {
    if (!isObject(g)) continue;
    const trajectories: ReportGroup["trajectories"] = [];
    if (Array.isArray(g.trajectories))
      for (const t of g.trajectories) if (isObject(t)) trajectories.push(trajectoryOf(t));
    out.push({ ...g, trajectories });
  }
  return out;
}

/** One entry per (split, step), groups in the order they came. */
function merge(steps: ReportStep[]): ReportStep[] {
  const by = new Map<string, ReportStep>();
  for (const s of steps) {
    const key = `${s.split}\u0000${s.step}`;
    const seen = by.get(key);
    if (seen) for (const g of s.groups) seen.groups.push(g);
    else by.set(key, { ...s, groups: [...s.groups] });
  }
  return [...by.values()].sort((a, b) => a.step - b.step || a.split.localeCompare(b.split));
}
