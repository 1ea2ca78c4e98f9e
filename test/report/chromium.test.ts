// The report in a real browser: Debian's Chromium, headless, driven by
// playwright-core. The page must load without a console error and draw the
// chart and a trajectory; a screenshot goes to test-output/report.png.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { expect, inject, it } from "vitest";
import { writeReport } from "../../src/report/index.js";
import { recordedRun } from "./fixture.js";

// Found (or installed) by the global setup, test/setup/global.ts.
const CHROMIUM = inject("systemTools").chromium;
const SCREENSHOT = path.resolve("test-output/report.png");

it("loads in headless Chromium with no console error, and draws the chart and a trajectory", async () => {
  if (!CHROMIUM)
    throw new Error(
      "Chromium was not found: install Debian's chromium package (apt-get install -y chromium), or set CHROMIUM to it.",
    );
  const { dataDir } = await recordedRun();
  const { path: page } = await writeReport({ dataDir, out: path.join(dataDir, "report.html") });
  const profile = await mkdtemp(path.join(tmpdir(), "chromium-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1100, height: 900 },
  });
  try {
    const tab = await context.newPage();
    const problems: string[] = [];
    tab.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    tab.on("pageerror", (e) => problems.push(String(e)));
    tab.on("request", (r) => {
      if (!r.url().startsWith("file:") && !r.url().startsWith("data:"))
        problems.push(`network request ${r.url()}`);
    });
    await tab.goto(pathToFileURL(page).href, { waitUntil: "load" });

    const chart = await tab.locator("#reward-chart").boundingBox();
    expect(chart!.width).toBeGreaterThan(500);
    expect(chart!.height).toBeGreaterThan(200);
    // One line per split (train, val), a dot per logged step of each.
    expect(await tab.locator("#reward-chart polyline.mean").count()).toBe(2);
    expect(await tab.locator("#reward-chart circle").count()).toBe(3);
    const band = await tab.locator("#reward-chart polygon.band").first().boundingBox();
    expect(band!.width).toBeGreaterThan(100);

    // The viewer opens on the last step: a conversation with a trained Choice
    // whose sampled tokens are shaded.
    const messages = tab.locator("#trajectory .msg");
    expect(await messages.count()).toBeGreaterThanOrEqual(2);
    const trained = tab.locator("#trajectory .msg.trained");
    expect(await trained.count()).toBeGreaterThanOrEqual(1);
    const box = await trained.first().boundingBox();
    expect(box!.width).toBeGreaterThan(400);
    expect(box!.height).toBeGreaterThan(30);
    const token = tab.locator("#trajectory .tok").first();
    expect((await token.boundingBox())!.width).toBeGreaterThan(5);
    expect(await token.evaluate((e) => getComputedStyle(e).backgroundColor)).toMatch(/^rgb/);
    expect(await token.getAttribute("title")).toMatch(/^logprob -?\d/);

    // Another step redraws the viewer.
    await tab.selectOption("#step-select", "0");
    expect(await tab.locator("#trajectory-select option").count()).toBe(6);
    await tab.click("#next");
    expect(await tab.inputValue("#trajectory-select")).toBe("1");
    expect(await trained.count()).toBeGreaterThanOrEqual(1);

    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await tab.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(problems).toEqual([]);
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
});
