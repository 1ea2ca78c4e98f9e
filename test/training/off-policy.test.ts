// Groups sampled too far behind the checkpoint being trained describe a
// policy the model has left: `train` and the shipper's `trainEvery` drop
// those more than `maxStepsOffPolicy` steps behind (default 4, as ART's
// pipeline trainer), log and count them; `Infinity` keeps every group.
import {
  InvalidArgumentError,
  InvalidTrainingOptionsError,
  TrainableModel,
  TrainingClient,
  TrajectoryShipper,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type FaultProxy, startFaultProxy } from "../e2e/fault-proxy.js";
import { trainableGroup } from "../helpers/trainable.js";

let emu: Emulator;
let proxy: FaultProxy;
beforeEach(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  proxy = await startFaultProxy(emu.url, () => undefined);
});
afterEach(async () => {
  await proxy.close();
  await emu.close();
});

const jobPosts = () =>
  proxy.seen.filter((r) => r.method === "POST" && r.path.endsWith("/training-jobs")).length;
const register = (name: string) =>
  TrainableModel.register(new TrainingClient({ apiKey: "k", baseURL: proxy.url, maxRetries: 0 }), {
    project: "p",
    name,
    baseModel: "toy",
  });
const lines = () => {
  const out: string[] = [];
  return {
    out,
    info: (m: string) => out.push(m),
    warn: (m: string) => out.push(`warn: ${m}`),
    error: (m: string) => out.push(`error: ${m}`),
  };
};

/** A group with signal whose rollouts started on `version` (null: unknown). */
function sampledAt(version: number | null, ...rewards: number[]) {
  const group = trainableGroup(...(rewards.length ? rewards : [1, 0]));
  return {
    trajectories: group.trajectories.map((t) => ({
      ...t,
      initial_policy_version: version,
      final_policy_version: version,
    })),
  };
}

/** Trains `model` up to `step` with fresh groups. */
async function trainTo(model: TrainableModel, step: number) {
  while ((await model.getStep()) < step)
    await model.train([sampledAt(null)], {}, { pollIntervalMs: 10, logger: lines() });
}

it("train drops groups more than 4 steps behind by default, logs and counts them, and trains the fresh ones", async () => {
  const model = await register("default");
  await trainTo(model, 5);
  const jobsBefore = jobPosts();
  const log = lines();
  const result = await model.train(
    // 5 - 0 > 4: stale. 5 - 1 = 4: kept. No version: never dropped.
    [sampledAt(0), sampledAt(1), sampledAt(null)],
    {},
    { pollIntervalMs: 10, logger: log },
  );
  expect(result).toMatchObject({ step: 6, staleGroups: 1 });
  expect(result.metrics["data/step_num_groups_stale"]).toBe(1);
  expect(jobPosts()).toBe(jobsBefore + 1);
  expect(log.out).toEqual([
    "train: dropped 1 of 3 group(s) sampled more than 4 step(s) before the checkpoint being trained (step 5): too far off-policy (maxStepsOffPolicy: 4; Infinity keeps them); training on 2.",
  ]);
});

it("train creates no job when every group is stale, and Infinity keeps them all", async () => {
  const model = await register("all-stale");
  await trainTo(model, 1);
  const jobsBefore = jobPosts();
  const log = lines();
  const skipped = await model.train(
    [sampledAt(0), sampledAt(0)],
    {},
    {
      maxStepsOffPolicy: 0,
      logger: log,
    },
  );
  expect(skipped).toMatchObject({
    jobId: null,
    step: 1,
    staleGroups: 2,
    skipped: "stale_policy",
    metrics: { "data/step_num_groups_stale": 2 },
  });
  expect(jobPosts()).toBe(jobsBefore);
  expect(log.out[0]).toMatch(
    /dropped 2 of 2 group\(s\) .*no job was created; the model stays at step 1/,
  );
  const kept = await model.train(
    [sampledAt(0), sampledAt(0)],
    {},
    {
      maxStepsOffPolicy: Number.POSITIVE_INFINITY,
      pollIntervalMs: 10,
      logger: log,
    },
  );
  expect(kept).toMatchObject({ step: 2 });
  expect(kept.staleGroups).toBeUndefined();
  expect(kept.metrics["data/step_num_groups_stale"]).toBeUndefined();
  expect(jobPosts()).toBe(jobsBefore + 1);
});

it("a bad maxStepsOffPolicy is refused naming the field, before anything is sent", async () => {
  const model = await register("bad");
  const seen = proxy.seen.length;
  for (const bad of [-1, 1.5, "4", Number.NaN, null]) {
    const error = await model
      .train([sampledAt(0)], {}, { maxStepsOffPolicy: bad as never })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidTrainingOptionsError);
    expect((error as Error).message).toMatch(
      /maxStepsOffPolicy: expected an integer, 0 or more, or Infinity/,
    );
  }
  expect(proxy.seen.length).toBe(seen);
  expect(
    () =>
      new TrajectoryShipper({
        model,
        flushOnExit: false,
        trainEvery: { groups: 1, maxStepsOffPolicy: -2 },
      }),
  ).toThrow(InvalidArgumentError);
  expect(
    () =>
      new TrajectoryShipper({
        model,
        flushOnExit: false,
        trainEvery: { groups: 1, maxStepsOffPolicy: -2 },
      }),
  ).toThrow(/options\.trainEvery\.maxStepsOffPolicy/);
});

it("the shipper's trainEvery drops stale groups from its jobs and counts them in stats().stale", async () => {
  const model = await register("shipper");
  await trainTo(model, 1);
  const jobsBefore = jobPosts();
  const log = lines();
  const shipper = new TrajectoryShipper({
    model,
    flushOnExit: false,
    logger: log,
    trainEvery: { groups: 2, pollIntervalMs: 10, maxStepsOffPolicy: 0 },
  });
  // A job of one stale and one fresh group, then a job of two stale ones.
  await shipper.add(sampledAt(0));
  await shipper.add(sampledAt(1));
  await shipper.add(sampledAt(0));
  await shipper.add(sampledAt(0));
  const stats = await shipper.close({ timeoutMs: 20_000 });
  expect(stats).toMatchObject({ shipped: 4, stale: 3, trainingJobs: 1, failed: 0 });
  expect(jobPosts()).toBe(jobsBefore + 1);
  expect(await model.getStep()).toBe(2);
  expect(log.out.filter((m) => m.includes("too far off-policy"))).toHaveLength(2);
  expect(log.out[0]).toMatch(/^TrajectoryShipper: train: dropped 1 of 2 group\(s\)/);
});

it("the shipper's trainEvery with maxStepsOffPolicy: Infinity trains stale groups", async () => {
  const model = await register("shipper-infinity");
  await trainTo(model, 1);
  const shipper = new TrajectoryShipper({
    model,
    flushOnExit: false,
    logger: lines(),
    trainEvery: { groups: 2, pollIntervalMs: 10, maxStepsOffPolicy: Number.POSITIVE_INFINITY },
  });
  await shipper.add(sampledAt(0));
  await shipper.add(sampledAt(0));
  const stats = await shipper.close({ timeoutMs: 20_000 });
  expect(stats).toMatchObject({ shipped: 2, stale: 0, trainingJobs: 1 });
  expect(await model.getStep()).toBe(2);
});
