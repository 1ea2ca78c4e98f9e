// The numbers the Training view plots besides the reward: the trajectories'
// own `metrics` per step, and the trainer's metrics under one naming.
import { artMetricName } from "../training/index.js";
import { type ReportGroup, type ReportTrajectory, rewardStats } from "./run.js";

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => !!x && typeof x === "object" && !Array.isArray(x);

/** Mean, standard deviation, lowest, highest and count of one metric at one step. */
export type MetricStats = [mean: number, std: number, min: number, max: number, count: number];

/**
 * Each numeric `metrics` entry of the trajectories (booleans count as 0/1),
 * summarised over them: the same statistics the reward curve draws.
 * Metric names are kept as logged.
 */
export function trajectoryMetricStats(
  trajectories: Iterable<ReportTrajectory>,
): Record<string, MetricStats> {
  const values = new Map<string, number[]>();
  for (const t of trajectories) {
    if (!isObject(t.metrics)) continue;
    for (const [k, v] of Object.entries(t.metrics)) {
      const x = typeof v === "boolean" ? Number(v) : v;
      if (typeof x !== "number" || !Number.isFinite(x)) continue;
      const list = values.get(k);
      if (list) list.push(x);
      else values.set(k, [x]);
    }
  }
  const out: Record<string, MetricStats> = {};
  for (const [k, list] of values) {
    const s = rewardStats(list);
    if (s) out[k] = [s.mean, s.std, s.min, s.max, s.count];
  }
  return out;
}

/**
 * The trainer's metrics of a step under ART's names (`loss/train`,
 * `loss/entropy`, `loss/grad_norm`, `data/step_trainer_tokens`, ...), whether
 * they came from the service's `gradient_step` events (`policy_loss`,
 * `entropy`, ...) or from `model.train`'s result (already ART's). A name the
 * two namings share wins over the raw key it renames, as in ART; keys ART
 * drops (`tokens_per_second`) are dropped; unknown keys pass through.
 */
export function artTrainingMetrics(
  metrics: Readonly<Record<string, unknown>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  const fromArt = new Set<string>();
  for (const [k, v] of Object.entries(metrics)) {
    if (typeof v !== "number" || !Number.isFinite(v)) continue;
    const name = artMetricName(k);
    if (name === undefined) continue;
    // A key already under ART's name beats a raw key renamed onto it.
    if (name === k) {
      out[name] = v;
      fromArt.add(name);
    } else if (!fromArt.has(name)) out[name] = v;
  }
  return out;
}

/**
 * Why a logged `train` group was not trained on, when its metadata says so,
 * else undefined. `train` (and the shipper's `trainEvery`) log the groups
 * they leave out for lack of signal with `metadata.left_out` on each
 * trajectory (`"no_reward_signal"`); the group's own metadata may say it too,
 * or carry `not_trained` (true or a reason), `trained: false`, or
 * `no_signal_skipped: true`.
 */
export function notTrainedReason(group: ReportGroup): string | undefined {
  const m = isObject(group.metadata) ? group.metadata : {};
  const said = (v: unknown) => (typeof v === "string" && v ? v.replace(/_/g, " ") : undefined);
  const metas = group.trajectories.map((t) => (isObject(t.metadata) ? t.metadata : {}));
  const leftOut =
    said(m.left_out) ??
    (metas.length > 0 && metas.every((t) => said(t.left_out) !== undefined)
      ? said(metas[0]?.left_out)
      : undefined);
  if (leftOut) return `left out of training (${leftOut})`;
  if (typeof m.not_trained === "string" && m.not_trained) return m.not_trained;
  if (m.not_trained === true || m.trained === false || m.no_signal_skipped === true)
    return "left out of training";
  return undefined;
}
