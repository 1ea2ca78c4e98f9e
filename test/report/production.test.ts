// The report of a production store: every trajectory a deployed service
// recorded, by session, with its feedback and whether it may be trained on,
// as data in the page (the browser draws it: ./production-chromium.test.ts),
// from `writeReport({ store })` and `trajectory-recorder report --store`.
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exitCodeOf } from "../../src/cli/main.js";
import { ReportSourceError, renderReport, writeReport } from "../../src/report/index.js";
import { TrajectoryStore } from "../../src/store/index.js";
import { inProcess } from "../cli/run.js";
import { HTML_COMMENT, type ProductionStore, productionStore } from "./production-fixture.js";

let fx: ProductionStore;
beforeAll(async () => {
  fx = await productionStore();
}, 60_000);
afterAll(async () => {
  await rm(fx.dir, { recursive: true, force: true });
});

/** The Production view's rows and conversations, as the page's script reads them. */
function productionData(html: string) {
  const rows = JSON.parse(
    /<script type="application\/json" id="production-index">([^<]*)<\/script>/.exec(html)![1]!,
  ) as any[];
  const chunks: any[] = [];
  for (const m of html.matchAll(
    /<script type="application\/json" id="prod-chunk-(\d+)">([^<]*)<\/script>/g,
  ))
    chunks[Number(m[1])] = JSON.parse(m[2]!);
  return { rows, conversations: chunks.flat() };
}

const texts = (conversation: any) =>
  conversation.histories[0].items.map((m: any) => `${m.role}: ${m.text ?? ""}`);

describe("writeReport({ store })", () => {
  it("puts every stored trajectory in the page with its session, model, calls, reward, feedback, eligibility and conversation", async () => {
    const out = path.join(fx.dir, "..", `${path.basename(fx.dir)}-report.html`);
    const written = await writeReport({ store: fx.dir, out });
    expect(written).toMatchObject({ production: 4, trajectories: 0, steps: 0 });
    const html = await readFile(out, "utf8");
    const { rows, conversations } = productionData(html);
    const byId = new Map(rows.map((r, i) => [r.id, { row: r, conversation: conversations[i] }]));
    expect(rows.map((r) => r.session).sort()).toEqual(["alice", "bob", "carol", "dave"]);

    const alice = byId.get(fx.ids.alice)!;
    expect(alice.row).toMatchObject({
      session: "alice",
      model: "shop-assistant",
      status: "finished",
      calls: 2,
      reward: 1,
      eligible: true,
      interrupted: false,
    });
    expect(Date.parse(alice.row.updated)).toBeGreaterThan(Date.now() - 600_000);
    expect(alice.row.feedback).toMatchObject([
      {
        n: 1,
        reward: 1,
        metrics: { helpful: true, minutes_saved: 4 },
        comment: HTML_COMMENT,
        source: "browser",
      },
      { n: 2, metrics: { resolved: true }, source: "ci" },
    ]);
    expect(typeof alice.row.feedback[0].created_at).toBe("string");
    // The conversation in the trajectory view's form: two calls, the Choices with their tokens.
    expect(texts(alice.conversation)).toEqual([
      "user: where is my parcel?",
      "assistant: answer 0 to where is my parcel?",
      "user: thanks!",
      "assistant: answer 1 to thanks!",
    ]);
    expect(alice.conversation.histories[0].items[1]).toMatchObject({ k: "c" });
    expect(alice.conversation.reward).toBe(1);

    expect(byId.get(fx.ids.bob)!.row).toMatchObject({
      reward: 0.25,
      eligible: false,
      feedback: [{ comment: "off-topic for a shop", eligible: false, source: "moderator" }],
    });
    expect(byId.get(fx.ids.carol)!.row).toMatchObject({
      reward: null,
      eligible: null,
      feedback: [],
    });
    const cut = byId.get(fx.ids.cut)!;
    expect(cut.row).toMatchObject({ session: "dave", interrupted: true, status: "open" });
    expect(texts(cut.conversation)).toEqual([
      "user: cancel my order",
      "assistant: Your order is bei",
    ]);
    expect(JSON.stringify(cut.conversation.logs)).toContain("interrupted");

    // Recorded text is data, never markup: the comment's tags appear only escaped.
    expect(html).not.toContain("<script>window.__pwned");
    expect(html).not.toContain("<img src=");
    expect(html).toContain('<a href="#production" data-view="production"');
    expect(html).toContain("4 production trajectories");
  });

  it("adds the store beside a run's own source, and leaves a page without one unchanged", async () => {
    const groups = path.join(fx.dir, "..", `${path.basename(fx.dir)}-groups.jsonl`);
    const trajectory = {
      messages_and_choices: [{ role: "user", content: "hi" }],
      reward: 0.5,
    };
    await writeFile(groups, `${JSON.stringify({ trajectories: [trajectory, trajectory] })}\n`);
    const out = path.join(fx.dir, "..", `${path.basename(fx.dir)}-both.html`);
    const written = await writeReport({ groupsFile: groups, store: fx.dir, out });
    expect(written).toMatchObject({ trajectories: 2, production: 4 });
    const html = await readFile(out, "utf8");
    expect(productionData(html).rows).toHaveLength(4);
    expect(html).toContain(`from ${groups} · from the store ${fx.dir}`);

    // As one of several sources: the store's trajectories join the compared runs' page.
    const both = await writeReport({ runs: [{ groupsFile: groups }, { store: fx.dir }], out });
    expect(both).toMatchObject({ trajectories: 2, production: 4 });

    const plain = renderReport({ steps: [{ step: 0, split: "train", groups: [] }] });
    expect(plain).not.toContain('id="production-index"');
    expect(plain).not.toContain('<a href="#production"');
  });

  it("refuses a missing directory without creating it, and a store another process holds, naming it", async () => {
    const missing = path.join(fx.dir, "no-such-store");
    const error = await writeReport({ store: missing, out: path.join(fx.dir, "x.html") }).catch(
      (e) => e,
    );
    expect(ReportSourceError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: "unreadable", source: missing });
    expect(error.message).toContain(`No trajectory store at ${missing}`);
    await expect(readFile(missing)).rejects.toMatchObject({ code: "ENOENT" });

    const held = await TrajectoryStore.open({ dir: fx.dir });
    try {
      const busy = await writeReport({ store: fx.dir, out: path.join(fx.dir, "x.html") }).catch(
        (e) => e,
      );
      expect(busy).toMatchObject({ reason: "in_use", source: fx.dir });
      expect(busy.message).toContain(`is in use by process ${process.pid}`);
      expect(exitCodeOf(busy)).toBe(2);
    } finally {
      await held.close();
    }
    await expect(writeReport({ out: "x.html" } as never)).rejects.toThrow(
      /expected exactly one of dataDir .* with or without store/,
    );
  });
});

describe("trajectory-recorder report --store", () => {
  it("writes the page of a store and says how many production trajectories it holds", async () => {
    const out = path.join(fx.dir, "..", `${path.basename(fx.dir)}-cli.html`);
    const r = await inProcess(["report", "--store", fx.dir, "--out", out, "--title", "shop"]);
    expect(r.stderr).not.toContain("Error");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`Wrote ${out}: 4 production trajectories.`);
    const html = await readFile(out, "utf8");
    expect(html).toContain("<title>shop</title>");
    expect(
      productionData(html)
        .rows.map((x) => x.id)
        .sort(),
    ).toEqual(Object.values(fx.ids).sort());
  });

  it("refuses --store with --serve, and an empty store exits 1 with a page that says so", async () => {
    const serve = await inProcess(["report", "--store", fx.dir, "--serve"]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain("--store goes with --out");
    const empty = path.join(fx.dir, "..", `${path.basename(fx.dir)}-empty`);
    await (await TrajectoryStore.open({ dir: empty })).close();
    const out = `${empty}.html`;
    const r = await inProcess(["report", "--store", empty, "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Nothing to report: the store ${empty} holds no trajectory.`);
    expect(productionData(await readFile(out, "utf8")).rows).toEqual([]);
    await rm(empty, { recursive: true, force: true });
  });
});
