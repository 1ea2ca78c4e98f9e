// The Production view's data: a light row per production trajectory (its
// session, reward, eligibility and feedback) read when the page opens, and
// each conversation in the page's trajectory form, in chunks parsed only
// when one of them is opened. Comments and every other recorded value reach
// the page as JSON data and are drawn as text, never as markup.
import { CHUNK_SIZE, capDepth, type PageTrajectory, pageTrajectory } from "./prepare.js";
import type { ReportFeedback, ReportProductionTrajectory } from "./run.js";

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
}

const finiteOrNull = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : null);
const text = (x: unknown) => (typeof x === "string" ? x : String(x ?? ""));

function rowOf(p: ReportProductionTrajectory): PageProduction {
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
  };
}

/**
 * The Production view's rows and, one by one, the JSON of each chunk of its
 * conversations (`chunkOf` serializes a chunk for a `<script>` element).
 */
export function prepareProduction(
  list: readonly ReportProductionTrajectory[],
  chunkOf: (part: PageTrajectory[]) => string,
): { rows: PageProduction[]; chunkCount: number; chunks: () => Generator<string> } {
  const rows = list.map(rowOf);
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
