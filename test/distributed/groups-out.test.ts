// Collected groups wait for a batch as small records in Redis, their
// trajectories in the payload store; the coordinator reads them back just
// before training, deletes them once trained, and its own keys expire.
import {
  GroupCollector,
  type PayloadStore,
  RedisPayloadStore,
  readProgress,
  TrainingCoordinator,
} from "trajectory-recorder/bullmq";
import { expect, it } from "vitest";
import { claimFixture } from "./claim-fixture.js";
import { memoryLogger, until } from "./harness.js";

const f = claimFixture();

const fast = { lockDurationMs: 10_000, stalledIntervalMs: 5_000 };
/** Each trajectory's size, well over the 16 KB a Redis value may hold. */
const BLOB = 300_000;
const PAYLOAD = "bull:rollouts:tr:payload:";
const progress = () => readProgress({ connection: f.h.redis.connection });

/** The largest value of every Redis key but the payload store's, with where it is. */
async function largestValue(): Promise<{ where: string; bytes: number }> {
  let max = { where: "", bytes: 0 };
  for (const v of await f.values("*"))
    if (!v.key.startsWith(PAYLOAD) && v.bytes > max.bytes)
      max = { where: v.field ? `${v.key} ${v.field}` : v.key, bytes: v.bytes };
  return max;
}

it("keeps waiting groups' trajectories out of Redis (every value ≤ 16 KB), trains them from the payload store, then deletes their payloads and lets the marks expire", async () => {
  await f.enqueue(["a", "b", "c"], 2);
  await f.startWorker({ blob: BLOB });
  const collector = await GroupCollector.start({
    connection: f.h.redis.connection,
    logger: memoryLogger(),
  });
  f.closers.push(() => collector.close());
  await until(async () => (await progress()).groups.collected === 3, "3 groups waiting");
  // 6 trajectories of 300 KB wait: all in the payload store, none elsewhere.
  const largest = await largestValue();
  expect(largest.bytes, largest.where).toBeLessThanOrEqual(16 * 1024);
  expect(await f.redis.keys(`${PAYLOAD}*`)).toHaveLength(6);
  for (const key of await f.redis.keys(`${PAYLOAD}*`)) expect(await f.redis.pttl(key)).toBe(-1);

  const trained: number[] = [];
  const coordinator = await TrainingCoordinator.start({
    connection: f.h.redis.connection,
    model: f.h.model,
    trainEvery: { groups: 3 },
    collect: false,
    pollIntervalMs: 100,
    retentionMs: 3000,
    logger: memoryLogger(),
    onTrained: (r) => trained.push(r.step),
    ...fast,
  });
  f.closers.push(() => coordinator.close());
  await until(async () => (await progress()).groups.trained === 3, "trained");
  // The job got the whole trajectories, read back from the store.
  const sent = f.h.tap.jobs.flat();
  expect(sent).toHaveLength(3);
  for (const g of sent) {
    for (const t of g.trajectories)
      expect((t.metadata as { blob?: string }).blob).toHaveLength(BLOB);
  }
  await until(async () => (await f.redis.keys(`${PAYLOAD}*`)).length === 0, "payloads deleted");
  expect(await f.redis.hget("bull:rollouts:tr:groups", "a")).toBe("trained:1");

  // The coordinator's keys: live ones refreshed to the retention, finished ones timed.
  for (const key of ["stats", "step", "coordinator-mode", "groups", "batches", "expiring-groups"]) {
    await until(
      async () => (await f.redis.pttl(`bull:rollouts:tr:${key}`)) > 0,
      `${key} has a TTL`,
    );
    expect(await f.redis.pttl(`bull:rollouts:tr:${key}`)).toBeLessThanOrEqual(3000);
  }
  // Past the retention, the marks and the batch record are gone.
  await until(async () => (await f.redis.exists("bull:rollouts:tr:groups")) === 0, "marks expired");
  expect(await f.redis.exists("bull:rollouts:tr:batches")).toBe(0);
  expect(trained).toEqual([1]);
}, 60_000);

it("a group collected while others' marks are timed keeps the groups hash without a TTL", async () => {
  await f.enqueue(["x"], 2);
  await f.startWorker({ blob: 1000 });
  const coordinator = await TrainingCoordinator.start({
    connection: f.h.redis.connection,
    model: f.h.model,
    trainEvery: { groups: 1 },
    pollIntervalMs: 100,
    retentionMs: 60_000,
    logger: memoryLogger(),
    ...fast,
  });
  f.closers.push(() => coordinator.close());
  await until(async () => (await progress()).groups.trained === 1, "trained");
  await until(async () => (await f.redis.pttl("bull:rollouts:tr:groups")) > 0, "timed");
  // A new group waits: the hash it lives in must not expire under it.
  await coordinator.close();
  f.closers.pop();
  await f.enqueue(["y"], 2);
  const collector = await GroupCollector.start({ connection: f.h.redis.connection });
  f.closers.push(() => collector.close());
  await until(async () => (await progress()).groups.collected === 1, "collected");
  expect(await f.redis.pttl("bull:rollouts:tr:groups")).toBe(-1);
}, 60_000);

it("a group whose payloads expired before training is counted as failed and logged, and its batch trains the rest", async () => {
  await f.enqueue(["keep", "lose"], 2);
  await f.startWorker({ blob: 1000 });
  // A store without keep(): payloads expire on their own TTL even once collected.
  const plain = new RedisPayloadStore(f.redis, { prefix: PAYLOAD });
  const payloads: PayloadStore = {
    put: (k, b) => plain.put(k, b),
    get: (k) => plain.get(k),
    delete: (k) => plain.delete(k),
  };
  const collector = await GroupCollector.start({ connection: f.h.redis.connection, payloads });
  f.closers.push(() => collector.close());
  await until(async () => (await progress()).groups.collected === 2, "collected");
  const record = JSON.parse((await f.redis.hget("bull:rollouts:tr:groups", "lose")) as string);
  await f.redis.del(`${PAYLOAD}${record.t[0]}`);
  const logger = memoryLogger();
  const coordinator = await TrainingCoordinator.start({
    connection: f.h.redis.connection,
    model: f.h.model,
    trainEvery: { groups: 2 },
    collect: false,
    payloads,
    pollIntervalMs: 100,
    logger,
    ...fast,
  });
  f.closers.push(() => coordinator.close());
  await until(async () => (await progress()).groups.trained === 1, "the other group trained");
  const p = await progress();
  expect(p.groups).toMatchObject({ trained: 1, failed: 1, collected: 0, training: 0 });
  expect(logger.lines.join("\n")).toMatch(
    /group lose cannot be trained.*gone from the payload store/,
  );
  expect(await f.redis.hget("bull:rollouts:tr:groups", "lose")).toBe("lost");
  await until(async () => (await f.redis.keys(`${PAYLOAD}*`)).length === 0, "payloads deleted");
}, 60_000);
