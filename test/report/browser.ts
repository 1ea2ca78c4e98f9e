// Debian's Chromium, headless, driven by playwright-core, for the report's
// browser tests: one persistent context per test file, and pages that collect
// every console error, page error, dialog and network request they see.
// Every wait in these tests retries (expect.poll, locator waits): a view
// switch goes through `hashchange`, which runs after the key press returns.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { expect, inject } from "vitest";

// Found (or installed) by the global setup, test/setup/global.ts.
const CHROMIUM = inject("systemTools").chromium;
export const OUTPUT = path.resolve("test-output");
export const DESKTOP = 1400;
export const PHONE = 390;

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launch(): Promise<Browser> {
  if (!CHROMIUM)
    throw new Error(
      "Chromium was not found: install Debian's chromium package (apt-get install -y chromium), or set CHROMIUM to it.",
    );
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
    viewport: { width: DESKTOP, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens a page (a file, or a URL on a loopback server), collecting console
 * errors, page errors, dialogs and every request other than the page's own
 * file or the given origin's.
 */
export async function open(
  browser: Browser,
  target: string,
  width = DESKTOP,
): Promise<{ tab: Page; problems: string[] }> {
  const tab = await browser.context.newPage();
  await tab.setViewportSize({ width, height: 900 });
  const problems: string[] = [];
  const url = /^https?:/.test(target) ? target : pathToFileURL(target).href;
  const origin = /^https?:/.test(target) ? new URL(target).origin : undefined;
  tab.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  tab.on("pageerror", (e) => problems.push(String(e)));
  tab.on("dialog", (d) => {
    problems.push(`dialog ${d.message()}`);
    void d.dismiss();
  });
  tab.on("request", (r) => {
    const u = r.url();
    if (u.startsWith("data:") || u === url) return;
    if (origin !== undefined && new URL(u).origin === origin) return;
    problems.push(`request ${u}`);
  });
  await tab.goto(url, { waitUntil: "load" });
  return { tab, problems };
}

export const scrollWidth = (tab: Page) => tab.evaluate(() => document.documentElement.scrollWidth);

/** Switches view by its key and waits until that view is shown. */
export async function view(tab: Page, key: "1" | "2" | "3" | "4"): Promise<void> {
  const name = ["training", "groups", "trajectory", "compare"][Number(key) - 1];
  await tab.keyboard.press(key);
  await expect.poll(() => tab.locator(`#view-${name}`).isVisible()).toBe(true);
}

/** Waits until the element is shown. */
export async function shown(tab: Page, selector: string): Promise<void> {
  await expect.poll(() => tab.locator(selector).first().isVisible()).toBe(true);
}
