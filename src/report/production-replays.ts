// What the Production view shows beside each production trajectory and per
// step: the replayed groups a run trained that came from it (their
// `metadata.replay_of`), and how many trajectories the infrastructure failed
// at each step, among those served in production and among those trained.
import { infraFailureOf } from "../trajectory/index.js";
import type { ReportProductionTrajectory, ReportStep, ReportTrajectory } from "./run.js";

/** One replayed group of a production trajectory's state, as the page's index holds it. */
export interface PageReplay {
  step: number;
  split: string;
  run?: string;
  /** Its answers in order: the replayed turn's text (capped), reward, infra failure. */
  samples: { text: string; reward: number | null; infraFailure: string | null }[];
}

/** Infrastructure failures at one step. */
export interface InfraStepRow {
  step: number;
  /** Production trajectories whose first turn this step's checkpoint served. */
  served: number;
  /** Of those, the ones marked as infrastructure failures. */
  servedFailed: number;
  /** Trajectories of the run's groups at this step. */
  trained: number;
  /** Of those, the ones left out as infrastructure failures. */
  trainedFailed: number;
}

const TEXT_CAP = 2_000;

/** The replayed groups of `steps`, by the production trajectory they replayed. */
export function replaysById(steps: readonly ReportStep[]): Map<string, PageReplay[]> {
  const out = new Map<string, PageReplay[]>();
  for (const s of steps)
    for (const g of s.groups) {
      const of = (g.metadata as Record<string, unknown> | undefined)?.replay_of;
      if (typeof of !== "string") continue;
      const list = out.get(of) ?? [];
      out.set(of, list);
      // The samples left out of a job as infrastructure failures are logged as
      // a group of their own: shown with the group they were sampled in.
      const leftOut = g.trajectories.every(
        (t) => (t.metadata as Record<string, unknown> | undefined)?.left_out !== undefined,
      );
      const same = leftOut
        ? list.find((r) => r.step === s.step && r.split === s.split && r.run === s.run)
        : undefined;
      if (same) same.samples.push(...g.trajectories.map(sampleOf));
      else
        list.push({
          step: s.step,
          split: s.split,
          ...(s.run ? { run: s.run } : {}),
          samples: g.trajectories.map(sampleOf),
        });
    }
  return out;
}

function sampleOf(t: ReportTrajectory): PageReplay["samples"][number] {
  const last = Array.isArray(t.messages_and_choices) ? t.messages_and_choices.at(-1) : undefined;
  const message = (last as { message?: unknown } | undefined)?.message ?? last;
  const content = (message as { content?: unknown; tool_calls?: unknown } | undefined)?.content;
  const calls = (message as { tool_calls?: unknown } | undefined)?.tool_calls;
  const text =
    typeof content === "string" && content !== ""
      ? content
      : Array.isArray(calls)
        ? `(${calls.length} tool call${calls.length === 1 ? "" : "s"})`
        : "";
  return {
    text: text.length > TEXT_CAP ? `${text.slice(0, TEXT_CAP)}…` : text,
    reward: typeof t.reward === "number" && Number.isFinite(t.reward) ? t.reward : null,
    infraFailure: infraFailureOf(t) ?? null,
  };
}

/**
 * Per step, the production trajectories its checkpoint served (by
 * `initial_policy_version`) and the run's trajectories at that step, each
 * with how many were infrastructure failures; steps with neither are left out.
 */
export function infraFailuresPerStep(
  production: readonly ReportProductionTrajectory[],
  steps: readonly ReportStep[],
): InfraStepRow[] {
  const rows = new Map<number, InfraStepRow>();
  const row = (step: number) => {
    let r = rows.get(step);
    if (!r) {
      r = { step, served: 0, servedFailed: 0, trained: 0, trainedFailed: 0 };
      rows.set(step, r);
    }
    return r;
  };
  for (const p of production) {
    const version = (p.trajectory as { initial_policy_version?: unknown } | undefined)
      ?.initial_policy_version;
    if (typeof version !== "number" || !Number.isInteger(version)) continue;
    const r = row(version);
    r.served++;
    if (infraFailureOf(p.trajectory) !== undefined) r.servedFailed++;
  }
  for (const s of steps) {
    if (s.split !== "train") continue;
    for (const g of s.groups)
      for (const t of g.trajectories) {
        const r = row(s.step);
        r.trained++;
        if (infraFailureOf(t) !== undefined) r.trainedFailed++;
      }
  }
  return [...rows.values()].sort((a, b) => a.step - b.step);
}
