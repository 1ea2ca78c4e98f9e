// The report's newer views in Chromium, at a desktop's and a phone's width:
// evaluated (val) Choices never shown as trained, groups left out of
// training marked, 1 MB strings drawn without a freeze, two runs compared,
// and a live page that draws a step logged while it is open. No console
// error, and no request beyond the page's own file or loopback server.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TrainingClient } from "../../src/client/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import { Recorder } from "../../src/recorder/index.js";
import { loadDataDir, serveReport, writeReport } from "../../src/report/index.js";
import { filesVersion } from "../../src/report/serve.js";
import { TrainableModel } from "../../src/training/index.js";
import { TrajectoryGroup } from "../../src/trajectory/index.js";
import {
  type Browser,
  DESKTOP,
  launch,
  OUTPUT,
  open,
  PHONE,
  scrollWidth,
  shown,
  view,
} from "./browser.js";
import { recordedRun } from "./fixture.js";

let browser: Browser;
let runA: string;
let runB: string;
let work: string;

beforeAll(async () => {
  // Two runs of the same task, in two data directories.
  const [a, b] = [await recordedRun(), await recordedRun()];
  runA = a.dataDir;
  runB = b.dataDir;
  work = await mkdtemp(path.join(tmpdir(), "report-runs-"));
  browser = await launch();
  await mkdir(OUTPUT, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

const choice = (content: string, logprobs?: unknown) => ({
  index: 0,
  finish_reason: "stop",
  message: { role: "assistant", content },
  logprobs: logprobs ?? null,
});

describe.each([
  ["desktop", DESKTOP],
  ["phone", PHONE],
])("at a %s's width", (label, width) => {
  it("shows val Choices as evaluated (no advantage, never trained) and marks groups left out of training", async () => {
    const file = path.join(work, `marked-${label}.jsonl`);
    const t = (reward: number) => ({
      messages_and_choices: [{ role: "user", content: "q" }, choice(`answer ${reward}`)],
      reward,
    });
    await writeFile(
      file,
      [
        { step: 0, metadata: { scenario: "kept" }, trajectories: [t(0), t(1)] },
        // A tied group that train left out and logged, marked so.
        {
          step: 0,
          metadata: { scenario: "tied", not_trained: "left out: no signal" },
          trajectories: [t(1), t(1)],
        },
        { step: 0, split: "val", metadata: { scenario: "kept" }, trajectories: [t(0), t(1)] },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n"),
    );
    const page = (
      await writeReport({ groupsFile: file, out: path.join(work, `marked-${label}.html`) })
    ).path;
    const { tab, problems } = await open(browser, page, width);
    try {
      const rows = await tab.locator("#step-table tbody tr").allTextContents();
      expect(rows[0]).toContain("1/2 · 1 not trained");
      // Every rollout counts in the step's mean: 0, 1, 1, 1.
      expect(rows[0]).toContain("0.750");
      await view(tab, "2");
      await tab.selectOption("#step-select", "0");
      const tied = tab.locator('#groups .group:has(.scenario:text-is("tied"))');
      await expect
        .poll(() => tied.locator(".flag").allTextContents())
        .toEqual(["no signal", "not trained"]);
      // The val step: evaluated, no advantage, no "trained" badge.
      await tab.selectOption("#step-select", "1");
      const cards = tab.locator("#groups .tcard");
      await expect.poll(() => cards.count()).toBe(2);
      expect(await tab.locator("#groups .group .flag").allTextContents()).toEqual(["evaluated"]);
      expect(await cards.first().textContent()).toContain("evaluated");
      expect(await cards.first().textContent()).not.toContain("adv");
      await cards.first().click();
      await shown(tab, "#view-trajectory");
      await expect.poll(() => tab.locator("#trajectory .msg.evaluated").count()).toBe(1);
      expect(await tab.locator("#trajectory .badge").allTextContents()).toEqual(["evaluated"]);
      expect(await tab.locator("#trajectory h3").first().textContent()).toMatch(
        /1 evaluated Choice$/,
      );
      expect(await tab.locator("#traj-head").textContent()).toContain(
        "none (evaluated, never trained)",
      );
      expect(await scrollWidth(tab)).toBeLessThanOrEqual(width);
      expect(problems).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it("draws a 1 MB unbroken token and a 1 MB scenario name within 1 s in every view", async () => {
    const big = "x".repeat(1 << 20);
    const name = "s".repeat(1 << 20);
    const trajectory = (content: string) => ({
      messages_and_choices: [
        { role: "user", content: "q" },
        choice(content, { content: [{ token: content, logprob: -0.1, top_logprobs: [] }] }),
      ],
      reward: content.length > 10 ? 1 : 0,
      metadata: { scenario: name },
    });
    const page = (
      await writeReport({
        run: {
          steps: [
            {
              step: 0,
              split: "train",
              groups: [{ trajectories: [trajectory(big), trajectory("ok")] }],
            },
            { step: 0, split: "val", groups: [{ trajectories: [trajectory(big)] }] },
            { step: 1, split: "val", groups: [{ trajectories: [trajectory("ok")] }] },
          ],
        },
        out: path.join(work, `long-${label}.html`),
      })
    ).path;
    const { tab, problems } = await open(browser, page, width);
    try {
      // Each view switch and the trajectory itself, timed in the page until drawn.
      const timed = async (act: () => Promise<void>, ready: string) => {
        const started = Date.now();
        await act();
        await shown(tab, ready);
        await tab.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r))));
        return Date.now() - started;
      };
      const times = {
        groups: await timed(async () => {
          await view(tab, "2");
          await tab.selectOption("#step-select", "0");
        }, "#groups .group .scenario"),
        trajectory: await timed(
          () => tab.locator("#groups .tcard").first().click(),
          "#trajectory .msg.trained .tok",
        ),
        compare: await timed(() => view(tab, "4"), "#compare .cmp-row h3"),
      };
      for (const [where, ms] of Object.entries(times))
        expect(ms, `${where} took ${ms} ms`).toBeLessThan(1000);
      // The long strings are cut, and say how much is left; the rest on request.
      await view(tab, "3");
      const tok = tab.locator("#trajectory .msg.trained .tok").first();
      expect(((await tok.textContent()) ?? "").length).toBeLessThan(21_000);
      expect(await tok.textContent()).toMatch(/more characters\)$/);
      expect(((await tab.locator("#traj-where").textContent()) ?? "").length).toBeLessThan(3000);
      expect(await scrollWidth(tab)).toBeLessThanOrEqual(width);
      expect(problems).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it("compares two runs: curves overlaid, the same scenario of each side by side", async () => {
    const page = (
      await writeReport({
        runs: [
          { dataDir: runA, label: "run A" },
          { dataDir: runB, label: "run B" },
        ],
        out: path.join(work, `two-${label}.html`),
      })
    ).path;
    const { tab, problems } = await open(browser, page, width);
    try {
      // Reward: a line per run and split, in the legend by name.
      const series = await tab
        .locator("#reward-chart g.series")
        .evaluateAll((gs) => gs.map((g) => g.getAttribute("data-series")));
      expect(series).toEqual(["run A · train", "run A · val", "run B · train", "run B · val"]);
      // A trainer metric and a trajectory metric, one line per run (and split).
      expect(
        await tab.locator('figure.trainer[data-metric="loss/train"] polyline.mean').count(),
      ).toBe(2);
      expect(await tab.locator('figure.traj[data-metric="tool_calls"] polyline.mean').count()).toBe(
        4,
      );
      expect(await tab.locator("#step-table td.run").allTextContents()).toContain("run B");
      await view(tab, "4");
      expect(await tab.inputValue("#cmp-split")).toBe("run A · val");
      expect(await tab.inputValue("#cmp-split-b")).toBe("run B · val");
      const row = tab.locator("#compare .cmp-row").first();
      await expect.poll(() => row.locator("h3").textContent()).toMatch(/^apple/);
      const sides = row.locator(".cmp-side");
      expect(await sides.first().locator(".meta").first().textContent()).toMatch(
        /^run A · val step 2 · mean reward /,
      );
      expect(await sides.nth(1).locator(".meta").first().textContent()).toMatch(
        /^run B · val step 2 · mean reward /,
      );
      const a = (await sides.first().boundingBox())!;
      const b = (await sides.nth(1).boundingBox())!;
      if (width === DESKTOP) expect(b.x).toBeGreaterThan(a.x + a.width - 1);
      else expect(b.y).toBeGreaterThan(a.y + a.height - 1);
      // Train steps of the two runs compare as well.
      await tab.selectOption("#cmp-split", "run A · train");
      await tab.selectOption("#cmp-split-b", "run B · train");
      await expect.poll(() => tab.locator("#compare .cmp-row h3").count()).toBe(3);
      expect(await scrollWidth(tab)).toBeLessThanOrEqual(width);
      await tab.screenshot({
        path: path.join(OUTPUT, `report-two-runs-${label}.png`),
        fullPage: true,
      });
      expect(problems).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it("follows a live run: a step logged while the page is open appears without a reload", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "report-live-"));
    const emu = await startEmulator({ port: 0, apiKeys: { k: "alice" }, dataDir });
    const server = await serveReport({
      load: () => loadDataDir(dataDir),
      version: filesVersion([path.join(dataDir, "emulator-state.json")]),
      interval: 100,
    });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const client = new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 });
      const model = await TrainableModel.register(client, {
        project: "live",
        name: `agent-${label}`,
        baseModel: "emulator/tiny",
      });
      const recorder = new Recorder({ logger: { warn() {} } as never });
      const openai = model.openai({ recorder });
      const group = async (seed: number) =>
        new TrajectoryGroup(
          await Promise.all(
            [0, 1, 2, 3].map((i) =>
              recorder.rollout(async (t) => {
                await openai.chat.completions.create({
                  model: "",
                  messages: [{ role: "user", content: "say something" }],
                  max_tokens: 3,
                  seed: seed + i,
                });
                t.reward = i / 3;
                t.metrics.turns = 1;
              }),
            ),
          ),
          { metadata: { scenario: "talk" } },
        );
      await model.train([await group(1)], { learningRate: 1e-5 }, { pollIntervalMs: 5 });
      const { tab, problems } = await open(browser, server.url, width);
      try {
        await expect.poll(() => tab.locator("#live").textContent()).toBe("live");
        await expect.poll(() => tab.locator("#reward-chart circle").count()).toBe(1);
        await view(tab, "2");
        await expect.poll(() => tab.locator("#step-select option").count()).toBe(1);
        // A second step trains and a val group is logged while the page is open.
        await model.train([await group(10)], { learningRate: 1e-5 }, { pollIntervalMs: 5 });
        await model.log([await group(20)], { split: "val" });
        await expect
          .poll(() => tab.locator("#step-select option").allTextContents(), { timeout: 10_000 })
          .toEqual([
            expect.stringMatching(/^train step 0 /),
            expect.stringMatching(/^train step 1 /),
            expect.stringMatching(/^val step 2 /),
          ]);
        // The reader was on the newest step: the groups view follows it.
        await expect.poll(() => tab.inputValue("#step-select")).toBe("2");
        await view(tab, "1");
        await expect.poll(() => tab.locator("#reward-chart circle").count()).toBe(3);
        await expect
          .poll(() => tab.locator('#trajectory-metrics figure[data-metric="turns"] circle').count())
          .toBe(3);
        expect(await tab.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
        expect(await scrollWidth(tab)).toBeLessThanOrEqual(width);
        await tab.screenshot({
          path: path.join(OUTPUT, `report-live-${label}.png`),
          fullPage: true,
        });
        expect(problems).toEqual([]);
      } finally {
        await tab.close();
      }
    } finally {
      await server.close();
      await emu.close();
    }
  });
});
