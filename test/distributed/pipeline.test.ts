import {
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

const fast = { lockDurationMs: 2000, stalledIntervalMs: 1000 };

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
  options: Partial<Parameters<typeof TrainingCoordinator.start>[0]>,
  trainedGroups: number,
) {
  let trained = 0;
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
      trained += r.groups.length;
      if (trained >= trainedGroups) resolve();
    },
  });
  closers.push(() => c.close());
  return { coordinator: c, done };
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
