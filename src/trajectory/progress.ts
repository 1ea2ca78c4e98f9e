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
  const width = options.width ?? 20;
  const ratio = p.total > 0 ? Math.min(1, p.done / p.total) : 1;
  const filled = Math.round(ratio * width);
  const bar = `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
  const reward = p.rewardMean === null ? "reward=-" : `reward=${p.rewardMean.toFixed(3)}`;
  const parts = [options.label ?? "gather", bar, `${p.done}/${p.total}`, reward];
  if (p.exceptions > 0) parts.push(`exceptions=${p.exceptions}`);
  return parts.join(" ");
}

/** The stream the progress bar draws on, when it is a terminal. */
export interface ProgressStream {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

/**
 * A progress bar on `stream` (stderr by default) that draws only when the
 * stream is a terminal, so logs and CI output stay clean.
 */
export function createProgressBar(label: string, stream: ProgressStream = process.stderr) {
  const enabled = stream.isTTY === true;
  return {
    enabled,
    update(p: GatherProgress): void {
      if (enabled) stream.write(`\r${formatProgress(p, { label })}`);
    },
    end(): void {
      if (enabled) stream.write("\n");
    },
  };
}
