// The data a report draws: groups of trajectories (wire JSON) per step and split.

/** A trajectory as logged (ART wire JSON); only the fields the report reads are typed. */
export interface ReportTrajectory {
  messages_and_choices: unknown[];
  reward: number;
  tools?: unknown[] | null;
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
  groups: ReportGroup[];
}

/** What {@link renderReport} draws. */
export interface ReportRun {
  title?: string;
  /** A line under the title, e.g. the model's name. */
  subtitle?: string;
  steps: ReportStep[];
}

/** Reward statistics of one step. */
export interface StepStats {
  step: number;
  split: string;
  mean: number;
  std: number;
  min: number;
  max: number;
  count: number;
}

/** Mean, standard deviation and range of the rewards of each step with trajectories. */
export function stepStats(run: ReportRun): StepStats[] {
  const out: StepStats[] = [];
  for (const s of run.steps) {
    const rewards = s.groups
      .flatMap((g) => g.trajectories.map((t) => t.reward))
      .filter((r) => typeof r === "number" && Number.isFinite(r));
    if (rewards.length === 0) continue;
    const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
    const std = Math.sqrt(rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / rewards.length);
    out.push({
      step: s.step,
      split: s.split,
      mean,
      std,
      min: Math.min(...rewards),
      max: Math.max(...rewards),
      count: rewards.length,
    });
  }
  return out.sort((a, b) => a.step - b.step);
}
