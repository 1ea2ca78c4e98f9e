// Groups whose rewards are all equal teach nothing (every advantage is zero).
// ART's trainer leaves them out and goes on; so do `train` and the shipper's
// `trainEvery`, unless told to send them (`noSignal: "send"`).
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  TrainableModel,
  TrainingClient,
  TrainingFailedError,
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

it("an ART-style loop goes on through a step where every group ties: no job, the current step, a reason", async () => {
  const model = await register("loop");
  const log = lines();
  const steps: unknown[] = [];
  // Step 1 has signal, step 2 ties everywhere (4 scenarios x 4 rollouts), step 3 has signal again.
  const batches = [
    [trainableGroup(1, 0, 0, 1), trainableGroup(0.5, 0.5, 0.5, 0.5)],
    Array.from({ length: 4 }, () => trainableGroup(1, 1, 1, 1)),
    [trainableGroup(0, 1, 1, 0)],
  ];
  for (const groups of batches) {
    const result = await model.train(groups, {}, { pollIntervalMs: 10, logger: log });
    steps.push({
      step: result.step,
      jobId: result.jobId === null ? null : "job",
      noSignalGroups: result.noSignalGroups,
      skipped: result.skipped,
    });
  }
  expect(steps).toEqual([
    { step: 1, jobId: "job", noSignalGroups: 1, skipped: undefined },
    { step: 1, jobId: null, noSignalGroups: 4, skipped: "no_reward_signal" },
    { step: 2, jobId: "job", noSignalGroups: 0, skipped: undefined },
  ]);
  // Two jobs; the tied step created none.
  expect(jobPosts()).toBe(2);
  expect(log.out).toEqual([
    'train: left out 1 of 2 group(s) whose rewards are all equal (nothing to learn); training on 1 (noSignal: "send" sends them).',
    'train: every one of the 4 group(s) has rewards that are all equal (nothing to learn), so no job was created; the model stays at step 1 (noSignal: "send" sends them).',
  ]);
});

it('noSignal: "send" sends tied groups, and the service then fails the job as it would', async () => {
  const model = await register("send");
  const error = await model
    .train([trainableGroup(1, 1)], {}, { pollIntervalMs: 10, noSignal: "send" })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TrainingFailedError);
  expect((error as Error).message).toMatch(/rewards that are all equal/);
  expect(jobPosts()).toBe(1);
});

it("a single-trajectory group has no signal either; a bad noSignal is refused naming the field", async () => {
  const model = await register("single");
  const result = await model.train([trainableGroup(1)], {}, { logger: lines() });
  expect(result).toMatchObject({ jobId: null, step: 0, skipped: "no_reward_signal" });
  await expect(
    model.train([trainableGroup(1, 0)], {}, { noSignal: "drop" as never }),
  ).rejects.toThrow(/noSignal: expected "skip" or "send", got "drop"/);
  expect(jobPosts()).toBe(0);
});

it("the shipper logs tied groups as usual, keeps them out of its jobs and counts them", async () => {
  const model = await register("shipper");
  const log = lines();
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-no-signal-"));
  const shipper = new TrajectoryShipper({
    model,
    spoolDir,
    flushOnExit: false,
    logger: log,
    trainEvery: { groups: 2, pollIntervalMs: 10 },
  });
  await shipper.add(trainableGroup(1, 1));
  await shipper.add(trainableGroup(1, 0));
  await shipper.add(trainableGroup(0, 0));
  await shipper.add(trainableGroup(0, 1));
  const stats = await shipper.close({ timeoutMs: 20_000 });
  expect(stats).toMatchObject({
    shipped: 4,
    noSignal: 2,
    trainingJobs: 1,
    failed: 0,
    spooled: 0,
    awaitingTraining: 0,
  });
  // All four were logged; the one job held the two with signal.
  const logs = proxy.seen.filter((r) => r.method === "POST" && r.path.endsWith("/log"));
  expect(logs).toHaveLength(4);
  expect(jobPosts()).toBe(1);
  expect(await model.getStep()).toBe(1);
  expect(await readdir(spoolDir)).toEqual([]);
  // Said once, not per group.
  expect(log.out.filter((m) => m.includes("stats().noSignal"))).toHaveLength(1);
});

it('the shipper\'s trainEvery.noSignal: "send" puts tied groups in its jobs', async () => {
  const model = await register("shipper-send");
  const log = lines();
  const shipper = new TrajectoryShipper({
    model,
    flushOnExit: false,
    logger: log,
    trainEvery: { groups: 2, pollIntervalMs: 10, noSignal: "send" },
  });
  await shipper.add(trainableGroup(1, 1));
  await shipper.add(trainableGroup(1, 0));
  const stats = await shipper.close({ timeoutMs: 20_000 });
  expect(stats).toMatchObject({ shipped: 2, noSignal: 0, trainingJobs: 1 });
  expect(jobPosts()).toBe(1);
});

it("logged groups replayed from an earlier run's spool are judged when their job is made", async () => {
  const model = await register("replay");
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-no-signal-replay-"));
  // The first shipper logs both and closes before any job (trainEvery: 3).
  const first = new TrajectoryShipper({
    model,
    spoolDir,
    flushOnExit: false,
    logger: lines(),
    trainEvery: { groups: 3, pollIntervalMs: 10, noSignal: "send" },
  });
  await first.add(trainableGroup(1, 1));
  await first.add(trainableGroup(1, 0));
  expect(await first.close()).toMatchObject({ shipped: 2, awaitingTraining: 2 });
  // The next one skips tied groups: of the three it trains on, one is left out.
  const next = new TrajectoryShipper({
    model,
    spoolDir,
    flushOnExit: false,
    logger: lines(),
    trainEvery: { groups: 2, pollIntervalMs: 10 },
  });
  await next.add(trainableGroup(0, 1));
  const stats = await next.close({ timeoutMs: 20_000 });
  expect(stats).toMatchObject({ noSignal: 1, trainingJobs: 1, spooled: 0, awaitingTraining: 0 });
  expect(jobPosts()).toBe(1);
  expect(await readdir(spoolDir)).toEqual([]);
});
