// #34 in the coordinator: the groups it leaves out of training for lack of
// reward signal reach `model.train` with the next batch (or on a drain), so
// that train logs them to the step, marked as not trained, as it does its own.
import { RolloutProducer, RolloutWorker, TrainingCoordinator } from "trajectory-recorder/bullmq";
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
const idsOf = (groups: readonly unknown[]) =>
  groups.map((g) => (g as { metadata: { group_id: string } }).metadata.group_id).sort();

it("passes the groups it released for lack of signal to the next job's train, which leaves them out of the job", async () => {
  const { recorder, say } = agent(h.tap.url);
  const worker = await RolloutWorker.start<{ target: string }>({
    connection: h.redis.connection,
    recorder,
    logger: memoryLogger(),
    inferenceName: inferenceNameOf(h.model),
    concurrency: 4,
    ...fast,
    rollout: async ({ payload, trajectory, model, index }) => {
      await say(model(), trajectory, payload.target, index);
      if (payload.target.startsWith("flat")) trajectory.reward = 0.5;
    },
  });
  closers.push(() => worker.close());
  const calls: { groups: string[]; noSignal: unknown }[] = [];
  const train = h.model.train.bind(h.model);
  h.model.train = (groups, config, run = {}) => {
    calls.push({ groups: idsOf(groups), noSignal: run.noSignal });
    return train(groups, config, run);
  };
  const coordinator = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: { groups: 2 },
    pollIntervalMs: 100,
    logger: memoryLogger(),
    ...fast,
  });
  closers.push(() => coordinator.close());
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  // The flat group first: released before the batch of the two others forms.
  await producer.enqueue([{ id: "g-flat", payload: { target: "flat" }, rollouts: 3 }]);
  await expect.poll(async () => (await coordinator.drain()).groups.noSignal).toBe(1);
  await producer.enqueue(
    ["g-red", "g-cat"].map((id) => ({ id, payload: { target: id.slice(2) }, rollouts: 3 })),
  );
  const p = await coordinator.drain();
  expect(p.groups).toMatchObject({ trained: 2, noSignal: 1 });
  // The released group went to a train call with "skip": never into a job.
  const withFlat = calls.filter((c) => c.groups.includes("g-flat"));
  expect(withFlat).toHaveLength(1);
  expect(withFlat[0]?.noSignal).toBe("skip");
  expect(idsOf(h.tap.jobs.flat())).toEqual(["g-cat", "g-red"]);
});

it("on a drain with no batch left, the released groups still go to train, which creates no job", async () => {
  const { recorder, say } = agent(h.tap.url);
  const worker = await RolloutWorker.start<{ target: string }>({
    connection: h.redis.connection,
    recorder,
    logger: memoryLogger(),
    inferenceName: inferenceNameOf(h.model),
    concurrency: 4,
    ...fast,
    rollout: async ({ payload, trajectory, model, index }) => {
      await say(model(), trajectory, payload.target, index);
      trajectory.reward = 0.5;
    },
  });
  closers.push(() => worker.close());
  const calls: string[][] = [];
  const train = h.model.train.bind(h.model);
  h.model.train = (groups, config, run = {}) => {
    calls.push(idsOf(groups));
    return train(groups, config, run);
  };
  const coordinator = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: { groups: 4, noSignal: "skip" },
    pollIntervalMs: 100,
    logger: memoryLogger(),
    ...fast,
  });
  closers.push(() => coordinator.close());
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  await producer.enqueue(
    ["g-a", "g-b"].map((id) => ({ id, payload: { target: "x" }, rollouts: 2 })),
  );
  const p = await coordinator.drain();
  expect(p.groups).toMatchObject({ noSignal: 2, trained: 0 });
  expect(calls).toEqual([["g-a", "g-b"]]);
  expect(h.tap.jobs).toHaveLength(0);
});
