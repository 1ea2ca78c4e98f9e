// The report in a real browser: Debian's Chromium, headless, driven by
// playwright-core. Each view is opened and used as an engineer would; the page
// must raise no console error, request nothing from the network, run no script
// that came from recorded content, and never scroll sideways. Screenshots go
// to test-output/report-*.png. Every wait retries (see ./browser.ts).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { writeReport } from "../../src/report/index.js";
import {
  type Browser,
  launch,
  OUTPUT,
  open as openIn,
  PHONE,
  scrollWidth,
  shown,
  view,
} from "./browser.js";
import { recordedRun } from "./fixture.js";

let browser: Browser;
let runPage: string;
let dir: string;

beforeAll(async () => {
  const { dataDir } = await recordedRun();
  dir = dataDir;
  runPage = (await writeReport({ dataDir, out: path.join(dataDir, "report.html") })).path;
  browser = await launch();
  await mkdir(OUTPUT, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

const open = (file: string, width?: number) => openIn(browser, file, width);

it("shows the training view: reward per step, the trajectories' metrics and the trainer's (under ART's names) as curves, and each step's job", async () => {
  const { tab, problems } = await open(runPage);
  try {
    const chart = await tab.locator("#reward-chart").boundingBox();
    expect(chart!.width).toBeGreaterThan(500);
    // One line per split (train, val), a dot per logged step of each.
    expect(await tab.locator("#reward-chart polyline.mean").count()).toBe(2);
    expect(await tab.locator("#reward-chart circle").count()).toBe(4);
    const captions = await tab
      .locator("#view-training figure.trainer figcaption")
      .allTextContents();
    expect(captions.slice(0, 3)).toEqual(["loss/train", "loss/entropy", "loss/grad_norm"]);
    expect(captions).toContain("clipped_fraction");
    expect(captions).toContain("mean_importance_ratio");
    expect(captions).not.toContain("policy_loss");
    expect(await tab.locator("#view-training figure.trainer polyline.mean").count()).toBe(
      captions.length,
    );
    // The trajectories' own metric (tool calls), per split: mean, spread band, whiskers.
    const tools = tab.locator('#trajectory-metrics figure[data-metric="tool_calls"]');
    expect(await tools.locator("polyline.mean").count()).toBe(2);
    expect(await tools.locator("polygon.band").count()).toBe(2);
    expect(await tools.locator("circle").count()).toBe(4);
    expect(await tools.locator("circle title").first().textContent()).toMatch(
      /^train step 0: tool_calls mean \d\.\d{3} ± \d\.\d{3} \(min \d\.\d{3}, max \d\.\d{3}, 11 trajectories\)$/,
    );
    const rows = await tab.locator("#step-table tbody tr").allTextContents();
    expect(rows.filter((r) => r.includes("completed"))).toHaveLength(2);
    expect(rows[0]).toContain("2/3"); // two of the three groups carried a signal
    expect(rows[1]).toContain("evaluated"); // the val step
    expect(await scrollWidth(tab)).toBeLessThanOrEqual(1400);
    await tab.screenshot({ path: path.join(OUTPUT, "report-training.png"), fullPage: true });
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("shows a group side by side, filters, sorts and moves by keyboard to a trajectory", async () => {
  const { tab, problems } = await open(runPage);
  try {
    await view(tab, "2");
    await tab.selectOption("#step-select", {
      label: (await tab.locator("#step-select option").first().textContent())!,
    });
    const groups = tab.locator("#groups .group");
    await expect.poll(() => groups.count()).toBe(3);
    expect(await groups.locator(".scenario").allTextContents()).toEqual([
      "apple",
      "banana",
      "pear",
    ]);
    // The group whose rewards are all equal is marked, with its failed rollout.
    const pear = groups.nth(2);
    expect(await pear.locator(".flag").allTextContents()).toEqual(["no signal", "1 exception(s)"]);
    expect(await pear.locator(".tcard .zero").allTextContents()).toEqual([
      "adv 0.00",
      "adv 0.00",
      "adv 0.00",
    ]);
    // Cards of a group: reward, advantage, length, tools.
    const cards = groups.first().locator(".tcard");
    expect(await cards.count()).toBe(4);
    expect(await cards.first().locator(".nums").textContent()).toMatch(
      /reward \d\.\d{3}adv [+-]?\d\.\d\d\d+ tok · \d+ turns/,
    );
    const boxes = await Promise.all([0, 1].map(async (i) => (await cards.nth(i).boundingBox())!));
    expect(boxes[1]!.x).toBeGreaterThan(boxes[0]!.x + boxes[0]!.width - 1); // side by side

    await tab.screenshot({ path: path.join(OUTPUT, "report-groups.png"), fullPage: true });

    // Filters: scenario, signal, reward range, text; the count says what matches.
    await tab.fill("#f-scenario", "pear");
    await expect.poll(() => groups.count()).toBe(1);
    await tab.fill("#f-scenario", "");
    await tab.check("#f-signal");
    await expect.poll(() => groups.count()).toBe(2);
    await tab.fill("#f-min", "1");
    await expect
      .poll(async () =>
        (await tab.locator("#groups .tcard").allTextContents()).every((t) =>
          t.includes("reward 1.000"),
        ),
      )
      .toBe(true);
    await tab.fill("#f-min", "");
    await tab.uncheck("#f-signal");
    await tab.fill("#f-text", "many banana");
    await expect.poll(() => groups.locator(".scenario").allTextContents()).toEqual(["banana"]);
    await tab.fill("#f-text", "");
    await expect.poll(() => groups.count()).toBe(3);
    // Sort by reward, highest first: within each group, rewards never rise.
    await tab.selectOption("#f-sort", "reward-desc");
    const rewards = (await groups.first().locator(".tcard .nums").allTextContents()).map((t) =>
      Number(/reward (\S+)/.exec(t)![1]),
    );
    expect(rewards).toEqual([...rewards].sort((a, b) => b - a));

    // Keyboard: j moves the cursor, Enter opens, j/k move between trajectories, Esc goes back.
    await tab.locator("body").click({ position: { x: 2, y: 2 } });
    await tab.keyboard.press("j");
    const second = await tab.locator(".tcard.cursor").getAttribute("data-i");
    await tab.keyboard.press("Enter");
    await expect.poll(() => tab.evaluate(() => location.hash)).toBe(`#trajectory/${second}`);
    await shown(tab, "#view-trajectory");
    await tab.keyboard.press("j");
    await expect.poll(() => tab.evaluate(() => location.hash)).not.toBe(`#trajectory/${second}`);
    await tab.keyboard.press("k");
    await expect.poll(() => tab.evaluate(() => location.hash)).toBe(`#trajectory/${second}`);
    await tab.keyboard.press("Escape");
    await shown(tab, "#view-groups");
    expect(await scrollWidth(tab)).toBeLessThanOrEqual(1400);
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("shows a trajectory: token ids as text shaded by probability, every history, tool calls with their results, logs and metrics", async () => {
  const { tab, problems } = await open(runPage);
  try {
    // A trajectory of the first step whose agent called the tool and asked a sub-agent.
    await view(tab, "2");
    await tab.selectOption("#step-select", "0");
    await tab.selectOption("#f-tool", { label: "check_stock" });
    await tab.locator("#groups .tcard").first().click();
    const histories = tab.locator("#trajectory .history");
    await expect.poll(() => histories.count()).toBe(2);
    expect(await histories.locator("h3").allTextContents()).toEqual([
      expect.stringMatching(/^main conversation · 4 messages · 2 trained Choices$/),
      expect.stringMatching(/^additional history 1 · 2 messages · 1 trained Choice$/),
    ]);
    // The text, not `token_id:N`: each token a shaded span over the words it produced.
    const answer = histories.first().locator(".msg.trained .text").first();
    const text = (await answer.textContent())!;
    // A trailing end token is drawn after the words, as its own mark.
    expect(text).toMatch(/^[a-z]+( [a-z]+)*⏎?$/);
    const token = answer.locator(".tok").first();
    expect(await token.evaluate((e) => getComputedStyle(e).backgroundColor)).toMatch(/^rgb/);
    // Hover: its probability, logprob, and the alternatives the server returned.
    expect(await token.getAttribute("title")).toMatch(
      /^p [01]\.\d{3} {2}\(logprob -?\d[^)]*\)\nalternatives:\n {2}token_id:\d+ {2}p [01]\.\d{3}\n/,
    );
    // The tool call, paired with its result; the tool message names its call.
    expect(await histories.first().locator(".call").first().textContent()).toMatch(
      /^→ check_stock\(\{"fruit":"(apple|banana)"\}\)$/,
    );
    expect(await histories.first().locator(".result").first().textContent()).toBe("⇐ three left");
    expect(
      await histories.first().locator(".msg[data-role=tool] .meta").first().textContent(),
    ).toMatch(/^↳ result of check_stock/);
    // The sub-agent's own conversation, its Choice trained in that history.
    expect(await histories.nth(1).locator(".msg.trained").count()).toBe(1);
    const headings = await tab.locator("#trajectory .card h2").allTextContents();
    expect(headings).toEqual(expect.arrayContaining(["Metrics", "Logs"]));
    expect(await tab.locator("#trajectory").textContent()).not.toContain("token_id:");
    expect(await scrollWidth(tab)).toBeLessThanOrEqual(1400);
    await tab.screenshot({ path: path.join(OUTPUT, "report-trajectory.png"), fullPage: true });
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("compares two checkpoints on the same scenarios, with the val curve", async () => {
  const { tab, problems } = await open(runPage);
  try {
    await view(tab, "4");
    expect(await tab.locator("#val-chart polyline.mean").count()).toBe(1);
    expect(await tab.locator("#cmp-a option").allTextContents()).toEqual(["0", "2"]);
    expect(await tab.inputValue("#cmp-b")).not.toBe(await tab.inputValue("#cmp-a"));
    const rows = tab.locator("#compare .cmp-row");
    expect(await rows.locator("h3").allTextContents()).toEqual([
      expect.stringMatching(/^apple/),
      expect.stringMatching(/^banana/),
    ]);
    const sides = rows.first().locator(".cmp-side");
    expect(await sides.count()).toBe(2);
    expect(await sides.first().locator(".meta").first().textContent()).toMatch(
      /^step 0 · mean reward /,
    );
    expect(await sides.nth(1).locator(".meta").first().textContent()).toMatch(
      /^step 2 · mean reward /,
    );
    expect(await sides.nth(1).locator(".answer").count()).toBe(2);
    const a = (await sides.first().boundingBox())!;
    const b = (await sides.nth(1).boundingBox())!;
    expect(b.x).toBeGreaterThan(a.x + a.width - 1);
    await tab.screenshot({ path: path.join(OUTPUT, "report-checkpoints.png"), fullPage: true });
    await sides.nth(1).locator(".answer").first().click();
    await shown(tab, "#view-trajectory");
    await expect.poll(() => tab.locator("#traj-where").textContent()).toMatch(/^val step 2 · /);
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("fits a phone's width: no sideways scroll in any view, the compared answers stacked", async () => {
  const { tab, problems } = await open(runPage, PHONE);
  try {
    for (const key of ["1", "2", "4"] as const) {
      await view(tab, key);
      expect(await scrollWidth(tab)).toBeLessThanOrEqual(PHONE);
    }
    await view(tab, "2");
    await tab.locator("#groups .tcard").first().click();
    await shown(tab, "#view-trajectory");
    await shown(tab, "#trajectory .history");
    expect(await scrollWidth(tab)).toBeLessThanOrEqual(PHONE);
    await tab.screenshot({
      path: path.join(OUTPUT, "report-phone-trajectory.png"),
      fullPage: true,
    });
    await view(tab, "4");
    const sides = tab.locator("#compare .cmp-row").first().locator(".cmp-side");
    const a = (await sides.first().boundingBox())!;
    const b = (await sides.nth(1).boundingBox())!;
    expect(b.y).toBeGreaterThan(a.y + a.height - 1);
    await tab.screenshot({
      path: path.join(OUTPUT, "report-phone-checkpoints.png"),
      fullPage: true,
    });
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("runs no script from recorded content and shows odd fields as JSON, never a blank panel", async () => {
  const payloads = [
    `<img src=x onerror="window.__pwned='img'">`,
    `</script><script>window.__pwned='script'</script>`,
    `"><svg onload="window.__pwned='svg'">`,
    `javascript:window.__pwned='href'`,
    `{{constructor.constructor('window.__pwned=1')()}}`,
  ];
  const hostile = payloads.join(" ");
  const trajectory = {
    messages_and_choices: [
      { role: "system", content: hostile },
      { role: "user", content: { odd: hostile } },
      {
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: hostile,
          tool_calls: [
            { id: "c1", type: "function", function: { name: hostile, arguments: hostile } },
          ],
        },
        logprobs: {
          content: [
            {
              token: hostile,
              logprob: -0.3,
              bytes: null,
              top_logprobs: [{ token: hostile, logprob: -1 }],
            },
          ],
        },
      },
      { role: "tool", tool_call_id: "c1", content: hostile },
      {
        index: 0,
        finish_reason: "stop",
        message: { role: "assistant", content: "ok", tool_calls: hostile },
        logprobs: { content: [null] },
      },
    ],
    tools: { not: "a list", hostile },
    reward: 0.5,
    metadata: { scenario: hostile },
    logs: [hostile],
  };
  const other = {
    messages_and_choices: [{ role: "user", content: "q" }],
    reward: 1,
    metadata: { scenario: hostile },
  };
  const file = path.join(dir, "hostile.jsonl");
  await writeFile(
    file,
    `${JSON.stringify({ step: -1e308, trajectories: [trajectory, other], exceptions: [{ type: hostile, message: hostile }] })}\n${JSON.stringify({ step: 1e308, trajectories: [other] })}\n`,
  );
  const page = (
    await writeReport({ groupsFile: file, out: path.join(dir, "hostile.html"), title: hostile })
  ).path;
  const { tab, problems } = await open(page);
  try {
    await view(tab, "2");
    await tab.selectOption("#step-select", "0");
    await tab.locator("#groups .tcard").first().click();
    const traj = tab.locator("#trajectory");
    await expect.poll(() => traj.locator(".msg").count()).toBe(5);
    // Each odd field is shown as JSON where it belongs.
    const raws = await traj.locator("pre.raw").allTextContents();
    expect(raws.some((r) => r.includes('"odd"'))).toBe(true); // content that is not text
    expect(raws.some((r) => r.includes('"not": "a list"'))).toBe(true); // tools not a list
    expect(raws.some((r) => r.includes('"content": [\n    null\n  ]'))).toBe(true); // a null logprob entry
    expect(raws.filter((r) => r === JSON.stringify(hostile))).toHaveLength(1); // tool_calls a string
    expect(await traj.locator(".msg.trained .tok").first().getAttribute("title")).toBe(
      `p 0.741  (logprob -0.3000)\nalternatives:\n  ${JSON.stringify(hostile)}  p 0.368`,
    );
    // Recorded text stays text: no element, handler or script came from it.
    expect(await traj.textContent()).toContain(payloads[0]);
    expect(await tab.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(
      await tab
        .locator("main img, main [onerror], main [onload], main a[href^=javascript]")
        .count(),
    ).toBe(0);
    await tab.screenshot({ path: path.join(OUTPUT, "report-hostile.png"), fullPage: true });
    expect(await tab.locator("script").count()).toBe(3); // the index, one chunk, the viewer: nothing else
    for (const key of ["1", "4"] as const) {
      await view(tab, key);
      expect(await tab.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    }
    // Steps of ±1e308: every point of the chart drawn at finite coordinates.
    const circles = await tab
      .locator("#reward-chart circle")
      .evaluateAll((cs) => cs.map((c) => [c.getAttribute("cx"), c.getAttribute("cy")]));
    expect(circles).toHaveLength(2);
    for (const [x, y] of circles)
      expect(Number.isFinite(Number(x)) && Number.isFinite(Number(y))).toBe(true);
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});

it("says so when the run holds nothing", async () => {
  const page = (
    await writeReport({
      run: { steps: [], subtitle: "an empty model" },
      out: path.join(dir, "empty.html"),
    })
  ).path;
  const { tab, problems } = await open(page);
  try {
    expect(await tab.locator("#empty").textContent()).toContain("Nothing logged");
    for (const key of ["2", "3", "4"] as const) await view(tab, key);
    expect(await tab.locator("#compare").textContent()).toContain("evaluateCheckpoints");
    expect(problems).toEqual([]);
  } finally {
    await tab.close();
  }
});
