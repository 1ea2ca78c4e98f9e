// Reading production trajectories for the report: a TrajectoryStore's
// directory, opened while no proxy holds it (the store takes one writer at
// a time), read whole and closed again.
import { statSync } from "node:fs";
import path from "node:path";
import { StoreLockedError, type StoreLogger, TrajectoryStore } from "../store/index.js";
import { ReportSourceError } from "./errors.js";
import type { ReportProductionTrajectory, ReportRun } from "./run.js";

/**
 * The trajectories a store holds, each with its feedback, as a run with no
 * steps and a Production view: the newest written first. The store applies
 * its bounds and recovers interrupted calls when it opens, as it does for
 * `sessions list`; what it drops goes to `logger` (default `console.warn`).
 */
export async function loadStore(dir: string, logger?: StoreLogger): Promise<ReportRun> {
  const where = path.resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(where).isDirectory();
  } catch {
    isDir = false;
  }
  // Opening would create the directory: a mistyped path must not become an empty store.
  if (!isDir)
    throw new ReportSourceError(
      `No trajectory store at ${where}: pass the directory a proxy or recorder stored into (its --store DIR).`,
      where,
      "unreadable",
    );
  let store: TrajectoryStore;
  try {
    store = await TrajectoryStore.open({ dir: where, ...(logger ? { logger } : {}) });
  } catch (error) {
    if (StoreLockedError.isInstance(error))
      throw new ReportSourceError(
        `The trajectory store at ${where} is in use${error.pid === null ? "" : ` by process ${error.pid}`} (a running proxy or recorder holds its lock): stop it first, or report on a copy of the directory.`,
        where,
        "in_use",
        undefined,
        { cause: error },
      );
    throw error;
  }
  const production: ReportProductionTrajectory[] = [];
  try {
    for (const summary of store.list()) {
      const stored = store.get(summary.id);
      if (stored) production.push(stored);
    }
  } finally {
    await store.close();
  }
  return {
    title: `Production: ${path.basename(where)}`,
    subtitle: `from the store ${where}`,
    steps: [],
    production,
  };
}
