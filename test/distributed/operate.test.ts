// Operating a run: it finishes (drain), progress puts every group in exactly
// one state and names them, and a Redis that is late, frozen or silent gives
// our error within connectTimeoutMs instead of a hang.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  GROUP_STATES,
  RedisUnavailableError,
  RolloutProducer,
  RolloutWorker,
  readProgress,
  TrainingCoordinator,
  unhanded,
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

const fast = { lockDurationMs: 10_000, stalledIntervalMs: 5_000 };

it("drain() trains the last partial batch; every group is counted in exactly one state, with its id; groups without reward signal are released", async () => {
  const { recorder, say } = agent(h.tap.url);
  const worker = await RolloutWorker.start<{ target: string }>({
    connection: h.redis.connection,
    recorder,
    logger: memoryLogger(),
    inferenceName: inferenceNameOf(h.model),
    concurrency: 4,
    ...fast,
    rollout: async ({ payload, trajectory, model, index }) => {
      if (payload.target === "broken") throw new Error("tool crashed");
      await say(model(), trajectory, payload.target, index);
      if (payload.target === "flat") trajectory.reward = 0.5; // all equal: nothing to learn
    },
  });
  closers.push(() => worker.close());
  const logger = memoryLogger();
  const coordinator = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: 3,
    pollIntervalMs: 100,
    logger,
    ...fast,
  });
  closers.push(() => coordinator.close());
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  const ids = ["g-red", "g-cat", "g-flat", "g-broken"];
  await producer.enqueue(ids.map((id) => ({ id, payload: { target: id.slice(2) }, rollouts: 3 })));

  const p = await coordinator.drain();
  // Two groups with a signal: fewer than trainEvery (3), trained all the same.
  expect(h.tap.jobs).toHaveLength(1);
  expect(
    h.tap.jobs
      .flat()
      .map((g) => g.metadata.group_id)
      .sort(),
  ).toEqual(["g-cat", "g-red"]);
  expect(p).toMatchObject({ idle: true, drained: true, trainingJobs: 1 });
  expect(p.groups).toMatchObject({ trained: 2, noSignal: 1, failed: 1, total: 4 });
  const states = GROUP_STATES.map((s) => p.groups[s]);
  expect(states.reduce((a, b) => a + b, 0)).toBe(ids.length);
  expect(logger.lines).toContainEqual(expect.stringContaining("released 1 group(s)"));

  // From any process: the ids in each state.
  const withIds = await readProgress({ connection: h.redis.connection, ids: true });
  expect(withIds.ids).toMatchObject({
    trained: ["g-cat", "g-red"],
    noSignal: ["g-flat"],
    failed: ["g-broken"],
    queued: [],
    running: [],
    collected: [],
    training: [],
  });
  expect(
    Object.values(withIds.ids ?? {})
      .flat()
      .sort(),
  ).toEqual([...ids].sort());
  expect(await unhanded({ connection: h.redis.connection })).toEqual({
    uncertain: [],
    failed: [],
    trainingFailed: [],
  });
}, 60_000);

it("a training job that fails leaves its groups in trainingFailed, listed; the run still drains and retrain sends them again", async () => {
  const { recorder, say } = agent(h.tap.url);
  const worker = await RolloutWorker.start<{ target: string }>({
    connection: h.redis.connection,
    recorder,
    logger: memoryLogger(),
    inferenceName: inferenceNameOf(h.model),
    ...fast,
    rollout: ({ payload, trajectory, model, index }) =>
      say(model(), trajectory, payload.target, index),
  });
  closers.push(() => worker.close());
  h.tap.refuseNextJob();
  const coordinator = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: 2,
    pollIntervalMs: 100,
    logger: memoryLogger(),
    ...fast,
  });
  closers.push(() => coordinator.close());
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  await producer.enqueue(
    ["g-a", "g-b"].map((id) => ({ id, payload: { target: "cat" }, rollouts: 2 })),
  );
  const p = await coordinator.drain();
  expect(p.groups).toMatchObject({ trainingFailed: 2, trained: 0, total: 2 });
  expect(p.failedTrainingJobs).toBe(1);
  expect((await coordinator.unhanded()).trainingFailed).toEqual(["g-a", "g-b"]);

  expect(await coordinator.retrain(["g-a", "g-b", "g-unknown"])).toEqual(["g-a", "g-b"]);
  const again = await coordinator.drain();
  expect(again.groups).toMatchObject({ trainingFailed: 0, trained: 2, total: 2 });
}, 60_000);

it("a job whose creation answer is lost is never trained again on our own: its groups are reported uncertain, and retrain sends them once asked", async () => {
  const { recorder, say } = agent(h.tap.url);
  const worker = await RolloutWorker.start<{ target: string }>({
    connection: h.redis.connection,
    recorder,
    logger: memoryLogger(),
    inferenceName: inferenceNameOf(h.model),
    ...fast,
    rollout: ({ payload, trajectory, model, index }) =>
      say(model(), trajectory, payload.target, index),
  });
  closers.push(() => worker.close());
  h.tap.loseNextJobAnswer();
  const logger = memoryLogger();
  const coordinator = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: 2,
    pollIntervalMs: 100,
    logger,
    ...fast,
  });
  closers.push(() => coordinator.close());
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  await producer.enqueue(
    ["g-a", "g-b"].map((id) => ({ id, payload: { target: "cat" }, rollouts: 2 })),
  );
  const p = await coordinator.drain();
  // The service got (and ran) the job once; the coordinator did not send it again.
  expect(h.tap.jobs).toHaveLength(1);
  expect(p.groups).toMatchObject({ uncertain: 2, trained: 0, training: 0, total: 2 });
  expect((await unhanded({ connection: h.redis.connection })).uncertain).toEqual(["g-a", "g-b"]);
  expect(logger.lines).toContainEqual(
    expect.stringMatching(
      /batch 1 \(2 groups: g-[ab], g-[ab]\) was being sent to the service when/,
    ),
  );
  expect(await coordinator.retrain(["g-a", "g-b"])).toEqual(["g-a", "g-b"]);
  const again = await coordinator.drain();
  expect(h.tap.jobs).toHaveLength(2);
  expect(again.groups).toMatchObject({ uncertain: 0, trained: 2, total: 2 });
}, 60_000);

it("waits connectTimeoutMs for a Redis that starts late", async () => {
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), "redis-late-"));
  const late = setTimeout(() => {
    const proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1"], {
      cwd: dir,
      stdio: "ignore",
    });
    closers.push(async () => {
      const gone = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGKILL");
      await gone;
      await rm(dir, { recursive: true, force: true });
    });
  }, 1000);
  closers.push(async () => clearTimeout(late));
  const producer = new RolloutProducer({
    connection: { host: "127.0.0.1", port },
    connectTimeoutMs: 15_000,
  });
  closers.push(() => producer.close());
  const out = await producer.enqueue([{ id: "g-late", payload: {}, rollouts: 1 }]);
  expect(out.added).toEqual(["g-late"]);
}, 30_000);

it("a Redis that accepts and never answers, or is frozen, gives RedisUnavailableError within connectTimeoutMs; a URL's password stays out of it", async () => {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });
  const { port } = silent.address() as { port: number };
  const connectTimeoutMs = 800;
  const connection = { host: "127.0.0.1", port };
  const bounded = async (what: Promise<unknown>) => {
    const started = Date.now();
    const error = await what.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(String((error as Error).message)).toContain(`127.0.0.1:`);
    expect(Date.now() - started).toBeLessThan(connectTimeoutMs + 4000);
    return error as Error;
  };
  await bounded(
    RolloutWorker.start({
      connection,
      connectTimeoutMs,
      recorder: agent(h.tap.url).recorder,
      rollout: () => {},
    }),
  );
  const producer = new RolloutProducer({ connection, connectTimeoutMs });
  closers.push(() => producer.close());
  await bounded(producer.enqueue([{ id: "g", payload: {}, rollouts: 1 }]));
  await bounded(readProgress({ connection, connectTimeoutMs }));

  // A real redis-server, frozen with SIGSTOP.
  h.redis.pause();
  try {
    const frozen = { connection: h.redis.connection, connectTimeoutMs };
    await bounded(readProgress(frozen));
    await bounded(
      RolloutWorker.start({ ...frozen, recorder: agent(h.tap.url).recorder, rollout: () => {} }),
    );
    await bounded(new RolloutProducer(frozen).enqueue([{ id: "g", payload: {}, rollouts: 1 }]));
  } finally {
    h.redis.resume();
  }

  // A URL given as host: the address is named, the password is not.
  const error = await bounded(
    readProgress({
      connection: { host: `redis://user:s3cret-pw@127.0.0.1:${port}` },
      connectTimeoutMs,
    }),
  );
  expect(error.message).not.toContain("s3cret-pw");
  expect(error.message).toContain(`127.0.0.1:${port}`);
}, 60_000);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

it("TrainingCoordinator.start resolves only once it holds the lock: a second one waits for the first to close", async () => {
  const options = {
    connection: h.redis.connection,
    model: h.model,
    trainEvery: 2,
    pollIntervalMs: 100,
    lockTtlMs: 2000,
    logger: memoryLogger(),
    ...fast,
  };
  const first = await TrainingCoordinator.start(options);
  let secondStarted = false;
  const second = TrainingCoordinator.start(options).then((c) => {
    secondStarted = true;
    closers.push(() => c.close());
    return c;
  });
  // The second has asked for the lock by now (its line is logged), and is still waiting.
  const logged = options.logger.lines;
  for (let i = 0; i < 100 && !logged.some((l) => l.includes("holds the lock")); i++) {
    await readProgress({ connection: h.redis.connection });
  }
  expect(logged).toContainEqual(expect.stringContaining("holds the lock; waiting for it"));
  expect(secondStarted).toBe(false);
  await first.close();
  await second;
  expect(secondStarted).toBe(true);
}, 60_000);
