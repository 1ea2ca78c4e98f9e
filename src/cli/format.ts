// Numbers as the CLI prints them: as given, never rounded to a fixed number of
// decimals (a learning rate of 2e-5 prints 2e-5, not 0), and averaged counts
// marked as averages.

/**
 * `n` in its shortest form; tiny and huge ones in exponent form (2e-5).
 * Twelve significant digits by default hide float noise (0.1 + 0.2) and keep
 * every digit a user typed; averages are shown with fewer.
 */
export function formatNumber(n: number, digits = 12): string {
  if (!Number.isFinite(n) || Number.isInteger(n)) return String(n);
  const abs = Math.abs(n);
  const tidy = Number(n.toPrecision(digits));
  if (abs < 1e-3 || abs >= 1e15) return tidy.toExponential();
  return String(tidy);
}

/** Per-step counts: averaged over the steps, they are shown "per step". */
const COUNT = /^num_(?!gradient_steps$)|_tokens$|_count$/;

/**
 * The metrics of a finished job, averaged over its gradient steps: each as
 * `name=value`, counts marked `/step`, `num_gradient_steps` as the count it is.
 */
export function averagedMetrics(metrics: Record<string, unknown>): string {
  return Object.entries(metrics)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => {
      // A setting (the learning rate) is the same at every step: shown as given.
      const digits = /learning_rate/.test(k) ? 12 : 6;
      return `${k}=${formatNumber(v as number, digits)}${COUNT.test(k) ? "/step" : ""}`;
    })
    .join(" ");
}

/** Metrics as the service gave them (a checkpoint's, a log answer's): `name=value`. */
export function plainMetrics(metrics: Record<string, unknown>): string {
  return Object.entries(metrics)
    .filter(([, v]) => v !== null && v !== undefined && typeof v !== "object")
    .map(([k, v]) => `${k}=${typeof v === "number" ? formatNumber(v) : String(v)}`)
    .join(" ");
}
