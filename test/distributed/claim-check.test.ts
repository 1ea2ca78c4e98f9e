import { mkdtemp, readdir, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Worker } from "bullmq";
import {
  DirectoryPayloadStore,
  GroupCollector,
  type PayloadStore,
  RedisPayloadStore,
  readProgress,
} from "trajectory-recorder/bullmq";
import { expect, it } from "vitest";
import { claimFixture } from "./claim-fixture.js";
import { agent, memoryLogger, until } from "./harness.js";

const f = claimFixture();

const MB5 = 5 * 1024 * 1024;

async function startCollector(options: { payloads?: PayloadStore; eventsMaxLen?: number } = {}) {
  const logger = memoryLogger();
  const c = await GroupCollector.start({ connection: f.h.redis.connection, logger, ...options });
  f.closers.push(() => c.close());
  return { collector: c, logger };
}

const collected = async (n: number) =>
  until(
    async () => (await readProgress({ connection: f.h.redis.connection })).groups.finished >= n,
  );

it("keeps a 5 MB trajectory out of the jobs: job data, results and events stay under 16 KB, and the collected group references the rollouts' own payloads, kept without a TTL", async () => {
  await f.enqueue(["big"], 2);
  await f.startWorker({ blob: MB5 });
  // Read Redis between the rollouts' completion and collection.
  await until(
    async () => (await readProgress({ connection: f.h.redis.connection })).rollouts.finished >= 2,
  );
  const payloadKeys = await f.redis.keys("bull:rollouts:tr:payload:*");
  expect(payloadKeys).toHaveLength(2);
  for (const key of payloadKeys) {
    expect(await f.redis.type(key)).toBe("list"); // in chunks, not one string
    expect(await f.redis.llen(key)).toBeGreaterThan(10);
    expect(await f.redis.pttl(key)).toBeGreaterThan(0);
  }
  const values = await f.values("bull:rollouts-*");
  expect(values.length).toBeGreaterThan(10);
  const largest = Math.max(...values.map((v) => v.bytes));
  expect(largest).toBeLessThanOrEqual(16 * 1024);

  await startCollector();
  await collected(1);
  const entry = (await f.redis.hget("bull:rollouts:tr:groups", "big")) as string;
  expect(entry.length).toBeLessThan(1024);
  const record = JSON.parse(entry);
  // Not copied: the record points at the payloads the workers wrote.
  expect(record.t.map((k: string) => `bull:rollouts:tr:payload:${k}`).sort()).toEqual(
    payloadKeys.sort(),
  );
  for (const key of payloadKeys) expect(await f.redis.pttl(key)).toBe(-1);
  const store = new RedisPayloadStore(f.redis, { prefix: "bull:rollouts:tr:payload:" });
  for (const key of record.t) {
    expect(JSON.parse((await store.get(key)) as string).metadata.blob).toHaveLength(MB5);
  }
  const p = await readProgress({ connection: f.h.redis.connection });
  expect(p.rollouts).toMatchObject({ finished: 2, failed: 0 });
  // Completed rollouts are removed, but the first (a re-run reads its payload).
  expect(await f.redis.exists("bull:rollouts-rollouts:big#1")).toBe(0);
  expect(await f.redis.exists("bull:rollouts-rollouts:big#0")).toBe(1);
});

it("caps each queue's events stream at eventsMaxLen while hundreds of rollouts pass", async () => {
  const ids = Array.from({ length: 40 }, (_, i) => `e${i}`);
  await f.enqueue(ids, 4, 50);
  await f.startWorker({ eventsMaxLen: 50 });
  await startCollector({ eventsMaxLen: 50 });
  await collected(40);
  // 160 rollouts, each at least added, waiting, active and completed: 640 events.
  const length = await f.redis.xlen("bull:rollouts-rollouts:events");
  // XADD MAXLEN ~ trims whole stream nodes (100 entries each).
  expect(length).toBeLessThanOrEqual(50 + 100);
  expect(await f.redis.hget("bull:rollouts-rollouts:meta", "opts.maxLenEvents")).toBe("50");
});

it("reads results of the old shape (the whole trajectory in the job result) during a rolling upgrade", async () => {
  await f.enqueue(["old"], 2);
  // A worker of the previous version: its result is the trajectory itself.
  const { recorder, say } = agent(f.h.tap.url);
  const old = new Worker(
    "rollouts-rollouts",
    async (job) => {
      const t = await recorder.rollout((tr) =>
        say("emulator/toy-bigram", tr, "red", job.data.index),
      );
      return t.toJSON();
    },
    { connection: { ...f.h.redis.connection, maxRetriesPerRequest: null }, prefix: "bull" },
  );
  f.closers.push(() => old.close());
  await startCollector();
  await collected(1);
  // Written to the payload store by the collector: Redis holds the record only.
  const record = JSON.parse((await f.redis.hget("bull:rollouts:tr:groups", "old")) as string);
  expect(record.t).toHaveLength(2);
  expect(record.rest.exceptions).toEqual([]);
  expect(await f.redis.keys("bull:rollouts:tr:payload:*")).toHaveLength(2);
});

it("writes payloads to a shared directory when given one, and keeps them out of the sweep once their group is collected", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "payloads-"));
  f.closers.push(() => rm(dir, { recursive: true, force: true }));
  const payloads = new DirectoryPayloadStore({ dir });
  await f.enqueue(["disk"], 3);
  await f.startWorker({ payloads, blob: 100_000 });
  await until(async () => (await readdir(dir)).length === 3);
  expect(await f.redis.keys("bull:rollouts:tr:payload:*")).toEqual([]);
  await startCollector({ payloads });
  await collected(1);
  const record = JSON.parse((await f.redis.hget("bull:rollouts:tr:groups", "disk")) as string);
  const bodies = await Promise.all(record.t.map((k: string) => payloads.get(k)));
  expect(bodies.map((b) => JSON.parse(b as string).metadata.blob.length)).toEqual([
    100_000, 100_000, 100_000,
  ]);
  // Moved to kept/, which the sweep does not enter.
  expect(await readdir(dir)).toEqual(["kept"]);
  expect(await readdir(path.join(dir, "kept"))).toHaveLength(3);
});

it("turns a payload that is gone into one of the group's exceptions, logged, and never hangs", async () => {
  await f.enqueue(["gone"], 2);
  await f.startWorker();
  await until(
    async () => (await readProgress({ connection: f.h.redis.connection })).rollouts.finished >= 2,
  );
  const [first] = await f.redis.keys("bull:rollouts:tr:payload:*");
  await f.redis.del(first as string);
  const { logger } = await startCollector({});
  await until(
    async () => (await readProgress({ connection: f.h.redis.connection })).groups.failed >= 1,
  );
  expect(logger.lines.join("\n")).toMatch(/is not in the payload store/);
});

it("RedisPayloadStore reads back what it wrote in small chunks, characters split across chunks included, with a TTL", async () => {
  const store = new RedisPayloadStore(f.redis, { prefix: "p:", chunkBytes: 5, ttlMs: 60_000 });
  const body = JSON.stringify({ text: "héllo wörld 🙂 ".repeat(20) });
  await store.put("a#0.x", body);
  expect(await f.redis.llen("p:a#0.x")).toBe(Math.ceil(Buffer.byteLength(body) / 5));
  expect(await f.redis.pttl("p:a#0.x")).toBeGreaterThan(50_000);
  expect(await store.get("a#0.x")).toBe(body);
  expect(await store.keep("a#0.x")).toBe(true);
  expect(await f.redis.pttl("p:a#0.x")).toBe(-1);
  expect(await store.keep("never")).toBe(false);
  await store.put("empty", "");
  expect(await store.get("empty")).toBe("");
  await store.delete("a#0.x");
  expect(await store.get("a#0.x")).toBeUndefined();
  await store.delete("never");
  expect(() => new RedisPayloadStore(f.redis, { prefix: "p:", ttlMs: 0 })).toThrow(
    /options\.ttlMs/,
  );
});

it("DirectoryPayloadStore keeps every key inside its directory and sweeps payloads older than ttlMs", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "payloads-"));
  f.closers.push(() => rm(dir, { recursive: true, force: true }));
  const store = new DirectoryPayloadStore({ dir: path.join(dir, "p"), ttlMs: 60_000 });
  await store.put("../escape/..", "one");
  await store.put("g#1.abc", "two");
  expect(await readdir(dir)).toEqual(["p"]);
  expect(await store.get("../escape/..")).toBe("one");
  expect(await store.get("missing")).toBeUndefined();
  const old = new Date(Date.now() - 120_000);
  const [first] = await readdir(path.join(dir, "p"));
  await utimes(path.join(dir, "p", first as string), old, old);
  expect(await store.sweep()).toBe(1);
  expect(await readdir(path.join(dir, "p"))).toHaveLength(1);
  // A kept payload is never swept, however old.
  const [left] = await readdir(path.join(dir, "p"));
  await utimes(path.join(dir, "p", left as string), old, old);
  const key = (await store.get("g#1.abc")) === "two" ? "g#1.abc" : "../escape/..";
  expect(await store.keep(key)).toBe(true);
  expect(await store.keep(key)).toBe(true);
  await utimes(path.join(dir, "p", "kept", left as string), old, old);
  expect(await store.sweep()).toBe(0);
  expect(await store.get(key)).toBeDefined();
  await store.delete(key);
  expect(await store.get(key)).toBeUndefined();
  expect(await store.keep("missing")).toBe(false);
});
