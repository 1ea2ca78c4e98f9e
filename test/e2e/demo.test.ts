import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { renderTerminalChart, runDemo } from "../../src/demo/index.js";

/** A stream that says it is a terminal (so the progress bar draws) and keeps what it gets. */
class FakeTerminal extends Writable {
  isTTY = true;
  text = "";
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

it("draws one bar per step, scaled to the largest value", () => {
  const chart = renderTerminalChart([0.25, 0.5, 1], 8);
  expect(chart.split("\n")).toEqual([
    "step  0 │██      │ 0.250",
    "step  1 │████    │ 0.500",
    "step  2 │████████│ 1.000",
  ]);
});

it("trains the tool-using agent end to end on the emulator: the reward rises, the bar shows it live, the report is written", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "demo-"));
  const out = new FakeTerminal();
  const reportPath = path.join(dir, "report.html");
  const { rewards, reportPath: written } = await runDemo({
    steps: 4,
    groupSize: 8,
    out,
    reportPath,
  });
  expect(rewards).toHaveLength(5);
  expect(rewards.at(-1)!).toBeGreaterThan(rewards[0]! + 0.2);
  const lines = out.text.split(/[\r\n]/);
  expect(
    lines.filter((l) => /^step \d: reward .* rollouts used the tool\) -> checkpoint \d/.test(l)),
  ).toHaveLength(4);
  // Rewards are given in afterEach, so the bar shows a mean before the gather ends.
  const frames = lines
    .map((l) => /^step 3 \[[#.]+\] (\d+)\/32 reward=(\d\.\d{3})/.exec(l))
    .filter((m) => m !== null);
  expect(frames.some((m) => Number(m[1]) < 32 && Number(m[2]) > 0)).toBe(true);
  // The demo's agent really is an agent: its rollouts call the tool and answer after it.
  expect(lines.some((l) => /^step 3: .*\((?:[1-9]\d*)\/32 rollouts used the tool\)/.test(l))).toBe(
    true,
  );
  expect(written).toBe(reportPath);
  const html = await readFile(reportPath, "utf8");
  expect(html).toContain('id="reward-chart"');
  expect(html).toContain("check_stock");
  const index = JSON.parse(
    /<script type="application\/json" id="report-index">(.*?)<\/script>/s.exec(html)![1]!,
  );
  // The evaluation is logged as val on the first and the last checkpoint (the
  // same scenarios), never as a train step; training metrics under ART's names.
  expect(index.steps.map((s: any) => `${s.split} ${s.step}`)).toEqual([
    "train 0",
    "val 0",
    "train 1",
    "train 2",
    "train 3",
    "val 4",
  ]);
  const val = index.groups.filter((g: any) => index.steps[g.s].split === "val");
  expect(val.every((g: any) => g.trained === false)).toBe(true);
  expect(index.advantage[val[0].first]).toBeNull();
  expect(Object.keys(index.training[0].metrics)).toContain("loss/train");
  expect(Object.keys(index.training[0].metrics)).not.toContain("policy_loss");
  // Each step's trajectory metrics: tool calls per rollout.
  expect(index.steps[0].m.tool_calls[4]).toBe(32);
});
