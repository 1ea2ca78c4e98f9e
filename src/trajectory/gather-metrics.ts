// The running means of trajectory metrics a gather's progress shows.
import type { Trajectory } from "./trajectory.js";

/** Running means of trajectory metrics (and completion_tokens), as ART's progress bar keeps them. */
export class MetricMeans {
  readonly #sums = new Map<string, { total: number; count: number }>();
  constructor(private readonly max: number | undefined) {}

  add(t: Trajectory): void {
    const tokens = completionTokens(t);
    // As ART's record_metrics: set on the trajectory when every Choice has a count.
    if (tokens !== undefined) t.metrics.completion_tokens = tokens;
    for (const [name, value] of Object.entries(t.metrics)) {
      const n = typeof value === "boolean" ? Number(value) : value;
      if (typeof n !== "number" || !Number.isFinite(n)) continue;
      const entry = this.#sums.get(name) ?? { total: 0, count: 0 };
      entry.total += n;
      entry.count++;
      this.#sums.set(name, entry);
    }
  }

  means(): Record<string, number> {
    const out: Record<string, number> = {};
    let shown = 0;
    for (const [name, { total, count }] of this.#sums) {
      if (this.max !== undefined && shown >= this.max) break;
      out[name] = total / count;
      shown++;
    }
    return out;
  }
}

// The sampled tokens of every Choice of the trajectory, or undefined when one has no count.
function completionTokens(t: Trajectory): number | undefined {
  const items = [
    ...t.messages_and_choices,
    ...t.additional_histories.flatMap((h) => h.messages_and_choices),
  ];
  let sum = 0;
  let choices = 0;
  for (const item of items) {
    if (!item || typeof item !== "object" || !("finish_reason" in item)) continue;
    choices++;
    const choice = item as { token_ids?: unknown; logprobs?: { content?: unknown } | null };
    const count = Array.isArray(choice.token_ids)
      ? choice.token_ids.length
      : Array.isArray(choice.logprobs?.content)
        ? choice.logprobs.content.length
        : 0;
    if (count <= 0) return undefined;
    sum += count;
  }
  return choices > 0 ? sum : undefined;
}
