import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { renderSvgChart, renderTerminalChart } from "../../examples/demo/chart.js";
import { main } from "../../examples/demo/main.js";

it("draws one bar per step, scaled to the largest value", () => {
  const chart = renderTerminalChart([0.25, 0.5, 1], 8);
  expect(chart.split("\n")).toEqual([
    "step  0 │██      │ 0.250",
    "step  1 │████    │ 0.500",
    "step  2 │████████│ 1.000",
  ]);
});

it("draws the reward curve as an SVG polyline, higher rewards higher up", () => {
  const svg = renderSvgChart([0, 0.5, 1], "a <title>");
  expect(svg.startsWith("<svg")).toBe(true);
  expect(svg).toContain("a &lt;title&gt;");
  const points = /<polyline points="([^"]+)"/
    .exec(svg)![1]!
    .split(" ")
    .map((p) => p.split(",").map(Number));
  expect(points).toHaveLength(3);
  expect(points[0]![0]).toBeLessThan(points[2]![0]!);
  expect(points[0]![1]).toBeGreaterThan(points[1]![1]!);
  expect(points[1]![1]).toBeGreaterThan(points[2]![1]!);
});

it("runs the demo end to end against the emulator, and the reward rises", async () => {
  const outDir = await mkdtemp(path.join(tmpdir(), "demo-"));
  const lines: string[] = [];
  const { rewards, svgPath } = await main({ steps: 4, outDir, log: (l) => lines.push(l) });
  expect(rewards).toHaveLength(5);
  expect(rewards.at(-1)!).toBeGreaterThan(rewards[0]! + 0.3);
  expect(lines.filter((l) => /^step \d: reward .* trained checkpoint \d/.test(l))).toHaveLength(4);
  expect(await readFile(svgPath, "utf8")).toContain("<polyline");
});
