// The data a report draws: groups of trajectories (wire JSON) per step and
// split, and what the trainer said about each step.
import { infraFailureOf } from "../trajectory/index.js";

/** A trajectory as logged (ART wire JSON); only the fields the report reads are typed. */
export interface ReportTrajectory {
  messages_and_choices: unknown[];
  reward: number;
  tools?: unknown;
  metadata?: Record<string, unknown>;
  metrics?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A group as logged. */
export interface ReportGroup {
  trajectories: ReportTrajectory[];
  [key: string]: unknown;
}

/** The groups of one step of one split (`train`, `val`, ...). */
export interface ReportStep {
  step: number;
  split: string;
  /** In a report of several runs: the run these groups belong to (its label). */
  run?: string;
  groups: ReportGroup[];
  /**
   * Whether advantages are divided by the group's standard deviation, as the
   * job that trained on these groups was configured (`scale_rewards`); default true.
   */
  scaleRewards?: boolean;
  /** The job's `advantage_balance` (in [-1, 1]); default 0. */
  advantageBalance?: number;
}

/** The training job of one step and the metrics the service reported for it. */
export interface ReportTraining {
  /** The step whose rollouts the job trained on (its checkpoint is `step + 1`). */
  step: number;
  /** In a report of several runs: the run (its label). */
  run?: string;
  job?: {
    id: string;
    status: string;
    createdAt?: string | null;
    startedAt?: string | null;
    endedAt?: string | null;
    error?: string | null;
    groups?: number;
  };
  /**
   * Each metric averaged over the job's gradient steps, under the service's
   * names (`policy_loss`, `entropy`, ...) or ART's (`loss/train`,
   * `loss/entropy`, ...): the page shows them all under ART's.
   */
  metrics: Record<string, number>;
}

/** A feedback record of a production trajectory, as the store keeps it (see `FeedbackRecord`). */
export interface ReportFeedback {
  /** Its position among the trajectory's feedback, from 1: later feedback wins. */
  n: number;
  /** When it was stored, ISO 8601. */
  created_at: string;
  reward?: number;
  metrics?: Record<string, number | boolean>;
  comment?: string;
  eligible?: boolean;
  turns?: { call: number; reward: number }[];
  /** Who sent it (`"browser"`, `"ci"`). */
  source?: string;
  [key: string]: unknown;
}

/**
 * A trajectory recorded in production, with its feedback, as a
 * `TrajectoryStore` returns it (`store.get(id)`): what the Production view draws.
 */
export interface ReportProductionTrajectory {
  id: string;
  /** The session it belongs to, or null. */
  session: string | null;
  /** `open` while its session runs, else `finished`. */
  status: string;
  model: string | null;
  /** When it was first stored, and last written or given feedback (ISO 8601). */
  created_at: string;
  updated_at: string;
  calls: number;
  /** The reward its feedback gives, or null before any. */
  reward: number | null;
  /** Whether it may be trained on; null until it has a reward or a feedback says. */
  eligible: boolean | null;
  /** True when a call was cut by the process stopping (its `logs` say which). */
  interrupted: boolean;
  /** Its feedback, oldest first. */
  feedback: ReportFeedback[];
  /** The trajectory with its feedback applied. */
  trajectory: ReportTrajectory;
}

/** What {@link renderReport} draws. */
export interface ReportRun {
  title?: string;
  /** A line under the title, e.g. the model's name. */
  subtitle?: string;
  steps: ReportStep[];
  /** The training jobs, one per trained step. */
  training?: ReportTraining[];
  /**
   * Reward statistics of steps whose trajectories the source cannot give
   * (the service's checkpoint list holds each step's mean and spread, not its
   * groups); a step with logged groups is drawn from them instead.
   */
  summaries?: StepStats[];
  /**
   * Trajectories recorded in production (a `TrajectoryStore`), drawn in the
   * Production view grouped by session, with their feedback and whether they
   * may be trained on. The view is shown when this is set, even empty.
   */
  production?: ReportProductionTrajectory[];
}

/** Reward statistics of one step. */
export interface StepStats {
  step: number;
  split: string;
  run?: string;
  mean: number;
  std: number;
  min: number;
  max: number;
  count: number;
  /** Trajectories marked as infrastructure failures at the step: left out of the statistics. */
  infraFailures?: number;
}

/** Mean, standard deviation and range of the rewards of each step with trajectories. */
export function stepStats(run: ReportRun): StepStats[] {
  const out: StepStats[] = [];
  for (const s of run.steps) {
    const rewards: number[] = [];
    let infra = 0;
    for (const g of s.groups)
      for (const t of g.trajectories)
        if (infraFailureOf(t) !== undefined) infra++;
        else if (typeof t.reward === "number" && Number.isFinite(t.reward)) rewards.push(t.reward);
    const stats = rewardStats(rewards);
    if (stats)
      out.push({
        step: s.step,
        split: s.split,
        ...(s.run ? { run: s.run } : {}),
        ...stats,
        ...(infra > 0 ? { infraFailures: infra } : {}),
      });
  }
  const key = (s: { run?: string; split: string; step: number }) =>
    `${s.run ?? ""}\u0000${s.split}\u0000${s.step}`;
  const drawn = new Set(out.map(key));
  for (const s of run.summaries ?? []) if (!drawn.has(key(s))) out.push({ ...s });
  return out.sort((a, b) => a.step - b.step);
}

/**
 * Mean, population standard deviation and range of finite numbers, without
 * spreading them into arguments and without overflowing on values near
 * ±1.8e308 (the mean is summed in parts of the count).
 */
export function rewardStats(
  values: readonly number[],
): { mean: number; std: number; min: number; max: number; count: number } | undefined {
  const n = values.length;
  if (n === 0) return undefined;
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  let mean = sum / n;
  if (!Number.isFinite(mean)) {
    mean = 0;
    for (const v of values) mean += v / n;
  }
  let variance = 0;
  for (const v of values) variance += (v - mean) ** 2;
  variance /= n;
  if (!Number.isFinite(variance)) {
    variance = 0;
    for (const v of values) variance += ((v - mean) / Math.sqrt(n)) ** 2;
  }
  return { mean, std: Math.sqrt(variance), min, max, count: n };
}

/**
 * The advantage of each reward of a group as the trainer computes it: the
 * reward minus the group's mean, divided by its standard deviation (+1e-6)
 * when `scaleRewards`, then `advantageBalance` applied (a positive balance
 * shrinks the non-positive advantages, a negative one the non-negative ones);
 * all zero when the rewards are all equal.
 */
export function groupAdvantages(
  rewards: readonly number[],
  scaleRewards = true,
  advantageBalance = 0,
): number[] {
  const balance = Math.min(
    1,
    Math.max(-1, Number.isFinite(advantageBalance) ? advantageBalance : 0),
  );
  const finite = rewards.filter((r) => Number.isFinite(r));
  const stats = rewardStats(finite);
  if (!stats || stats.std < 1e-9) return rewards.map(() => 0);
  return rewards.map((r) => {
    if (!Number.isFinite(r)) return Number.NaN;
    const a = scaleRewards ? (r - stats.mean) / (stats.std + 1e-6) : r - stats.mean;
    if (balance > 0 && a <= 0) return a * (1 - balance);
    if (balance < 0 && a >= 0) return a * (1 + balance);
    return a;
  });
}
