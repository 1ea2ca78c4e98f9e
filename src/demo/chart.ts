// The reward curve in a few lines of text, for the terminal.

/**
 * A bar per step, scaled to `width` columns, with the value at the end.
 *
 * @example
 * console.log(renderTerminalChart([0.2, 0.5, 0.8]));
 */
export function renderTerminalChart(values: readonly number[], width = 40): string {
  const max = Math.max(1e-9, ...values);
  return values
    .map((value, step) => {
      const cells = Math.round((Math.max(0, value) / max) * width);
      return `step ${String(step).padStart(2)} │${"█".repeat(cells)}${" ".repeat(width - cells)}│ ${value.toFixed(3)}`;
    })
    .join("\n");
}
