// The Production view beside a training run, in a real browser (Debian's
// Chromium through playwright-core): a production trajectory opens to its
// recorded state with the groups replayed from it beside it, each answer with
// its reward and the infrastructure failure marked; the per-step table of
// infrastructure failures; and filters for both. Screenshot:
// test-output/report-production-replays.png.
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { writeReport } from "../../src/report/index.js";
import { type Browser, launch, OUTPUT, open, scrollWidth, shown } from "./browser.js";
import { type ReplayRun, replayRun } from "./replay-fixture.js";

let browser: Browser;
let fx: ReplayRun;
let page: string;

beforeAll(async () => {
  fx = await replayRun();
  const out = path.join(fx.storeDir, "..", "report.html");
  page = (await writeReport({ dataDir: fx.dataDir, store: fx.storeDir, out })).path;
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await rm(path.dirname(fx.storeDir), { recursive: true, force: true });
});

it("opens a production trajectory to its state with the groups replayed from it beside it", async () => {
  const { tab, problems } = await open(browser, page);
  try {
    await tab.goto(`${tab.url().split("#")[0]}#production/${fx.ids.replayed}`);
    const card = tab.locator(`#production details.ptraj[data-id="${fx.ids.replayed}"]`);
    expect(await card.locator("summary").textContent()).toContain("replayed ×1");
    await shown(tab, `details.ptraj[data-id="${fx.ids.replayed}"] .replay-pair`);
    const state = card.locator(".replay-pair .replay-state");
    const replays = card.locator(".replay-pair .replays");
    expect(await state.locator(".history .msg").first().textContent()).toContain(
      "please say apple",
    );
    expect(await replays.locator("h3").textContent()).toBe("Replayed from this state (1 group)");
    expect(await replays.locator(".replay").getAttribute("data-step")).toBe("0");
    const samples = replays.locator(".replay-sample");
    expect(await samples.count()).toBe(4);
    for (let i = 0; i < 3; i++) {
      const text = (await samples.nth(i).textContent()) ?? "";
      expect(text).toContain(fx.answers[i] as string);
      expect(text).toMatch(new RegExp(`^${(fx.rewards[i] as number).toFixed(3)}`));
    }
    expect(await samples.nth(3).textContent()).toContain("infra failure");
    // Beside, not below: the replays start at the state's top, to its right.
    const a = await state.boundingBox();
    const b = await replays.boundingBox();
    expect(b!.x).toBeGreaterThan(a!.x + a!.width - 1);
    expect(Math.abs(b!.y - a!.y)).toBeLessThan(4);
    expect(await scrollWidth(tab)).toBeLessThanOrEqual(1400);
    await card.screenshot({ path: path.join(OUTPUT, "report-production-replays.png") });
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("shows the infrastructure failures per step, and filters to the replayed and to the failed", async () => {
  const { tab, problems } = await open(browser, page);
  try {
    await tab.goto(`${tab.url().split("#")[0]}#production`);
    await shown(tab, "#p-infra");
    const step0 = tab.locator('#p-infra tr[data-step="0"]');
    expect(await step0.locator('[data-col="served"]').textContent()).toBe("1 of 2");
    expect(await step0.locator('[data-col="trained"]').textContent()).toBe("1 of 4");
    const failed = tab.locator(`#production details.ptraj[data-id="${fx.ids.failed}"] summary`);
    expect(await failed.textContent()).toContain("infra failure");
    const ids = () =>
      tab
        .locator("#production details.ptraj")
        .evaluateAll((d) => d.map((x) => x.getAttribute("data-id")));
    await tab.selectOption("#p-filter", "replayed");
    await expect.poll(ids).toEqual([fx.ids.replayed]);
    await tab.selectOption("#p-filter", "infra");
    await expect.poll(ids).toEqual([fx.ids.failed]);
    expect(await tab.locator('#p-filter option[value="infra"]').textContent()).toBe(
      "infrastructure failures (1)",
    );
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});
