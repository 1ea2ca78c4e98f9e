// Which checkpoints deleteCheckpoints keeps.
import type { Checkpoint } from "../wire/index.js";

/** What {@link checkpointsToKeep} reads: `deleteCheckpoints`' options. */
export interface KeepOptions {
  keepLatest?: boolean;
  keepBestBy?: string;
  /** Where the warning goes when no checkpoint carries `keepBestBy`. Default `console`. */
  logger?: { warn(message: string): void };
}

/**
 * The steps to keep of `all`: the latest (unless `keepLatest: false`) and,
 * with `keepBestBy`, every step whose metric has the highest value.
 */
export function checkpointsToKeep(
  all: readonly Checkpoint[],
  options: KeepOptions,
  modelName: string,
): Set<number> {
  const keep = new Set<number>();
  if (options.keepLatest !== false && all.length > 0) {
    keep.add(Math.max(...all.map((c) => c.step)));
  }
  if (options.keepBestBy !== undefined) {
    const key = options.keepBestBy;
    const score = (c: Checkpoint) => {
      const v = c.metrics?.[key];
      return typeof v === "number" && Number.isFinite(v) ? v : Number.NEGATIVE_INFINITY;
    };
    const best = Math.max(...all.map(score));
    if (best > Number.NEGATIVE_INFINITY) {
      for (const c of all) if (score(c) === best) keep.add(c.step);
    } else if (all.length > 0) {
      // Otherwise only the latest survives, which is not what the caller asked for.
      (options.logger ?? console).warn(
        `deleteCheckpoints: no checkpoint of model ${modelName} carries the metric "${key}", so keepBestBy kept none; log that metric (e.g. model.log(groups, { split: "val" }) for "val/reward") before deleting.`,
      );
    }
  }
  return keep;
}
