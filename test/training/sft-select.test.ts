// SFT from the best: a real store with production sessions and late
// feedback gives exactly the rows a user would train on.
import { describe, expect, it } from "vitest";
import {
  sftRowsFromStore,
  sftRowsFromTrajectories,
  sftRowsOfTrajectory,
} from "../../src/training/index.js";
import { tempDir } from "../store/helpers.js";
import {
  choice,
  OTHER_TOOLS,
  POLICY,
  plain,
  productionStore,
  rowOf,
  traj,
  twoTurns,
  user,
} from "./sft-fixture.js";

describe("sftRowsFromStore", () => {
  it("gives one row per history branch of the well-rated, eligible sessions, cut before unfinished generations", async () => {
    const store = await productionStore(tempDir());
    const { rows, counts, ids } = sftRowsFromStore(store, { minReward: 0.5, eligible: true });
    await store.close();
    expect(rows).toEqual([
      rowOf(user("q1"), plain("a1"), user("q2"), plain("a2")),
      rowOf(user("s1"), plain("b1")),
      { messages: [user("s1"), plain("b1"), user("s2"), plain("b2")], tools: OTHER_TOOLS },
      rowOf(user("c1"), plain("c-a1")),
      rowOf(user("l1"), plain("l-a1")),
      rowOf(user("p1"), plain("p-a1")),
      rowOf(user("q1"), plain("from gpt")),
    ]);
    expect(ids).toEqual([
      "good",
      "same-as-good",
      "split",
      "cut-stream",
      "length",
      "pro",
      "crash",
      "other-model",
    ]);
    expect(counts).toEqual({
      considered: 11,
      selected: 8,
      rows: 7,
      // same-as-good, and the crashed session's turns before the cut call.
      duplicates: 2,
      dropped: {
        window: 0,
        ineligible: 2,
        reward: 1,
        model: 0,
        metadata: 0,
        failedGeneration: 3,
        noAssistantTurn: 0,
      },
    });
  });

  it("selects by serving model (any checkpoint, or one), metadata and time window", async () => {
    const store = await productionStore(tempDir());
    const anyStep = sftRowsFromStore(store, { model: POLICY, minReward: 1 });
    expect(anyStep.ids).not.toContain("other-model");
    expect(anyStep.ids).toContain("good");
    expect(anyStep.counts.dropped.model).toBe(1);
    expect(sftRowsFromStore(store, { model: `${POLICY}:step4` }).counts.selected).toBe(0);
    expect(sftRowsFromStore(store, { model: `${POLICY}:step3` }).ids).toContain("good");
    const pro = sftRowsFromStore(store, { metadata: { tier: "pro", turns: "1" } });
    expect(pro.ids).toEqual(["pro"]);
    expect(pro.counts.dropped.metadata).toBe(9);
    const future = sftRowsFromStore(store, { since: Date.now() + 60_000 });
    expect(future.counts).toMatchObject({ selected: 0, rows: 0, dropped: { window: 11 } });
    const past = sftRowsFromStore(store, { until: new Date(Date.now() + 60_000) });
    expect(past.counts.dropped.window).toBe(0);
    await store.close();
  });

  it("without filters, still leaves out what a feedback marked not eligible", async () => {
    const store = await productionStore(tempDir());
    const all = sftRowsFromStore(store);
    await store.close();
    expect(all.ids).not.toContain("ineligible");
    expect(all.ids).toContain("unrated");
    expect(all.counts.dropped.ineligible).toBe(1);
  });

  it("refuses a bad filter naming the field", async () => {
    const store = await productionStore(tempDir());
    expect(() => sftRowsFromStore(store, { minReward: Number.NaN })).toThrow(/filter\.minReward/);
    expect(() => sftRowsFromStore(store, { since: new Date("nope") })).toThrow(/filter\.since/);
    expect(() => sftRowsFromStore(store, { model: "" })).toThrow(/filter\.model/);
    expect(() =>
      sftRowsFromStore(store, { metadata: { tier: { a: 1 } as unknown as string } }),
    ).toThrow(/filter\.metadata\.tier/);
    await store.close();
  });
});

describe("sftRowsFromTrajectories (logged groups)", () => {
  it("makes the same rows from trajectories, by reward and metadata", () => {
    const a = { ...twoTurns(), reward: 1, metadata: { scenario: "x" } };
    const b = { ...traj([user("z"), choice("low")]), reward: 0 };
    const { rows, counts } = sftRowsFromTrajectories([a, b, a], { minReward: 1 });
    expect(rows).toEqual([rowOf(user("q1"), plain("a1"), user("q2"), plain("a2"))]);
    expect(counts).toMatchObject({
      considered: 3,
      selected: 2,
      duplicates: 1,
      dropped: { reward: 1 },
    });
    expect(() => sftRowsFromTrajectories([a], { eligible: true } as never)).toThrow(
      /filter\.eligible/,
    );
  });

  it("keeps the turns before a generation the recorder named as failed, and nothing after it", () => {
    const t = traj([user("q"), plain("cut off"), user("again"), choice("fine")], {
      logs: ["completion error: socket hang up (kept as a plain message, not trained on)"],
    });
    expect(sftRowsOfTrajectory(t)).toEqual({ rows: [], failedGenerations: 1, noAssistantTurn: 0 });
    // Without such a log line, a plain assistant message is the application's own context.
    const context = traj([user("q"), plain("Hi! How can I help?"), user("again"), choice("fine")]);
    expect(sftRowsOfTrajectory(context).rows).toHaveLength(1);
  });
});
