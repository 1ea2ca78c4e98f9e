// The RolloutExecutor contract against BullMQ on a real Redis, and the
// training loop over either executor: the only line that differs between
// the two runs below is the one that makes the executor.
import { Recorder } from "trajectory-recorder";
import { BullMQExecutor, RolloutWorker } from "trajectory-recorder/bullmq";
import {
  InProcessExecutor,
  type RolloutExecutor,
  trainWithExecutor,
} from "trajectory-recorder/core";
import { afterEach, expect, it } from "vitest";
import { executorContract, runRollout, type Scenario } from "../helpers/executor-contract.js";
import { agent, type Harness, inferenceNameOf, memoryLogger, startHarness } from "./harness.js";
import { startRedis } from "./redis-server.js";

const fast = { lockDurationMs: 10_000, stalledIntervalMs: 5_000 };

executorContract("BullMQ", async ({ log, gate, concurrency, afterEach }) => {
  const redis = await startRedis();
  const { connection } = redis;
  const logger = memoryLogger();
  const worker = await RolloutWorker.start<Scenario>({
    connection,
    // The shared rollout builds its trajectory itself: no calls to record.
    recorder: new Recorder({ logger }),
    logger,
    concurrency,
    ...fast,
    rollout: ({ payload, groupId, index }) => runRollout(payload, groupId, index, log, gate),
  });
  const executor = await BullMQExecutor.start<Scenario>({
    connection,
    model: { getStep: async () => 0 },
    afterEach,
    logger,
    pollIntervalMs: 50,
    ...fast,
  });
  return {
    executor,
    close: async () => {
      gate.open();
      await executor.close();
      await worker.close();
      await redis.close();
    },
  };
});

let h: Harness | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await h?.close();
  h = undefined;
});

type Target = { target: string };
const quiet = { warn: () => {}, error: () => {}, info: () => {} };

async function train(executor: RolloutExecutor<Target>, model: Harness["model"]) {
  return trainWithExecutor(model, executor, {
    scenarios: ["red", "blue", "green", "gold"].map((target) => ({ target })),
    rolloutsPerGroup: 3,
    trainEvery: { groups: 2, pollIntervalMs: 100 },
    shipper: { flushOnExit: false, logger: quiet },
  });
}

it("trains with trainWithExecutor the same in process and on BullMQ workers", async () => {
  h = await startHarness();
  const harness = h;
  const { recorder, say } = agent(harness.tap.url);
  const name = inferenceNameOf(harness.model);

  const inProcess = new InProcessExecutor<Target>({
    rollout: (s, { index }) => recorder.rollout((t) => say(name(0), t, s.target, index)),
  });
  closers.push(() => inProcess.close());
  const local = await train(inProcess, harness.model);

  const worker = await RolloutWorker.start<Target>({
    connection: harness.redis.connection,
    recorder,
    logger: memoryLogger(),
    inferenceName: name,
    ...fast,
    rollout: ({ payload, trajectory, model, index }) =>
      say(model(), trajectory, payload.target, index),
  });
  closers.push(() => worker.close());
  const onBullMQ = await BullMQExecutor.start<Target>({
    connection: harness.redis.connection,
    model: harness.model,
    logger: memoryLogger(),
    pollIntervalMs: 50,
  });
  closers.push(() => onBullMQ.close());
  const distributed = await train(onBullMQ, harness.model);

  for (const result of [local, distributed]) {
    expect(result).toMatchObject({ submitted: 4, scored: 4, failed: 0, cancelled: 0 });
    expect(result.shipper).toMatchObject({ trainingJobs: 2, failed: 0 });
  }
  // Four jobs on the service, each of two groups of three trajectories.
  expect(harness.tap.jobs.map((groups) => groups.length)).toEqual([2, 2, 2, 2]);
  expect(harness.tap.jobs.flat().every((g) => g.trajectories.length === 3)).toBe(true);
});
