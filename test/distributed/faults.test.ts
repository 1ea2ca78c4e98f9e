import { createServer } from "node:net";
import { Trajectory } from "trajectory-recorder";
import {
  InvalidGroupError,
  RedisUnavailableError,
  type RolloutContext,
  RolloutProducer,
  RolloutWorker,
  readProgress,
  TrainingCoordinator,
} from "trajectory-recorder/bullmq";
import { afterEach, beforeEach, expect, it } from "vitest";
import { agent, type Harness, inferenceNameOf, memoryLogger, startHarness } from "./harness.js";

let h: Harness;
const closers: (() => Promise<void>)[] = [];
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await h.close();
});

type Payload = { target: string };
// Long enough that a loaded machine never misses a lock renewal: no process
// dies in these tests, and a rollout run twice would show in the counts.
const fast = { lockDurationMs: 10_000, stalledIntervalMs: 5_000 };

async function cluster(
  rollout: (ctx: RolloutContext<Payload>) => unknown,
  coordinator: { trainEvery: number; maxExceptions?: number; expectTrained: number },
) {
  const logger = memoryLogger();
  const { recorder } = agent(h.tap.url);
  const worker = await RolloutWorker.start<Payload>({
    connection: h.redis.connection,
    recorder,
    logger,
    inferenceName: inferenceNameOf(h.model),
    concurrency: 8,
    ...fast,
    rollout,
  });
  closers.push(() => worker.close());
  let trained = 0;
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  const c = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: coordinator.trainEvery,
    maxExceptions: coordinator.maxExceptions ?? 0,
    pollIntervalMs: 100,
    logger,
    ...fast,
    onTrained: (r) => {
      trained += r.groups.length;
      if (trained >= coordinator.expectTrained) resolve();
    },
  });
  closers.push(() => c.close());
  const producer = new RolloutProducer<Payload>({ connection: h.redis.connection, attempts: 3 });
  closers.push(() => producer.close());
  return { worker, coordinator: c, producer, logger, trained: done };
}

it("records a rollout that throws in its group's exceptions; a group past maxExceptions fails, counted and logged, and is never trained", async () => {
  const { say } = agent(h.tap.url);
  const failing: Record<string, number[]> = { "g-one": [1], "g-two": [0, 1], "g-none": [] };
  let attempts = 0;
  const { producer, coordinator, logger, trained } = await cluster(
    async ({ groupId, index, model, trajectory, payload }) => {
      if (failing[groupId]?.includes(index)) {
        if (groupId === "g-one") attempts++;
        throw new TypeError(`tool broke at ${index}`);
      }
      await say(model(), trajectory, payload.target, index);
    },
    { trainEvery: 2, maxExceptions: 1, expectTrained: 2 },
  );
  const failed = new Promise<string>((resolve) =>
    coordinator.collector?.worker.on("failed", (job) => resolve(job?.id as string)),
  );
  await producer.enqueue(
    Object.keys(failing).map((id) => ({ id, payload: { target: "red" }, rollouts: 3 })),
  );
  await trained;
  expect(await failed).toBe("g-two");

  const sent = h.tap.jobs.flat();
  expect(sent.map((g) => g.metadata.group_id).sort()).toEqual(["g-none", "g-one"]);
  const one = sent.find((g) => g.metadata.group_id === "g-one");
  expect(one?.trajectories.map((t) => t.metadata.rollout_index)).toEqual([0, 2]);
  expect(one?.exceptions).toEqual([
    {
      type: "<class 'TypeError'>",
      message: "tool broke at 1",
      traceback: expect.stringMatching(/^TypeError: tool broke at 1\n\s+at /),
    },
  ]);
  // A rollout that throws is tried `attempts` (3) times before it counts as failed.
  expect(attempts).toBe(3);
  const p = await readProgress({ connection: h.redis.connection });
  expect(p.rollouts.failed).toBe(3);
  expect(p.groups).toMatchObject({ finished: 2, failed: 1, trained: 2 });
  expect(p.exceptions).toBe(1);
  expect(logger.lines).toContainEqual(
    expect.stringContaining(
      "group g-two failed: 2 of 3 rollouts failed, more than maxExceptions allows (1)",
    ),
  );
});

it("fails a rollout whose result is not a trajectory, naming what it was, without running it again", async () => {
  const { say } = agent(h.tap.url);
  const runs: string[] = [];
  const { producer, trained } = await cluster(
    async ({ groupId, index, model, trajectory, payload }) => {
      runs.push(`${groupId}#${index}`);
      if (index === 0) return { answer: 42 };
      if (index === 1) trajectory.metrics.score = "high" as never;
      await say(model(), trajectory, payload.target, index);
      return index === 3 ? new Trajectory({ ...trajectory, reward: 0.5 }) : undefined;
    },
    { trainEvery: 1, maxExceptions: 2, expectTrained: 1 },
  );
  await producer.enqueue([{ id: "g-odd", payload: { target: "cat" }, rollouts: 4 }]);
  await trained;

  expect(runs.sort()).toEqual(["g-odd#0", "g-odd#1", "g-odd#2", "g-odd#3"]);
  const [group] = h.tap.jobs.flat();
  expect(group?.trajectories.map((t) => t.reward)).toEqual([expect.any(Number), 0.5]);
  expect(group?.exceptions.map((e) => e.type)).toEqual([
    "<class 'RolloutResultError'>",
    "<class 'RolloutResultError'>",
  ]);
  expect(group?.exceptions[0]?.message).toBe(
    "Rollout g-odd#0: the rollout function returned an object of class Object; expected a Trajectory or nothing (the recorded trajectory is used then).",
  );
  expect(group?.exceptions[1]?.message).toMatch(
    /^Rollout g-odd#1: The trajectory is not valid ART JSON: metrics\.score: /,
  );
});

it("refuses groups that cannot be serialized, naming the field, before anything is enqueued", async () => {
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const ok = { id: "g-ok", payload: { target: "red" }, rollouts: 2 };
  const cases: [unknown, RegExp][] = [
    [{ id: "g-x", payload: { n: 10n }, rollouts: 2 }, /groups\[1\] cannot be serialized to JSON/],
    [{ id: "g-x", payload: cyclic, rollouts: 2 }, /groups\[1\] cannot be serialized to JSON/],
    [
      { id: "g-x", payload: { when: new Date(0) }, rollouts: 2 },
      /groups\[1\]\.payload\.when is a Date; it must be plain JSON/,
    ],
    [
      { id: "g-x", payload: { f: () => 1 }, rollouts: 2 },
      /groups\[1\]\.payload\.f is a function; it must be plain JSON/,
    ],
    [
      { id: "g-x", payload: { score: Number.NaN }, rollouts: 2 },
      /groups\[1\]\.payload\.score is NaN, not a finite number/,
    ],
    [{ id: "a:b", payload: {}, rollouts: 2 }, /groups\[1\]\.id: letters, digits/],
    [{ id: "42", payload: {}, rollouts: 2 }, /groups\[1\]\.id: not only digits/],
    [{ id: "g-x", payload: {}, rollouts: 0 }, /groups\[1\]\.rollouts: /],
    [
      { id: "g-x", payload: { list: [1, undefined] }, rollouts: 2 },
      /groups\[1\]\.payload\.list\.1 is undefined/,
    ],
    [ok, /groups\[1\]\.id "g-ok" appears twice/],
  ];
  for (const [bad, message] of cases) {
    const attempt = producer.enqueue([ok, bad] as never);
    await expect(attempt).rejects.toBeInstanceOf(InvalidGroupError);
    await expect(attempt).rejects.toThrow(message);
  }
  const p = await readProgress({ connection: h.redis.connection });
  expect(p.groups.queued + p.rollouts.queued).toBe(0);
});

it("says Redis is unreachable at start, naming the address, instead of waiting forever", async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  const connection = { host: "127.0.0.1", port };
  const message = new RegExp(`cannot reach Redis at 127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED`);
  const producer = new RolloutProducer({ connection, connectTimeoutMs: 300 });
  await expect(producer.enqueue([{ id: "g", payload: {}, rollouts: 1 }])).rejects.toBeInstanceOf(
    RedisUnavailableError,
  );
  await expect(producer.enqueue([{ id: "g", payload: {}, rollouts: 1 }])).rejects.toThrow(message);
  await producer.close();
  const connectTimeoutMs = 300;
  await expect(
    RolloutWorker.start({
      connection,
      connectTimeoutMs,
      recorder: agent(h.tap.url).recorder,
      rollout: () => {},
    }),
  ).rejects.toThrow(message);
  await expect(
    TrainingCoordinator.start({ connection, connectTimeoutMs, model: h.model, trainEvery: 1 }),
  ).rejects.toThrow(message);
  await expect(readProgress({ connection, connectTimeoutMs })).rejects.toThrow(message);
});

it("loses nothing acknowledged when Redis dies mid-run and comes back from its append-only file", async () => {
  const { say } = agent(h.tap.url);
  let started = 0;
  let allStarted!: () => void;
  const running = new Promise<void>((r) => {
    allStarted = r;
  });
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const { producer, logger, trained } = await cluster(
    async ({ model, trajectory, payload, index }) => {
      if (++started === 8) allStarted();
      await gate;
      await say(model(), trajectory, payload.target, index);
    },
    { trainEvery: 2, expectTrained: 4 },
  );
  const ids = ["g-a", "g-b", "g-c", "g-d"];
  await producer.enqueue(ids.map((id) => ({ id, payload: { target: "two" }, rollouts: 2 })));
  await running;

  await h.redis.kill();
  await expect(
    producer.enqueue([{ id: "g-late", payload: { target: "two" }, rollouts: 2 }]),
  ).rejects.toBeInstanceOf(RedisUnavailableError);
  await h.redis.start();
  open();
  await trained;

  const sent = h.tap.jobs.flat();
  expect(sent.map((g) => g.metadata.group_id).sort()).toEqual(ids);
  for (const g of sent) expect(g.trajectories.map((t) => t.metadata.rollout_index)).toEqual([0, 1]);
  expect(logger.lines).toContainEqual(expect.stringMatching(/lost Redis at 127\.0\.0\.1:\d+/));
  // Once per outage and process part, however often BullMQ and ioredis retried.
  const lost = (who: string) =>
    logger.lines.filter((l) => l.startsWith(`${who}: lost Redis`)).length;
  expect(lost("RolloutWorker")).toBe(1);
  expect(lost("TrainingCoordinator")).toBeLessThanOrEqual(1);
  expect(logger.lines.filter((l) => /ECONNREFUSED/.test(l) && !/lost Redis/.test(l))).toEqual([]);
  const p = await readProgress({ connection: h.redis.connection });
  expect(p.groups).toMatchObject({ finished: 4, trained: 4, failed: 0 });
}, 60_000);
