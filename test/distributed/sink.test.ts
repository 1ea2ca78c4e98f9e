import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { InvalidArgumentError, type TrajectoryGroup, TrajectoryShipper } from "trajectory-recorder";
import {
  handAgain,
  RolloutProducer,
  RolloutWorker,
  readProgress,
  TrainingCoordinator,
  unhanded,
} from "trajectory-recorder/bullmq";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Child, runChild } from "../e2e/child.js";
import {
  agent,
  type Harness,
  inferenceNameOf,
  memoryLogger,
  startHarness,
  until,
} from "./harness.js";

let h: Harness;
let spoolDir: string;
const closers: (() => Promise<void>)[] = [];
const children: Child[] = [];
beforeEach(async () => {
  h = await startHarness();
  spoolDir = await mkdtemp(path.join(tmpdir(), "tr-sink-"));
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (process.env.DEBUG_DISTRIBUTED) console.log(`--- ${c.proc.pid}\n${c.output()}`);
    if (c.proc.exitCode === null) {
      c.proc.kill("SIGKILL");
      await c.exit;
    }
  }
  for (const close of closers.splice(0).reverse()) await close();
  await h.close();
  await rm(spoolDir, { recursive: true, force: true });
});

const fast = { lockDurationMs: 10_000, stalledIntervalMs: 5_000 };

async function startWorker() {
  const { recorder, say } = agent(h.tap.url);
  const worker = await RolloutWorker.start<{ target: string }>({
    connection: h.redis.connection,
    recorder,
    logger: memoryLogger(),
    inferenceName: inferenceNameOf(h.model),
    concurrency: 8,
    ...fast,
    rollout: ({ payload, trajectory, model, index }) =>
      say(model(), trajectory, payload.target, index),
  });
  closers.push(() => worker.close());
  return worker;
}

async function enqueue(ids: string[], rollouts = 3) {
  const producer = new RolloutProducer({ connection: h.redis.connection });
  await producer.enqueue(ids.map((id) => ({ id, payload: { target: id.slice(2) }, rollouts })));
  await producer.close();
}

const progress = () => readProgress({ connection: h.redis.connection });
const sentIds = () => h.tap.jobs.flat().map((g) => g.metadata.group_id as string);

it("hands each collected group to a TrajectoryShipper once; the shipper trains every N and workers get its steps", async () => {
  const worker = await startWorker();
  const shipper = new TrajectoryShipper({
    model: h.model,
    spoolDir,
    trainEvery: { groups: 2, pollIntervalMs: 100 },
    flushOnExit: false,
  });
  closers.push(async () => void (await shipper.close()));
  const coordinator = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    sink: shipper,
    pollIntervalMs: 100,
    logger: memoryLogger(),
    ...fast,
  });
  closers.push(() => coordinator.close());
  const ids = ["g-red", "g-cat", "g-apple", "g-two"];
  await enqueue(ids);
  await until(() => shipper.stats().trainingJobs === 2, "two training jobs");
  await until(async () => (await progress()).step === 2, "step 2 published");

  expect(sentIds().sort()).toEqual([...ids].sort());
  expect(h.tap.jobs).toHaveLength(2);
  for (const g of h.tap.jobs.flat()) {
    expect(g.trajectories.map((t) => t.metadata.rollout_index)).toEqual([0, 1, 2]);
  }
  const p = await progress();
  expect(p.groups).toMatchObject({ finished: 4, handed: 4, uncertain: 0, handOffFailed: 0 });
  // The coordinator's own training path stayed unused.
  expect(p.groups.trained).toBe(0);
  // With a sink, trainingJobs counts the sink's jobs.
  await until(
    async () => (await progress()).trainingJobs === shipper.stats().trainingJobs,
    "the shipper's jobs counted",
  );
  expect((await progress()).trainingJobs).toBe(2);
  await until(() => worker.step === 2, "the worker on step 2");
  expect(await coordinator.unhanded()).toEqual({ uncertain: [], failed: [], trainingFailed: [] });
});

it("a sink that refuses a group is tried 3 times, then the group is kept and reported; handAgain hands it once more", async () => {
  await startWorker();
  const got: TrajectoryGroup[] = [];
  let refuse = true;
  const logger = memoryLogger();
  const coordinator = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    sink: {
      add: (group) => {
        if (refuse && group.metadata.group_id === "g-bad") throw new Error("disk full");
        got.push(group);
      },
    },
    pollIntervalMs: 20,
    logger,
    ...fast,
  });
  closers.push(() => coordinator.close());
  await enqueue(["g-bad", "g-ok"]);
  await until(async () => (await progress()).groups.handOffFailed === 1, "the refusal counted");
  await until(() => got.length === 1, "g-ok handed");

  expect(got.map((g) => g.metadata.group_id)).toEqual(["g-ok"]);
  expect(await coordinator.unhanded()).toEqual({
    uncertain: [],
    failed: ["g-bad"],
    trainingFailed: [],
  });
  expect(logger.lines.filter((l) => l.includes("refused group g-bad"))).toEqual([
    "TrainingCoordinator: the sink refused group g-bad (disk full); trying again (attempt 1 of 3).",
    "TrainingCoordinator: the sink refused group g-bad (disk full); trying again (attempt 2 of 3).",
    "TrainingCoordinator: the sink refused group g-bad 3 times (disk full); it is kept in Redis, counted in groups.handOffFailed (coordinator.handAgain([id]) tries again).",
  ]);

  refuse = false;
  expect(await coordinator.handAgain(["g-bad", "g-nope"])).toEqual(["g-bad"]);
  await until(() => got.length === 2, "g-bad handed");
  expect(got.map((g) => g.metadata.group_id)).toEqual(["g-ok", "g-bad"]);
  expect(got[1]?.trajectories).toHaveLength(3);
  const p = await progress();
  expect(p.groups).toMatchObject({ handed: 2, handOffFailed: 0, uncertain: 0 });
});

it("refuses a sink with the coordinator's own trainEvery, and bad stale options, naming the field", async () => {
  const base = { connection: h.redis.connection, model: h.model };
  await expect(
    // @ts-expect-error: the options' type refuses trainEvery beside a sink, too.
    TrainingCoordinator.start({ ...base, sink: { add: () => {} }, trainEvery: 2 }),
  ).rejects.toThrow(
    "options.trainEvery: belongs to the coordinator's own training (model.train); with options.sink the sink trains",
  );
  await expect(
    // @ts-expect-error: and config beside a sink.
    TrainingCoordinator.start({ ...base, sink: { add: () => {} }, config: { learningRate: 1 } }),
  ).rejects.toThrow("options.config: belongs to the coordinator's own training");
  await expect(TrainingCoordinator.start({ ...base, sink: {} as never })).rejects.toThrow(
    /options\.sink: expected a GroupSink/,
  );
  // @ts-expect-error: one of trainEvery and sink is required.
  await expect(TrainingCoordinator.start({ ...base })).rejects.toThrow(
    /options\.trainEvery: expected \{ groups: n \} with n a positive integer \(or pass options\.sink\)/,
  );
  await expect(
    TrainingCoordinator.start({ ...base, trainEvery: 2, onStale: "retry" as never }),
  ).rejects.toThrow('options.onStale: expected "drop" or "rerun", not "retry"');
  await expect(
    TrainingCoordinator.start({ ...base, trainEvery: 2, maxReruns: -1 }),
  ).rejects.toThrow("options.maxReruns: expected an integer, 0 or more.");
  await expect(
    TrainingCoordinator.start({ ...base, trainEvery: 2, maxStepsOffPolicy: -1 }),
  ).rejects.toThrow("options.maxStepsOffPolicy: expected an integer, 0 or more, or Infinity.");
  await expect(
    TrainingCoordinator.start({ ...base, trainEvery: { groups: 2, maxStepsOffPolicy: 0.5 } }),
  ).rejects.toThrow(
    "options.trainEvery.maxStepsOffPolicy: expected an integer, 0 or more, or Infinity.",
  );
  // Each of them is the library's argument error, whichever copy of the module threw it.
  await expect(TrainingCoordinator.start({ ...base, sink: {} as never })).rejects.toSatisfy(
    (e: unknown) => InvalidArgumentError.isInstance(e),
  );
});

const spawnCoordinator = (config: object) => {
  const child = runChild("../../distributed/fixtures/sink-coordinator.ts", [
    JSON.stringify(config),
  ]);
  children.push(child);
  return child;
};

it("a coordinator killed between the shipper's add and the mark: the group is shipped once (from the spool) and reported uncertain, never handed twice", async () => {
  await startWorker();
  const config = {
    port: h.redis.port,
    baseURL: h.tap.url,
    project: h.model.project,
    name: h.model.name,
    spoolDir,
    trainEvery: 2,
    pauseAfterAddMs: 30_000,
  };
  const spawn = (pauseAfterAddMs: number) => spawnCoordinator({ ...config, pauseAfterAddMs });
  const first = spawn(30_000);
  await first.waitFor(/ready \d+/);
  const ids = ["g-red", "g-cat", "g-apple", "g-two"];
  await enqueue(ids);
  // In the shipper's spool, not yet marked handed in Redis.
  await first.waitFor(/added g-\w+\n/);
  const cut = /added (g-\w+)\n/.exec(first.output())?.[1] as string;
  first.proc.kill("SIGKILL");
  await first.exit;

  const second = spawn(0);
  await second.waitFor(/ready \d+/);
  await until(async () => {
    const p = await progress();
    return p.groups.handed + p.groups.uncertain === 4 && sentIds().length === 4;
  }, "every group handed or reported, and trained");

  // Trained exactly once each: the cut group came back from the spool.
  expect(sentIds().sort()).toEqual([...ids].sort());
  expect(second.output()).not.toContain(`handing ${cut}`);
  expect(second.output()).toContain(
    `1 group(s) were being handed to the sink when the previous coordinator stopped: ${cut}.`,
  );
  const p = await progress();
  expect(p.groups).toMatchObject({ finished: 4, handed: 3, uncertain: 1 });
  // The group's record stays in Redis (its trajectories in the payload store), for the user to check against the service.
  const redis = new Redis(h.redis.connection);
  try {
    expect(await redis.smembers("bull:rollouts:tr:uncertain")).toEqual([cut]);
    expect(JSON.parse((await redis.hget("bull:rollouts:tr:groups", cut)) as string)).toMatchObject({
      rest: { metadata: { group_id: cut } },
    });
  } finally {
    redis.disconnect();
  }
}, 120_000);

it("a coordinator killed before the shipper's add: the group is reported uncertain and not shipped; handAgain ships it once", async () => {
  await startWorker();
  const config = {
    port: h.redis.port,
    baseURL: h.tap.url,
    project: h.model.project,
    name: h.model.name,
    spoolDir,
    trainEvery: 2,
    pauseAfterAddMs: 0,
  };
  const first = spawnCoordinator({ ...config, pauseBeforeAddMs: 30_000 });
  await first.waitFor(/ready \d+/);
  const ids = ["g-red", "g-cat", "g-apple", "g-two"];
  await enqueue(ids);
  await first.waitFor(/handing g-\w+\n/);
  const cut = /handing (g-\w+)\n/.exec(first.output())?.[1] as string;
  first.proc.kill("SIGKILL");
  await first.exit;

  const second = spawnCoordinator(config);
  await second.waitFor(/ready \d+/);
  await until(async () => {
    const p = await progress();
    return p.groups.handed === 3 && p.groups.uncertain === 1 && sentIds().length === 2;
  }, "three groups handed, one reported, one training job");
  // Two training jobs would need a fourth group: the cut one never reached the shipper.
  expect(sentIds()).not.toContain(cut);
  expect(second.output()).not.toContain(`handing ${cut}`);

  // The user checked the service: the group is not there, so it is handed
  // again, from a process of their own (the coordinator keeps running).
  const connection = h.redis.connection;
  expect(await unhanded({ connection })).toEqual({
    uncertain: [cut],
    failed: [],
    trainingFailed: [],
  });
  expect(await handAgain({ connection }, [cut])).toEqual([cut]);
  await until(async () => sentIds().length === 4, "the second training job");
  expect(sentIds().sort()).toEqual([...ids].sort());
  expect((await progress()).groups).toMatchObject({ handed: 4, uncertain: 0 });
}, 120_000);
