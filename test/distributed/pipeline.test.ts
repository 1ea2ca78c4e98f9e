import {
  type CoordinatorTrainingOptions,
  RolloutProducer,
  RolloutWorker,
  readProgress,
  TrainingCoordinator,
} from "trajectory-recorder/bullmq";
import { afterEach, beforeEach, expect, it } from "vitest";
import {
  agent,
  type Harness,
  inferenceNameOf,
  memoryLogger,
  startHarness,
  until,
} from "./harness.js";

let h: Harness;
const closers: (() => Promise<void>)[] = [];
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await h.close();
});

// No process dies here: locks long enough for a loaded machine.
const fast = { lockDurationMs: 10_000, stalledIntervalMs: 5_000 };

async function startWorkers(count: number, logger = memoryLogger()) {
  const { recorder, say } = agent(h.tap.url);
  const workers = [];
  for (let i = 0; i < count; i++) {
    const w = await RolloutWorker.start<{ target: string }>({
      connection: h.redis.connection,
      recorder,
      logger,
      inferenceName: inferenceNameOf(h.model),
      concurrency: 4,
      ...fast,
      rollout: ({ payload, trajectory, model, index }) =>
        say(model(), trajectory, payload.target, index),
    });
    closers.push(() => w.close());
    workers.push(w);
  }
  return workers;
}

async function startCoordinator(
  options: Partial<CoordinatorTrainingOptions>,
  trainedGroups: number,
) {
  let trained = 0;
  const results: { metrics: Record<string, number>; staleGroups?: number }[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  const c = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: 2,
    pollIntervalMs: 100,
    logger: memoryLogger(),
    ...fast,
    ...options,
    onTrained: (r) => {
      results.push(r);
      trained += r.groups.length;
      if (trained >= trainedGroups) resolve();
    },
  });
  closers.push(() => c.close());
  return { coordinator: c, done, results };
}

it("runs each group's rollouts on the workers, collects each group once and trains on it; enqueueing again runs nothing twice", async () => {
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  const groups = ["red", "cat", "apple", "two"].map((target) => ({
    id: `g-${target}`,
    payload: { target },
    rollouts: 3,
    metadata: { target },
  }));
  expect(await producer.enqueue(groups)).toEqual({ added: groups.map((g) => g.id), existing: [] });
  expect(await producer.enqueue(groups)).toEqual({ added: [], existing: groups.map((g) => g.id) });
  await startWorkers(2);
  const { done } = await startCoordinator({}, 4);
  await done;

  expect(h.tap.jobs).toHaveLength(2);
  const sent = h.tap.jobs.flat();
  expect(sent.map((g) => g.metadata.group_id).sort()).toEqual(groups.map((g) => g.id).sort());
  for (const g of sent) {
    expect(g.trajectories.map((t) => t.metadata.rollout_index)).toEqual([0, 1, 2]);
    expect(g.exceptions).toEqual([]);
    expect(g.metadata).toMatchObject({ target: g.metadata.group_id?.slice(2) });
  }
  const p = await readProgress({ connection: h.redis.connection });
  expect(p.rollouts).toEqual({ queued: 0, running: 0, finished: 12, failed: 0 });
  expect(p.groups).toMatchObject({ queued: 0, running: 0, finished: 4, failed: 0, trained: 4 });
  expect(p.trainingJobs).toBe(2);
  expect(p.step).toBe(await h.model.getStep());
  expect(p.step).toBeGreaterThanOrEqual(1);
  const rewards = sent.flatMap((g) => g.trajectories.map((t) => t.reward));
  expect(p.rewardMean).toBeCloseTo(rewards.reduce((a, b) => a + b, 0) / rewards.length, 10);
});

it("records the steps that served a rollout's first and last call, and drops groups more than maxStepsOffPolicy steps behind", async () => {
  const { recorder, say } = agent(h.tap.url);
  const logger = memoryLogger();
  const worker = await RolloutWorker.start<{ target: string }>({
    connection: h.redis.connection,
    recorder,
    logger,
    inferenceName: inferenceNameOf(h.model),
    concurrency: 8,
    ...fast,
    rollout: async ({ payload, trajectory, model, step, groupId, index }) => {
      await say(model(), trajectory, payload.target, index);
      // The slow group keeps going until the first training job published a step.
      if (groupId === "g-slow") {
        await new Promise<void>((resolve) => {
          const check = () => (step() >= 1 ? resolve() : setTimeout(check, 20));
          check();
        });
      }
    },
  });
  closers.push(() => worker.close());
  const results = new Map<string, { initial: number | null; final: number | null }>();
  worker.worker.on("completed", (job, t) =>
    results.set(job.id as string, {
      initial: t.initial_policy_version,
      final: t.final_policy_version,
    }),
  );
  const {
    coordinator,
    done,
    results: trained,
  } = await startCoordinator({ maxStepsOffPolicy: 0, logger }, 4);
  const slowCollected = new Promise<void>((resolve) =>
    coordinator.collector?.worker.on("completed", (job) => job.id === "g-slow" && resolve()),
  );
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  const group = (id: string) => ({ id, payload: { target: "apple" }, rollouts: 2 });
  await producer.enqueue([group("g-slow"), group("g-a"), group("g-b")]);
  await slowCollected;
  // Enqueued on step 1: the next batch is formed while g-slow (from step 0) waits.
  await producer.enqueue([group("g-c"), group("g-d")]);
  await done;

  expect(results.get("g-slow#0")).toEqual({ initial: 0, final: 1 });
  expect(results.get("g-a#0")).toEqual({ initial: 0, final: 0 });
  expect(h.tap.jobs.map((job) => job.map((g) => g.metadata.group_id).sort())).toEqual([
    ["g-a", "g-b"],
    ["g-c", "g-d"],
  ]);
  for (const g of h.tap.jobs[1] ?? []) {
    for (const t of g.trajectories) expect(t.initial_policy_version).toBe(1);
  }
  const p = await readProgress({ connection: h.redis.connection });
  expect(p.groups).toMatchObject({ finished: 5, stale: 1, trained: 4 });
  expect(logger.lines).toContainEqual(
    "TrainingCoordinator: dropped 1 group(s) sampled more than 0 step(s) behind the policy (too far off-policy, maxStepsOffPolicy; counted in groups.stale): g-slow.",
  );
  // The job after the drop says so in its step metrics.
  expect(trained.map((r) => r.metrics["data/step_num_groups_stale"])).toEqual([undefined, 1]);
  expect(trained[1]?.staleGroups).toBe(1);
});

it("a coordinator started after another stopped mid-job follows that job instead of training its groups again", async () => {
  await startWorkers(1);
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  const following = h.tap.answered(/\/training-jobs\/[^/]+\/events/);
  const first = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: 2,
    pollIntervalMs: 100,
    lockTtlMs: 1000,
    logger: memoryLogger(),
  });
  await producer.enqueue(
    ["g-x", "g-y"].map((id) => ({ id, payload: { target: "cat" }, rollouts: 3 })),
  );
  // Its job was created and its id saved: the first coordinator now follows it.
  await following;
  await first.close();

  const logger = memoryLogger();
  const { done } = await startCoordinator({ logger }, 2);
  await done;
  expect(h.tap.jobs).toHaveLength(1);
  expect(logger.lines[0]).toMatch(
    /^TrainingCoordinator: resuming batch 1 \(2 groups, job \S+\)\.$/,
  );
  const p = await readProgress({ connection: h.redis.connection });
  expect(p).toMatchObject({ trainingJobs: 1, groups: { trained: 2 } });
});

it('with onStale "rerun", a group too far behind runs again as <id>.rerun1 (each rollout once) and is trained instead; past maxReruns it is dropped', async () => {
  const { recorder, say } = agent(h.tap.url);
  const logger = memoryLogger();
  const worker = await RolloutWorker.start<{ target: string }>({
    connection: h.redis.connection,
    recorder,
    logger,
    inferenceName: inferenceNameOf(h.model),
    concurrency: 8,
    ...fast,
    rollout: async ({ payload, trajectory, model, step, groupId, index }) => {
      await say(model(), trajectory, payload.target, index);
      // g-slow (first run only) ends after the first training job; g-late's
      // runs each wait for a step that comes only after they started.
      const wait = groupId === "g-slow" ? 1 : groupId.startsWith("g-late") ? 99 : 0;
      const start = step();
      if (wait === 0) return;
      await new Promise<void>((resolve) => {
        const check = () =>
          step() >= Math.min(wait, start + 1) ? resolve() : setTimeout(check, 20);
        check();
      });
    },
  });
  closers.push(() => worker.close());
  const runs: string[] = [];
  worker.worker.on("completed", (job) => runs.push(job.id as string));
  const { coordinator, done } = await startCoordinator(
    { maxStaleness: 0, onStale: "rerun", maxReruns: 1, logger },
    4,
  );
  const collected = (id: string) =>
    new Promise<void>((resolve) =>
      coordinator.collector?.worker.on("completed", (job) => job.id === id && resolve()),
    );
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  const group = (id: string) => ({ id, payload: { target: "apple" }, rollouts: 2 });
  const rerunCollected = collected("g-slow.rerun1");
  await producer.enqueue([group("g-slow"), group("g-a"), group("g-b")]);
  // Step 1 is out; g-slow (step 0) is re-run on step 1 and trained with g-c.
  await rerunCollected;
  await producer.enqueue([group("g-c")]);
  await done;

  expect(h.tap.jobs.map((job) => job.map((g) => g.metadata.group_id).sort())).toEqual([
    ["g-a", "g-b"],
    ["g-c", "g-slow.rerun1"],
  ]);
  const rerun = h.tap.jobs[1]?.find((g) => g.metadata.group_id === "g-slow.rerun1");
  expect(rerun?.metadata).toMatchObject({ rerun_of: "g-slow", rerun: 1 });
  for (const t of rerun?.trajectories ?? []) expect(t.initial_policy_version).toBe(1);
  expect(runs.filter((id) => id.startsWith("g-slow")).sort()).toEqual([
    "g-slow#0",
    "g-slow#1",
    "g-slow.rerun1#0",
    "g-slow.rerun1#1",
  ]);
  expect(logger.lines).toContain(
    "TrainingCoordinator: group g-slow was too far behind the policy; re-running it as g-slow.rerun1 (re-run 1 of 1).",
  );

  // g-late and its re-run each end one step after they began (g-d and g-e,
  // then g-f and g-g, train meanwhile): the re-run is dropped.
  const started = new Set<string>();
  worker.worker.on("active", (job) => started.add(job.id as string));
  await producer.enqueue([group("g-late"), group("g-d"), group("g-e")]);
  await until(() => started.has("g-late.rerun1#0") && started.has("g-late.rerun1#1"));
  await producer.enqueue([group("g-f"), group("g-g")]);
  await until(
    async () => (await readProgress({ connection: h.redis.connection })).groups.stale === 1,
  );
  const p = await readProgress({ connection: h.redis.connection });
  expect(p.groups).toMatchObject({ rerun: 2, stale: 1 });
  expect(logger.lines).toContain(
    "TrainingCoordinator: group g-late.rerun1 is too far behind the policy again; dropped after 1 re-run(s) (maxReruns 1), counted in stale.",
  );
  expect(h.tap.jobs.flat().map((g) => g.metadata.group_id)).not.toContain("g-late.rerun1");
});
