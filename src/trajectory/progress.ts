import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";

/** A snapshot of a gather, passed to `onProgress` and drawn by the progress bar. */
export interface GatherProgress {
  /** Rollouts finished, successful or not. */
  done: number;
  /** Rollouts in all groups. */
  total: number;
  /** Rollouts that failed so far. */
  exceptions: number;
  /** Mean reward of the successful rollouts so far, `null` before the first. */
  rewardMean: number | null;
  /** Groups left out because their `afterEach` (a judge, a reward) failed. */
  failedGroups?: number;
  /**
   * Rollouts marked as infrastructure failures (`metadata.infra_failure`) so
   * far: left out of `rewardMean` and the metric means. Present once there is one.
   */
  infraFailures?: number;
  /**
   * Mean of each trajectory metric so far (`completion_tokens` included), at
   * most `maxMetrics` of them in first-seen order, as ART's progress bar shows.
   */
  metrics?: Record<string, number>;
}

/**
 * Draws one line of the gather progress bar (pure, no terminal codes).
 *
 * @example
 * formatProgress({ done: 5, total: 10, exceptions: 1, rewardMean: 0.42 }, { label: "gather", width: 10 });
 * // "gather [#####.....] 5/10 reward=0.420 exceptions=1"
 */
export function formatProgress(
  p: GatherProgress,
  options: { label?: string; width?: number } = {},
): string {
  const call = "formatProgress(p, options)";
  checkProgress(call, p);
  if (!isObjectLike(options)) throw new InvalidArgumentError(call, "options", "an object", options);
  const width = options.width ?? 20;
  if (!Number.isInteger(width) || width < 0 || width > MAX_WIDTH)
    throw new InvalidArgumentError(
      call,
      "options.width",
      `an integer from 0 to ${MAX_WIDTH}`,
      options.width,
    );
  if (options.label !== undefined && typeof options.label !== "string")
    throw new InvalidArgumentError(call, "options.label", "a string", options.label);
  const ratio = p.total > 0 ? Math.min(1, p.done / p.total) : 1;
  const filled = Math.max(0, Math.round(ratio * width)) || 0;
  const bar = `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
  const reward = p.rewardMean === null ? "reward=-" : `reward=${p.rewardMean.toFixed(3)}`;
  const parts = [options.label ?? "gather", bar, `${p.done}/${p.total}`, reward];
  if (p.exceptions > 0) parts.push(`exceptions=${p.exceptions}`);
  if (typeof p.failedGroups === "number" && p.failedGroups > 0)
    parts.push(`failed_groups=${p.failedGroups}`);
  if (typeof p.infraFailures === "number" && p.infraFailures > 0)
    parts.push(`infra_failures=${p.infraFailures}`);
  if (isObjectLike(p.metrics))
    for (const [name, value] of Object.entries(p.metrics))
      if (typeof value === "number" && Number.isFinite(value))
        parts.push(`${name}=${Number.isInteger(value) ? value : value.toFixed(3)}`);
  return parts.join(" ");
}

// Wider than any terminal; a bar of millions of characters is a mistake.
const MAX_WIDTH = 1000;

function checkProgress(call: string, p: unknown): asserts p is GatherProgress {
  if (!isObjectLike(p))
    throw new InvalidArgumentError(
      call,
      "p",
      "an object { done, total, exceptions, rewardMean }",
      p,
    );
  for (const key of ["done", "total", "exceptions"] as const)
    if (typeof p[key] !== "number" || Number.isNaN(p[key]))
      throw new InvalidArgumentError(call, `p.${key}`, "a number", p[key]);
  if (p.rewardMean !== null && typeof p.rewardMean !== "number")
    throw new InvalidArgumentError(call, "p.rewardMean", "a number or null", p.rewardMean);
}

/** The stream the progress bar draws on, when it is a terminal. */
export interface ProgressStream {
  /** Whether it is a terminal: the bar draws only then. */
  isTTY?: boolean;
  /** Writes a chunk of text. */
  write(chunk: string): unknown;
}

/**
 * A progress bar on `stream` (stderr by default) that draws only when the
 * stream is a terminal, so logs and CI output stay clean.
 */
export function createProgressBar(label: string, stream: ProgressStream = process.stderr) {
  const call = "createProgressBar(label, stream)";
  if (typeof label !== "string") throw new InvalidArgumentError(call, "label", "a string", label);
  if (typeof (stream as Partial<ProgressStream> | null)?.write !== "function")
    throw new InvalidArgumentError(
      call,
      "stream",
      "a writable stream (an object with write())",
      stream,
    );
  const enabled = stream.isTTY === true;
  return {
    enabled,
    update(p: GatherProgress): void {
      checkProgress("progressBar.update(p)", p);
      if (enabled) stream.write(`\r${formatProgress(p, { label })}`);
    },
    end(): void {
      if (enabled) stream.write("\n");
    },
  };
}
