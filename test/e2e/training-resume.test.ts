import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { TrainableModel, TrainingClient, TrajectoryShipper } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Fault, type FaultProxy, sampleGroup, startFaultProxy } from "./fault-proxy.js";

let emu: Emulator;
let proxy: FaultProxy;
// What the proxy does to a job's events polls; undefined passes them through.
let eventsFault: Fault | undefined;
beforeEach(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  eventsFault = undefined;
  proxy = await startFaultProxy(emu.url, ({ path: p }) =>
    p.includes("/events") ? eventsFault : undefined,
  );
});
afterEach(async () => {
  await proxy.close();
  await emu.close();
});

const quiet = () => {
  const lines: string[] = [];
  return { lines, warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
};
const jobPosts = () =>
  proxy.seen.filter((r) => r.method === "POST" && r.path.endsWith("/training-jobs"));

async function setup(name: string) {
  const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url, maxRetries: 0 });
  const model = await TrainableModel.register(client, { project: "p", name, baseModel: "toy" });
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-resume-"));
  const options = (logger: ReturnType<typeof quiet>) => ({
    model,
    spoolDir,
    trainEvery: { groups: 2, config: { allowTrainingWithoutLogprobs: true }, pollIntervalMs: 10 },
    flushOnExit: false,
    logger,
  });
  return { model, spoolDir, options };
}

it("follows a job abandoned at close to its end after a restart, instead of training its groups again", async () => {
  const { model, spoolDir, options } = await setup("resume-close");
  eventsFault = { kind: "hold" };
  const firstLog = quiet();
  const first = new TrajectoryShipper(options(firstLog));
  await first.add(sampleGroup("x"));
  await first.add(sampleGroup("y"));
  // Closed once the job's id is saved (its file in the spool), however long
  // the service took to answer the creation.
  while (!(await readdir(spoolDir)).some((f) => f.endsWith(".job.json")))
    await new Promise((r) => setTimeout(r, 5));
  const before = await first.close({ timeoutMs: 200 });
  expect(before).toMatchObject({ shipped: 2, trainingJobs: 0, trainingAbandoned: 1, spooled: 2 });
  expect(firstLog.lines.join("\n")).toMatch(
    /closed while the training job on 2 group\(s\) [0-9a-f-]+ was still running; it stays in .*\.job\.json and the next start follows it to its end/,
  );
  const files = await readdir(spoolDir);
  expect(files).toHaveLength(1);
  expect(files[0]).toMatch(/\.job\.json$/);

  eventsFault = undefined;
  const second = new TrajectoryShipper(options(quiet()));
  const after = await second.close({ timeoutMs: 10_000 });
  expect(after).toMatchObject({ shipped: 0, trainingJobs: 1, spooled: 0, failed: 0 });
  expect(jobPosts()).toHaveLength(1);
  expect(await model.getStep()).toBe(1);
  expect(await readdir(spoolDir)).toEqual([]);
  expect(proxy.confirmed).toEqual(["x", "y"]);
});

it("counts a job it stopped following as abandoned, and follows it again on the next start", async () => {
  const { model, spoolDir, options } = await setup("resume-polls");
  // A poll error that is not retried stops following at once, as maxPollFailures would.
  eventsFault = { kind: "status", status: 400, body: { detail: "events unavailable" } };
  const firstLog = quiet();
  const first = new TrajectoryShipper(options(firstLog));
  await first.add(sampleGroup("x"));
  await first.add(sampleGroup("y"));
  const before = await first.close({ timeoutMs: 10_000 });
  expect(before).toMatchObject({ trainingJobs: 0, trainingAbandoned: 1, trainingFailed: 0 });
  expect(firstLog.lines.join("\n")).toMatch(
    /stopped following training job [0-9a-f-]+ on 2 group\(s\) \(.*events unavailable.*\); it stays in .*\.job\.json and the next start follows it again/,
  );

  eventsFault = undefined;
  const after = await new TrajectoryShipper(options(quiet())).close({ timeoutMs: 10_000 });
  expect(after).toMatchObject({ trainingJobs: 1, spooled: 0 });
  expect(jobPosts()).toHaveLength(1);
  expect(await model.getStep()).toBe(1);
  expect(await readdir(spoolDir)).toEqual([]);
});

it("keeps the groups of a failed job and reports them on every start, never training them again", async () => {
  const { model, spoolDir, options } = await setup("resume-failed");
  // Equal rewards teach nothing: the emulator fails the job.
  const flat = (key: string) => ({
    ...sampleGroup(key),
    trajectories: sampleGroup(key).trajectories.map((t) => ({ ...t, reward: 1 })),
  });
  const firstLog = quiet();
  // Sent on purpose (by default such groups stay out of the jobs).
  const sendFlat = (log: ReturnType<typeof quiet>) => {
    const o = options(log);
    return { ...o, trainEvery: { ...o.trainEvery, noSignal: "send" as const } };
  };
  const first = new TrajectoryShipper(sendFlat(firstLog));
  await first.add(flat("x"));
  await first.add(flat("y"));
  const before = await first.close({ timeoutMs: 10_000 });
  expect(before).toMatchObject({ trainingFailed: 1, failed: 2, trainingJobs: 0, spooled: 2 });
  expect(firstLog.lines.join("\n")).toMatch(
    /training job [0-9a-f-]+ on 2 group\(s\) failed \(.*rewards that are all equal.*\); the groups are kept in .*\.job\.json, listed by failedGroups\(\), and not trained again/,
  );
  const [file] = await readdir(spoolDir);
  expect(JSON.parse(await readFile(path.join(spoolDir, file!), "utf8")).error).toMatch(
    /rewards that are all equal/,
  );

  const secondLog = quiet();
  const second = new TrajectoryShipper(options(secondLog));
  const after = await second.close({ timeoutMs: 10_000 });
  expect(after).toMatchObject({ failed: 2, trainingJobs: 0, trainingFailed: 0, spooled: 2 });
  expect(second.failedGroups()).toEqual([
    expect.objectContaining({ metadata: { key: "x" } }),
    expect.objectContaining({ metadata: { key: "y" } }),
  ]);
  expect(secondLog.lines.join("\n")).toMatch(
    /2 group\(s\) of training job [0-9a-f-]+, which failed \(.*\), are kept in .*\.job\.json and not trained again/,
  );
  expect(jobPosts()).toHaveLength(1);
  expect(await model.getStep()).toBe(0);
});

it("resolves a spooled job the service does not know (404): its groups are reported failed, not followed forever", async () => {
  const { spoolDir, options } = await setup("resume-unknown");
  const entries = ["x", "y"].map((key, i) => ({
    id: `0000${i}`,
    split: "train",
    group: sampleGroup(key),
    logged: true,
  }));
  const job = { id: "00009", jobId: randomUUID(), stepBefore: 0, entries };
  await writeFile(path.join(spoolDir, "00009.job.json"), JSON.stringify(job));

  const firstLog = quiet();
  const first = new TrajectoryShipper(options(firstLog));
  const stats = await first.close({ timeoutMs: 10_000 });
  expect(stats).toMatchObject({ failed: 2, trainingFailed: 1, trainingAbandoned: 0, spooled: 2 });
  expect(first.failedGroups()).toEqual([
    expect.objectContaining({ metadata: { key: "x" } }),
    expect.objectContaining({ metadata: { key: "y" } }),
  ]);
  expect(firstLog.lines.join("\n")).toMatch(
    new RegExp(
      `training job ${job.jobId} on 2 group\\(s\\) failed \\(the service does not know this job \\(404`,
    ),
  );
  const saved = JSON.parse(await readFile(path.join(spoolDir, "00009.job.json"), "utf8"));
  expect(saved.error).toMatch(/does not know this job/);

  // The next start reports the groups again without asking the service about the job.
  const polls = proxy.seen.filter((r) => r.path.includes("/events")).length;
  const second = new TrajectoryShipper(options(quiet()));
  expect(await second.close({ timeoutMs: 10_000 })).toMatchObject({ failed: 2, trainingFailed: 0 });
  expect(proxy.seen.filter((r) => r.path.includes("/events"))).toHaveLength(polls);
  expect(jobPosts()).toHaveLength(0);
});
