// The Production view in a real browser (Debian's Chromium, headless, through
// playwright-core): a store's trajectories by session, each with its reward,
// eligibility and feedback, filtered in the page, opened to their
// conversation; a comment holding markup renders as text and runs nothing;
// the page requests nothing from the network. Screenshot: test-output/report-production.png.
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { writeReport } from "../../src/report/index.js";
import { type Browser, launch, OUTPUT, open, scrollWidth, shown } from "./browser.js";
import { HTML_COMMENT, type ProductionStore, productionStore } from "./production-fixture.js";

let browser: Browser;
let fx: ProductionStore;
let page: string;

beforeAll(async () => {
  fx = await productionStore();
  page = (
    await writeReport({
      store: fx.dir,
      out: path.join(fx.dir, "..", `${path.basename(fx.dir)}.html`),
    })
  ).path;
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await rm(fx.dir, { recursive: true, force: true });
  await rm(page, { force: true });
});

it("opens on the production trajectories, grouped by session, each with its reward, eligibility, feedback count and interrupted call", async () => {
  const { tab, problems } = await open(browser, page);
  try {
    await shown(tab, "#view-production");
    const sessions = tab.locator("#production .psession");
    await expect.poll(() => sessions.count()).toBe(4);
    expect(
      (await sessions.evaluateAll((s) => s.map((x) => x.getAttribute("data-session")))).sort(),
    ).toEqual(["alice", "bob", "carol", "dave"]);
    const card = (id: string) => tab.locator(`#production details.ptraj[data-id="${id}"]`);
    const summary = async (id: string) => (await card(id).locator("summary").textContent()) ?? "";
    expect(await summary(fx.ids.alice)).toMatch(
      new RegExp(
        `^${fx.ids.alice}reward 1\\.000eligibleshop-assistant · 2 calls · 2 feedback · 20`,
      ),
    );
    expect(await summary(fx.ids.bob)).toMatch(
      /reward 0\.250not eligibleshop-assistant · 1 call · 1 feedback/,
    );
    expect(await summary(fx.ids.carol)).toMatch(
      /no rewardundecidedshop-assistant · 1 call · 0 feedback/,
    );
    expect(await summary(fx.ids.cut)).toMatch(/no rewardundecidedinterruptedopen/);
    expect(await tab.locator("#p-count").textContent()).toBe(
      "4 of 4 production trajectories, in 4 sessions",
    );
    expect(await tab.locator('#tabs a[data-view="production"]').getAttribute("aria-selected")).toBe(
      "true",
    );
    expect(await scrollWidth(tab)).toBeLessThanOrEqual(1400);
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("filters to the eligible, the rewarded, the unrewarded and by text, with a count in each choice", async () => {
  const { tab, problems } = await open(browser, page);
  try {
    const ids = () =>
      tab
        .locator("#production details.ptraj")
        .evaluateAll((d) => d.map((x) => x.getAttribute("data-id")));
    await expect.poll(async () => (await ids()).length).toBe(4);
    expect(await tab.locator("#p-filter option").allTextContents()).toEqual([
      "all (4)",
      "eligible for training (1)",
      "not eligible (1)",
      "rewarded (2)",
      "unrewarded (2)",
      "with an interrupted call (1)",
      "replayed (0)",
      "infrastructure failures (0)",
    ]);
    await tab.selectOption("#p-filter", "eligible");
    await expect.poll(ids).toEqual([fx.ids.alice]);
    await tab.selectOption("#p-filter", "ineligible");
    await expect.poll(ids).toEqual([fx.ids.bob]);
    await tab.selectOption("#p-filter", "rewarded");
    await expect.poll(async () => (await ids()).sort()).toEqual([fx.ids.alice, fx.ids.bob].sort());
    await tab.selectOption("#p-filter", "unrewarded");
    await expect.poll(async () => (await ids()).sort()).toEqual([fx.ids.carol, fx.ids.cut].sort());
    expect(await tab.locator("#p-count").textContent()).toBe(
      "2 of 4 production trajectories, in 2 sessions",
    );
    await tab.selectOption("#p-filter", "");
    await tab.fill("#p-text", "off-topic");
    await expect.poll(ids).toEqual([fx.ids.bob]);
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("opens a trajectory to its feedback and conversation; a comment holding markup is shown as text and runs nothing", async () => {
  const { tab, problems } = await open(browser, page);
  try {
    const alice = tab.locator(`#production details.ptraj[data-id="${fx.ids.alice}"]`);
    await alice.locator("summary").click();
    await shown(tab, `details.ptraj[data-id="${fx.ids.alice}"] .fb`);
    const feedback = alice.locator(".fb");
    expect(await feedback.count()).toBe(2);
    expect(await feedback.nth(0).locator(".comment").textContent()).toBe(HTML_COMMENT);
    const first = (await feedback.nth(0).textContent()) ?? "";
    expect(first).toMatch(/^#1 · 20\S+ · from browserreward 1\.000metrics: /);
    expect(first).toContain("helpful = true");
    expect(first).toContain("minutes_saved = 4");
    expect(await feedback.nth(1).textContent()).toMatch(
      /^#2 · 20\S+ · from cimetrics: resolved = true$/,
    );
    // Inert: no element came from the comment, no script ran, nothing was fetched.
    expect(await tab.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await alice.locator("script, img, b").count()).toBe(0);
    expect(await alice.locator("dl.kv").first().textContent()).toContain(
      "for trainingeligible (may be trained on",
    );
    // The conversation, drawn as the trajectory view draws it, its answers marked as sampled in production.
    const messages = alice.locator(".history .msg");
    expect(await messages.count()).toBe(4);
    expect(await messages.nth(1).locator(".badge").textContent()).toBe("sampled");
    expect(await messages.nth(3).textContent()).toContain("answer 1 to thanks!");
    await alice.screenshot({ path: path.join(OUTPUT, "report-production.png") });

    // The interrupted call: kept as far as it got, its log line shown.
    await tab.goto(`${tab.url().split("#")[0]}#production/${fx.ids.cut}`);
    const cut = tab.locator(`#production details.ptraj[data-id="${fx.ids.cut}"]`);
    await expect.poll(() => cut.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    await shown(tab, `details.ptraj[data-id="${fx.ids.cut}"] .history`);
    expect(await cut.locator(".history .msg").nth(1).textContent()).toContain("Your order is bei");
    expect(await cut.textContent()).toMatch(/call 1 was interrupted/);
    expect(await cut.textContent()).toContain("No feedback yet.");
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});
