// The Production view's data: a light row per production trajectory (its
// session, reward, eligibility and feedback) read when the page opens, and
// each conversation in the page's trajectory form, in chunks parsed only
// when one of them is opened. Comments and every other recorded value reach
// the page as JSON data and are drawn as text, never as markup.

import { infraFailureOf } from "../trajectory/index.js";
import { CHUNK_SIZE, capDepth, type PageTrajectory, pageTrajectory } from "./prepare.js";
import { type PageReplay, replaysById } from "./production-replays.js";
import type { ReportFeedback, ReportProductionTrajectory, ReportStep } from "./run.js";

/** One production trajectory as the page's index holds it. */
export interface PageProduction {
  id: string;
  session: string | null;
  status: string;
  model: string | null;
  created: string;
  updated: string;
  calls: number;
  reward: number | null;
  eligible: boolean | null;
  interrupted: boolean;
  /** Its feedback records, oldest first (values depth-capped). */
  feedback: ReportFeedback[];
  /** The step that served its first turn (`initial_policy_version`), or null. */
  version: number | null;
  /** Its infrastructure-failure mark (`metadata.infra_failure`), or null. */
  infraFailure: string | null;
  /** The run's replayed groups of its state (`metadata.replay_of` its id), by step. */
  replays: PageReplay[];
}

const finiteOrNull = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : null);
const text = (x: unknown) => (typeof x === "string" ? x : String(x ?? ""));

function rowOf(p: ReportProductionTrajectory, replays: PageReplay[]): PageProduction {
  const version = (p.trajectory as { initial_policy_version?: unknown } | undefined)
    ?.initial_policy_version;
  return {
    id: text(p.id),
    session: typeof p.session === "string" ? p.session : null,
    status: text(p.status),
    model: typeof p.model === "string" ? p.model : null,
    created: text(p.created_at),
    updated: text(p.updated_at),
    calls: typeof p.calls === "number" ? p.calls : 0,
    reward: finiteOrNull(p.reward),
    eligible: typeof p.eligible === "boolean" ? p.eligible : null,
    interrupted: p.interrupted === true,
    feedback: Array.isArray(p.feedback) ? (capDepth(p.feedback) as ReportFeedback[]) : [],
    version: typeof version === "number" && Number.isInteger(version) ? version : null,
    infraFailure: infraFailureOf(p.trajectory) ?? null,
    replays,
  };
}

/**
 * The Production view's rows and, one by one, the JSON of each chunk of its
 * conversations (`chunkOf` serializes a chunk for a `<script>` element). Each
 * row carries the replayed groups of `steps` that came from its state.
 */
export function prepareProduction(
  list: readonly ReportProductionTrajectory[],
  chunkOf: (part: PageTrajectory[]) => string,
  steps: readonly ReportStep[] = [],
): { rows: PageProduction[]; chunkCount: number; chunks: () => Generator<string> } {
  const replays = replaysById(steps);
  const rows = list.map((p) => rowOf(p, replays.get(String(p.id)) ?? []));
  const chunkCount = Math.ceil(list.length / CHUNK_SIZE);
  function* chunks(): Generator<string> {
    for (let c = 0; c < chunkCount; c++) {
      const part: PageTrajectory[] = [];
      for (let i = c * CHUNK_SIZE; i < Math.min(list.length, (c + 1) * CHUNK_SIZE); i++)
        part.push(pageTrajectory((list[i] as ReportProductionTrajectory).trajectory));
      yield chunkOf(part);
    }
  }
  return { rows, chunkCount, chunks };
}
