import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  FeedbackNotFoundError,
  StoreClosedError,
  StoreLockedError,
  TrajectoryStore,
} from "../../src/store/index.js";
import { keptLogger, tempDir, trajectory } from "./helpers.js";

const quiet = { warn() {} };

describe("TrajectoryStore", () => {
  it("gives back what was put, with its session, status and calls, and the latest state wins", async () => {
    const store = await TrajectoryStore.open({ dir: tempDir(), logger: quiet });
    store.put({
      id: "t1",
      session: "s1",
      status: "open",
      trajectory: trajectory(1),
      calls: 1,
      model: "m",
    });
    store.put({
      id: "t1",
      session: "s1",
      status: "finished",
      trajectory: trajectory(2),
      calls: 2,
      metadata: { user: "u" },
    });
    const got = store.get("t1");
    expect(got).toMatchObject({
      id: "t1",
      session: "s1",
      status: "finished",
      calls: 2,
      model: "m",
      interrupted: false,
      eligible: null,
      reward: null,
      feedback: [],
      metadata: { user: "u" },
    });
    expect(got?.trajectory).toEqual(trajectory(2));
    expect(Date.parse(got?.created_at ?? "")).toBeLessThanOrEqual(
      Date.parse(got?.updated_at ?? ""),
    );
    expect(store.has("t1")).toBe(true);
    expect(store.get("nope")).toBeUndefined();
    await store.close();
  });

  it("reads everything back after a close and an open", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir, logger: quiet });
    for (let i = 0; i < 20; i++)
      store.put({
        id: `t${i}`,
        session: `s${i % 3}`,
        status: "finished",
        trajectory: trajectory(i + 1),
        calls: i + 1,
      });
    store.addFeedback({ trajectory_id: "t3", reward: 1, idempotency_key: "k" });
    await store.close();
    expect(() => store.get("t1")).toThrow(StoreClosedError);

    const reopened = await TrajectoryStore.open({ dir, logger: quiet });
    expect(reopened.stats().trajectories).toBe(20);
    expect(reopened.get("t7")?.trajectory).toEqual(trajectory(8));
    expect(reopened.get("t3")?.trajectory.reward).toBe(1);
    // The idempotency key survives the reopen.
    expect(
      reopened.addFeedback({ trajectory_id: "t3", reward: 1, idempotency_key: "k" }).created,
    ).toBe(false);
    await reopened.close();
  });

  it("cuts a record whose write was cut short, never reading it as data", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir, logger: quiet });
    store.put({ id: "t1", session: null, status: "open", trajectory: trajectory(1), calls: 1 });
    await store.close();
    const file = path.join(dir, "seg-000001.jsonl");
    const whole = statSync(file).size;
    appendFileSync(file, '{"k":"put","id":"t2","session":null,"status":"open","calls":1,"traj');

    const { lines, logger } = keptLogger();
    const reopened = await TrajectoryStore.open({ dir, logger });
    expect(reopened.has("t2")).toBe(false);
    expect(reopened.get("t1")?.calls).toBe(1);
    expect(statSync(file).size).toBe(whole);
    expect(lines.join()).toMatch(/cut a record whose write was cut short/);
    // Appends continue after the last whole record.
    reopened.put({ id: "t3", session: null, status: "open", trajectory: trajectory(1), calls: 1 });
    await reopened.close();
    const text = readFileSync(file, "utf8");
    expect(
      text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).id),
    ).toEqual(["t1", "t3"]);
  });

  it("cuts a last line that ends but is not JSON", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir, logger: quiet });
    store.put({ id: "t1", session: null, status: "open", trajectory: trajectory(1), calls: 1 });
    await store.close();
    appendFileSync(path.join(dir, "seg-000001.jsonl"), '{"k":"put","id":\n');
    const reopened = await TrajectoryStore.open({ dir, logger: quiet });
    expect(reopened.stats().trajectories).toBe(1);
    await reopened.close();
  });

  it("lists summaries newest first, filtered, and the sessions", async () => {
    const store = await TrajectoryStore.open({ dir: tempDir(), logger: quiet });
    for (let i = 0; i < 6; i++)
      store.put({
        id: `t${i}`,
        session: i % 2 ? "odd" : "even",
        status: "open",
        trajectory: trajectory(1),
        calls: 1,
      });
    store.addFeedback({ trajectory_id: "t1", reward: 0.5 });
    store.addFeedback({ trajectory_id: "t2", reward: 1, eligible: false });
    expect(store.list().map((s) => s.id)).toEqual(["t2", "t1", "t5", "t4", "t3", "t0"]);
    expect(store.list({ session: "odd" }).map((s) => s.id)).toEqual(["t1", "t5", "t3"]);
    expect(store.list({ rewarded: true }).map((s) => s.id)).toEqual(["t2", "t1"]);
    expect(store.list({ eligible: true }).map((s) => s.id)).toEqual(["t1"]);
    expect(store.list({ rewarded: false, limit: 2 }).map((s) => s.id)).toEqual(["t5", "t4"]);
    expect(store.list({ since: Date.now() + 1000 })).toEqual([]);
    expect(store.list({ until: 0 })).toEqual([]);
    expect(store.list({ session: "odd" })[0]).toMatchObject({
      reward: 0.5,
      eligible: true,
      feedback: 1,
      calls: 1,
    });
    expect(store.sessions().map((s) => [s.session, s.trajectories])).toEqual([
      ["even", ["t2", "t4", "t0"]],
      ["odd", ["t1", "t5", "t3"]],
    ]);
    await store.close();
  });

  it("refuses a second store on the same directory in the same process", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir, logger: quiet });
    await expect(TrajectoryStore.open({ dir })).rejects.toThrow(StoreLockedError);
    await store.close();
    const again = await TrajectoryStore.open({ dir, logger: quiet });
    await again.close();
  });
});

describe("the store's bounds", () => {
  const put = (store: TrajectoryStore, id: string) =>
    store.put({
      id,
      session: null,
      status: "finished",
      trajectory: trajectory(1, "x".repeat(900)),
      calls: 1,
    });

  it("drops the oldest unrewarded trajectories first, counts them and says so", async () => {
    const dir = tempDir();
    const { lines, logger } = keptLogger();
    const store = await TrajectoryStore.open({
      dir,
      maxBytes: 40_000,
      segmentBytes: 8_000,
      logger,
    });
    for (let i = 0; i < 10; i++) put(store, `t${i}`);
    store.addFeedback({ trajectory_id: "t0", reward: 1 });
    store.addFeedback({ trajectory_id: "t1", reward: 0 });
    // Rewrite the newer ones often: most of the files become old states.
    for (let round = 0; round < 5; round++) for (let i = 5; i < 10; i++) put(store, `t${i}`);
    for (let i = 10; i < 40; i++) put(store, `t${i}`);

    const stats = store.stats();
    expect(stats.dropped).toBeGreaterThan(0);
    expect(stats.bytes).toBeLessThanOrEqual(40_000);
    expect(stats.trajectories + stats.dropped).toBe(40);
    // The rewarded two outlive the unrewarded ones written after them.
    expect(store.has("t0")).toBe(true);
    expect(store.has("t1")).toBe(true);
    expect(store.has("t2")).toBe(false);
    expect(store.has("t39")).toBe(true);
    expect(lines.join("\n")).toMatch(
      /dropped \d+ trajector(y|ies) \(\d+ without a reward, 0 with one; oldest first\) to keep .* under maxBytes/,
    );
    await store.close();

    // What was dropped stays dropped, the counter too; what was kept reads back.
    const reopened = await TrajectoryStore.open({
      dir,
      maxBytes: 40_000,
      segmentBytes: 8_000,
      logger,
    });
    expect(reopened.stats()).toMatchObject({
      trajectories: stats.trajectories,
      dropped: stats.dropped,
    });
    expect(reopened.get("t0")?.trajectory.reward).toBe(1);
    expect(reopened.get("t39")?.calls).toBe(1);
    expect(() => reopened.addFeedback({ trajectory_id: "t2", reward: 1 })).toThrow(
      FeedbackNotFoundError,
    );
    await reopened.close();
  });

  it("compacts old states away before dropping anything", async () => {
    const dir = tempDir();
    const { lines, logger } = keptLogger();
    const store = await TrajectoryStore.open({
      dir,
      maxBytes: 30_000,
      segmentBytes: 4_000,
      logger,
    });
    for (let round = 0; round < 40; round++) for (let i = 0; i < 5; i++) put(store, `t${i}`);
    store.addFeedback({ trajectory_id: "t0", reward: 1, idempotency_key: "k0" });
    for (let round = 0; round < 40; round++) put(store, "t1");
    expect(store.stats()).toMatchObject({ trajectories: 5, dropped: 0 });
    expect(store.stats().bytes).toBeLessThanOrEqual(30_000);
    expect(lines).toEqual([]);
    await store.close();
    const reopened = await TrajectoryStore.open({
      dir,
      maxBytes: 30_000,
      segmentBytes: 4_000,
      logger,
    });
    expect(reopened.get("t0")?.trajectory.reward).toBe(1);
    expect(
      reopened.addFeedback({ trajectory_id: "t0", reward: 1, idempotency_key: "k0" }).created,
    ).toBe(false);
    await reopened.close();
  });

  it("loses nothing and doubles nothing when a compaction was killed before it deleted its sources", async () => {
    const dir = tempDir();
    const store = await TrajectoryStore.open({ dir, logger: quiet });
    put(store, "t1");
    store.addFeedback({ trajectory_id: "t1", reward: 1, idempotency_key: "k" });
    put(store, "t2");
    store.beginCall("t2", 2, { messages: [] });
    await store.close();
    // What a kill between the copy and the delete leaves: every record twice.
    const first = readFileSync(path.join(dir, "seg-000001.jsonl"));
    writeFileSync(path.join(dir, "seg-000002.jsonl"), first);

    const reopened = await TrajectoryStore.open({ dir, logger: quiet });
    expect(reopened.stats().trajectories).toBe(2);
    expect(reopened.get("t1")?.feedback).toHaveLength(1);
    expect(reopened.get("t1")?.trajectory.reward).toBe(1);
    // The begun call is recovered once.
    expect(reopened.get("t2")?.trajectory.logs).toHaveLength(1);
    await reopened.close();
  });

  it("drops what passed maxAgeMs, with a line naming the bound", async () => {
    const { lines, logger } = keptLogger();
    const store = await TrajectoryStore.open({ dir: tempDir(), maxAgeMs: 50, logger });
    put(store, "old");
    await new Promise((r) => setTimeout(r, 80));
    put(store, "new");
    expect(store.has("old")).toBe(false);
    expect(store.has("new")).toBe(true);
    expect(store.stats().dropped).toBe(1);
    expect(lines.join()).toMatch(/dropped 1 trajectory not written or given feedback for maxAgeMs/);
    await store.close();
  });
});
