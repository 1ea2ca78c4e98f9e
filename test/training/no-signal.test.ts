// Groups whose rewards are all equal teach nothing (every advantage is zero).
// ART's trainer leaves them out and goes on; so do `train` and the shipper's
// `trainEvery`, unless told to send them (`noSignal: "send"`).
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
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
import { loadDataDir } from "../../src/report/load.js";
import { inProcess } from "../cli/run.js";
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
    'train: left out 1 of 2 group(s) whose rewards are all equal (nothing to learn), logged under "train" with metadata.left_out = "no_reward_signal"; training on 1 (noSignal: "send" sends them).',
    'train: every one of the 4 group(s) has rewards that are all equal (nothing to learn), so no job was created; the model stays at step 1; they were logged under "train" with metadata.left_out = "no_reward_signal" (noSignal: "send" sends them).',
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

/** The metrics each checkpoint of the model carries, by step, as the CLI lists them. */
async function history(
  at: Emulator,
  modelId: string,
): Promise<Record<number, Record<string, number>>> {
  const dir = await mkdtemp(path.join(tmpdir(), "no-signal-cli-"));
  const keyFile = path.join(dir, "key");
  await writeFile(keyFile, "k");
  const run = await inProcess([
    ...["checkpoints", "list", modelId, "--json"],
    ...["--base-url", at.url, "--api-key-file", keyFile],
  ]);
  expect(run.code).toBe(0);
  const out: Record<number, Record<string, number>> = {};
  for (const cp of JSON.parse(run.stdout)) out[cp.step] = cp.metrics;
  return out;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** An emulator keeping its state in a directory, and a model on it. */
async function persisted(name: string) {
  const dataDir = await mkdtemp(path.join(tmpdir(), "no-signal-data-"));
  const at = await startEmulator({ port: 0, apiKeys: ["k"], dataDir });
  const model = await TrainableModel.register(
    new TrainingClient({ apiKey: "k", baseURL: at.url, maxRetries: 0 }),
    { project: "p", name, baseModel: "toy" },
  );
  /** After close: each logged group's left_out marks, in the order logged. */
  const marks = async () => {
    const state = JSON.parse(await readFile(path.join(dataDir, "emulator-state.json"), "utf8"));
    return (state.logs as { trajectory_groups: any[] }[]).flatMap((l) =>
      l.trajectory_groups.map((g) =>
        (g.trajectories as { metadata?: Record<string, unknown> }[]).map(
          (t) => t.metadata?.left_out ?? null,
        ),
      ),
    );
  };
  return { at, model, dataDir, marks };
}

/** The report's reward mean per train step, from the data directory. */
async function reportMeans(dataDir: string): Promise<Record<number, number>> {
  const run = await loadDataDir(dataDir);
  const out: Record<number, number> = {};
  for (const s of run.steps)
    if (s.split === "train")
      out[s.step] = mean(s.groups.flatMap((g) => g.trajectories.map((t) => Number(t.reward))));
  return out;
}

it("a step with tied groups keeps every rollout in its history: the step's mean is the rollouts' mean", async () => {
  const { at, model, dataDir, marks } = await persisted("history");
  const log = lines();
  // Step 0: one group with signal, one tied at 1; step 1: every group tied.
  const first = [trainableGroup(1, 0, 0, 1), trainableGroup(1, 1, 1, 1)];
  const second = [trainableGroup(1, 1), trainableGroup(0, 0), trainableGroup(1, 1)];
  expect(await model.train(first, {}, { pollIntervalMs: 10, logger: log })).toMatchObject({
    step: 1,
    noSignalGroups: 1,
  });
  expect(await model.train(second, {}, { pollIntervalMs: 10, logger: log })).toMatchObject({
    step: 1,
    skipped: "no_reward_signal",
  });
  const rewards = (groups: typeof first) =>
    groups.flatMap((g) => g.trajectories.map((t) => t.reward));
  const steps = await history(at, model.id);
  await at.close();
  expect(steps[0]).toMatchObject({
    "train/reward": mean(rewards(first)),
    "train/num_trajectories": 8,
    "train/num_groups": 2,
    "train/num_groups_left_out": 1,
  });
  expect(steps[1]).toMatchObject({
    "train/reward": mean(rewards(second)),
    "train/num_trajectories": 6,
    "train/num_groups_left_out": 3,
  });
  // Only the tied groups were logged, each trajectory marked; the job held the other.
  expect(await marks()).toEqual([
    ["no_reward_signal", "no_reward_signal", "no_reward_signal", "no_reward_signal"],
    ["no_reward_signal", "no_reward_signal"],
    ["no_reward_signal", "no_reward_signal"],
    ["no_reward_signal", "no_reward_signal"],
  ]);
  // The report counts them too: the job's groups and the logged ones, at the step sampled.
  expect(await reportMeans(dataDir)).toEqual({
    0: mean(rewards(first)),
    1: mean(rewards(second)),
  });
});

it("the shipper's trainEvery marks the tied groups it logs, and the step's mean covers every rollout once", async () => {
  const { at, model, dataDir, marks } = await persisted("shipper-history");
  const shipper = new TrajectoryShipper({
    model,
    flushOnExit: false,
    logger: lines(),
    trainEvery: { groups: 2, pollIntervalMs: 10 },
  });
  const groups = [
    trainableGroup(1, 1),
    trainableGroup(1, 0),
    trainableGroup(0, 0),
    trainableGroup(0, 1),
  ];
  for (const g of groups) await shipper.add(g);
  expect(await shipper.close({ timeoutMs: 20_000 })).toMatchObject({
    shipped: 4,
    noSignal: 2,
    trainingJobs: 1,
  });
  const steps = await history(at, model.id);
  await at.close();
  expect(await marks()).toEqual([
    ["no_reward_signal", "no_reward_signal"],
    [null, null],
    ["no_reward_signal", "no_reward_signal"],
    [null, null],
  ]);
  // Every group was logged, and the job trained on two of them: counted once.
  expect(steps[0]).toMatchObject({
    "train/reward": mean(groups.flatMap((g) => g.trajectories.map((t) => t.reward))),
    "train/num_trajectories": 8,
    "train/num_groups_left_out": 2,
  });
  // The report reads the same rule: the two trained groups were logged and
  // in the job, yet each group is shown once at the step it was sampled on.
  const run = await loadDataDir(dataDir);
  const train = run.steps.filter((s) => s.split === "train");
  expect(train.map((s) => s.step)).toEqual([0]);
  expect(train[0]?.groups).toHaveLength(4);
  expect(train[0]?.groups.flatMap((g) => g.trajectories)).toHaveLength(8);
  expect(await reportMeans(dataDir)).toEqual({ 0: steps[0]?.["train/reward"] });
});
