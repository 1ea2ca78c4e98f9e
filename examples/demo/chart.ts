// Drawing the reward curve: a few lines of text for the terminal, and an SVG file.

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

/**
 * A line chart of the reward per step as a standalone SVG document.
 *
 * @example
 * await writeFile("reward.svg", renderSvgChart([0.2, 0.5, 0.8]));
 */
export function renderSvgChart(
  values: readonly number[],
  title = "Mean reward per training step",
): string {
  const w = 640;
  const h = 360;
  const pad = { left: 56, right: 24, top: 48, bottom: 48 };
  const innerW = w - pad.left - pad.right;
  const innerH = h - pad.top - pad.bottom;
  const x = (i: number) =>
    pad.left + (values.length > 1 ? (i / (values.length - 1)) * innerW : innerW / 2);
  const y = (v: number) => pad.top + (1 - Math.min(1, Math.max(0, v))) * innerH;
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (t) =>
        `<line x1="${pad.left}" x2="${w - pad.right}" y1="${y(t)}" y2="${y(t)}" stroke="#e5e7eb"/>` +
        `<text x="${pad.left - 8}" y="${y(t) + 4}" text-anchor="end" font-size="12">${t.toFixed(2)}</text>`,
    )
    .join("");
  const dots = values
    .map(
      (v, i) =>
        `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="4" fill="#2563eb"><title>step ${i}: ${v.toFixed(3)}</title></circle>`,
    )
    .join("");
  const labels = values
    .map(
      (_, i) =>
        `<text x="${x(i).toFixed(1)}" y="${h - pad.bottom + 18}" text-anchor="middle" font-size="12">${i}</text>`,
    )
    .join("");
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" role="img" aria-label="${escapeXml(title)}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
    `<text x="${w / 2}" y="28" text-anchor="middle" font-size="16">${escapeXml(title)}</text>`,
    ticks,
    `<polyline points="${points}" fill="none" stroke="#2563eb" stroke-width="2"/>`,
    dots,
    labels,
    `<text x="${w / 2}" y="${h - 8}" text-anchor="middle" font-size="12">training step</text>`,
    "</svg>",
    "",
  ].join("\n");
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"]/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c] ?? c,
  );
}
