import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { TrainableModel, TrainingClient, TrajectoryShipper } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, expect, it } from "vitest";
import { trainableGroup } from "../helpers/trainable.js";
import { type FaultProxy, sampleGroup, startFaultProxy } from "./fault-proxy.js";

let emu: Emulator;
let proxy: FaultProxy | undefined;
beforeEach(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await emu.close();
});

const quiet = () => {
  const lines: string[] = [];
  return { lines, warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
};

it("ships every group exactly once while the server answers 500, 429 with Retry-After, drops connections and answers slowly", async () => {
  let logCalls = 0;
  proxy = await startFaultProxy(emu.url, ({ path }) => {
    if (!path.endsWith("/log")) return undefined;
    logCalls += 1;
    switch (logCalls % 5) {
      case 1:
        return { kind: "status", status: 500 };
      case 2:
        return { kind: "status", status: 429, headers: { "retry-after": "0.01" } };
      case 3:
        return { kind: "drop" };
      case 4:
        return { kind: "slow", delayMs: 30 };
      default:
        return undefined;
    }
  });
  const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url, maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "faults",
    baseModel: "toy",
  });
  const logger = quiet();
  const shipper = new TrajectoryShipper({
    model,
    concurrency: 3,
    // Three calls in five fail: with 10 attempts, one group in about 170 would
    // run out of them on a scheduling that lines its calls up with the faults.
    maxAttempts: 30,
    backoff: { initialDelayMs: 5, maxDelayMs: 20 },
    flushOnExit: false,
    logger,
  });
  const keys = Array.from({ length: 20 }, (_, i) => `g${i}`);
  for (const key of keys) await shipper.add(sampleGroup(key));
  const stats = await shipper.close({ timeoutMs: 30_000 });
  expect([...proxy.confirmed].sort()).toEqual([...keys].sort());
  expect(stats).toMatchObject({ shipped: 20, failed: 0, queued: 0 });
  expect(stats.retried).toBeGreaterThanOrEqual(10);
  expect(logger.lines).toEqual([]);
});

it("keeps and reports a group the service rejects, and ships the others", async () => {
  proxy = await startFaultProxy(emu.url, ({ path, n }) =>
    path.endsWith("/log") && n === 3
      ? { kind: "status", status: 400, body: { detail: "bad group" } }
      : undefined,
  );
  const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url, maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "rejects",
    baseModel: "toy",
  });
  const logger = quiet();
  const shipper = new TrajectoryShipper({ model, concurrency: 1, flushOnExit: false, logger });
  for (const key of ["a", "b", "c"]) await shipper.add(sampleGroup(key));
  const stats = await shipper.close();
  expect(stats).toMatchObject({ shipped: 2, failed: 1 });
  expect(proxy.confirmed).toEqual(["a", "c"]);
  expect(shipper.failedGroups()).toEqual([expect.objectContaining({ metadata: { key: "b" } })]);
  expect(logger.lines.join("\n")).toMatch(/could not log a group.*bad group.*failedGroups/);
});

it("starts a training job every N groups, one at a time, never training a group twice", async () => {
  proxy = await startFaultProxy(emu.url, () => undefined);
  const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "every",
    baseModel: "toy",
  });
  const shipper = new TrajectoryShipper({
    model,
    concurrency: 4,
    trainEvery: { groups: 3, config: { allowTrainingWithoutLogprobs: true }, pollIntervalMs: 10 },
    flushOnExit: false,
    logger: quiet(),
  });
  for (let i = 0; i < 7; i++) await shipper.add(sampleGroup(`t${i}`));
  await shipper.flush();
  const stats = await shipper.close();
  expect(stats).toMatchObject({ shipped: 7, trainingJobs: 2, awaitingTraining: 1, failed: 0 });
  expect(await model.getStep()).toBe(2);
  const jobPosts = proxy.seen.filter(
    (r) => r.method === "POST" && r.path.endsWith("/training-jobs"),
  );
  expect(jobPosts).toHaveLength(2);
});

it("surfaces a failing job as TrainingFailedError carrying the service's message", async () => {
  const client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "fails",
    baseModel: "toy",
  });
  const same = trainableGroup(1, 1);
  // Sent on purpose: the service fails a job made only of groups without reward signal.
  const err = await model
    .train([same], {}, { pollIntervalMs: 10, noSignal: "send" })
    .catch((e) => e);
  expect(err.name).toBe("TrainingFailedError");
  expect(err.message).toMatch(
    /^RL training job [0-9a-f-]+ failed: Every trajectory group has rewards that are all equal/,
  );
  expect(err.serviceMessage).toMatch(/nothing to learn/);
});

it("keeps logged groups on disk until their training job ran, and trains them after a restart without logging them again", async () => {
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-train-"));
  let failJobs = true;
  proxy = await startFaultProxy(emu.url, ({ method, path: p }) =>
    failJobs && method === "POST" && p.endsWith("/training-jobs")
      ? { kind: "status", status: 503 }
      : undefined,
  );
  const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url, maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "spool-train",
    baseModel: "toy",
  });
  const options = {
    model,
    spoolDir,
    trainEvery: { groups: 2, config: { allowTrainingWithoutLogprobs: true }, pollIntervalMs: 10 },
    // A 503 refuses the job: it is retried, here once and without a wait.
    maxAttempts: 2,
    backoff: { initialDelayMs: 1, maxDelayMs: 1 },
    flushOnExit: false,
    logger: quiet(),
  };
  const first = new TrajectoryShipper(options);
  await first.add(sampleGroup("x"));
  await first.add(sampleGroup("y"));
  const before = await first.close();
  expect(before).toMatchObject({ shipped: 2, trainingFailed: 1, trainingJobs: 0 });
  expect(await readdir(spoolDir)).toHaveLength(2);

  failJobs = false;
  const second = new TrajectoryShipper(options);
  const after = await second.close();
  expect(after).toMatchObject({ shipped: 0, trainingJobs: 1, spooled: 0 });
  expect(await readdir(spoolDir)).toEqual([]);
  expect(proxy.confirmed).toEqual(["x", "y"]);
  expect(await model.getStep()).toBe(1);
});

const jobPostsOf = (p: FaultProxy) =>
  p.seen.filter((r) => r.method === "POST" && r.path.endsWith("/training-jobs"));

it("retries a job creation the service certainly never took (429), without a spool", async () => {
  proxy = await startFaultProxy(emu.url, ({ method, path: p }) =>
    method === "POST" && p.endsWith("/training-jobs") && jobPostsOf(proxy!).length === 1
      ? { kind: "status", status: 429, headers: { "retry-after": "0" } }
      : undefined,
  );
  const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url, maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "retry-create",
    baseModel: "toy",
  });
  const shipper = new TrajectoryShipper({
    model,
    trainEvery: { groups: 2, config: { allowTrainingWithoutLogprobs: true }, pollIntervalMs: 10 },
    flushOnExit: false,
    logger: quiet(),
  });
  await shipper.add(sampleGroup("a"));
  await shipper.add(sampleGroup("b"));
  const stats = await shipper.close();
  expect(stats).toMatchObject({ shipped: 2, trainingJobs: 1, trainingFailed: 0, failed: 0 });
  expect(jobPostsOf(proxy!)).toHaveLength(2);
  expect(await model.getStep()).toBe(1);
});

it("never trains a group twice when a job creation's answer is lost: a restart reports the groups instead", async () => {
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-lost-"));
  proxy = await startFaultProxy(emu.url, ({ method, path: p }) =>
    method === "POST" && p.endsWith("/training-jobs") ? { kind: "lost" } : undefined,
  );
  const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url, maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "lost-create",
    baseModel: "toy",
  });
  const firstLog = quiet();
  const options = (logger: ReturnType<typeof quiet>) => ({
    model,
    spoolDir,
    trainEvery: { groups: 2, config: { allowTrainingWithoutLogprobs: true }, pollIntervalMs: 10 },
    backoff: { initialDelayMs: 1, maxDelayMs: 1 },
    flushOnExit: false,
    logger,
  });
  const first = new TrajectoryShipper(options(firstLog));
  await first.add(sampleGroup("x"));
  await first.add(sampleGroup("y"));
  expect(await first.close()).toMatchObject({ shipped: 2, trainingFailed: 1, failed: 2 });
  expect(firstLog.lines.join("\n")).toMatch(
    /the service may have started the job before its answer was lost, so they are not trained again/,
  );
  expect(jobPostsOf(proxy!)).toHaveLength(1);

  const secondLog = quiet();
  const second = new TrajectoryShipper(options(secondLog));
  const after = await second.close();
  expect(after).toMatchObject({ failed: 2, trainingJobs: 0, trainingFailed: 0, spooled: 2 });
  expect(second.failedGroups()).toEqual([
    expect.objectContaining({ metadata: { key: "x" } }),
    expect.objectContaining({ metadata: { key: "y" } }),
  ]);
  expect(secondLog.lines.join("\n")).toMatch(
    /2 logged group\(s\) .* were in a training job whose creation got no answer/,
  );
  // The one job the service did create is the only one.
  expect(jobPostsOf(proxy!)).toHaveLength(1);
});
