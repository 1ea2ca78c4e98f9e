// The spool directory as a shipper finds it and leaves it: one shipper at a
// time, leftovers of a killed process, files that go away under it.
import { mkdtemp, readdir, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  SpoolLockedError,
  TrainableModel,
  TrainingClient,
  TrajectoryShipper,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, expect, it } from "vitest";

let emu: Emulator;
let model: TrainableModel;
let spoolDir: string;
beforeEach(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  const client = new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 });
  model = await TrainableModel.register(client, { project: "p", name: "n", baseModel: "toy" });
  spoolDir = await mkdtemp(path.join(tmpdir(), "spool-dir-"));
});
afterEach(() => emu.close());

const group = (key: string) => ({
  trajectories: [{ reward: 1, messages_and_choices: [{ role: "user" as const, content: key }] }],
  metadata: { key },
});
const logged = () => {
  const lines: string[] = [];
  return { lines, warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
};
const open = (logger = logged()) =>
  new TrajectoryShipper({ model, spoolDir, flushOnExit: false, logger });

it("removes temporary files left by a write cut short when it starts, and says how many", async () => {
  // What a process killed in the middle of writing a group leaves behind.
  const torn = ".00001795426003857-00000001-3f2a9c1d.group.json.0a1b2c3d4e5f.tmp";
  await writeFile(path.join(spoolDir, torn), '{"id":"00001795426003857-000');
  await writeFile(path.join(spoolDir, "notes.txt"), "not the shipper's");
  const logger = logged();
  const shipper = open(logger);
  await shipper.add(group("after"));
  const stats = await shipper.close();
  expect(await readdir(spoolDir)).toEqual(["notes.txt"]);
  expect(stats).toMatchObject({ shipped: 1, unreadable: 0, failed: 0 });
  expect(logger.lines.join("\n")).toMatch(
    /removed 1 temporary file\(s\) from .*spool-dir-.*, left by writes that a stopped process cut short/,
  );
});

it("refuses a second shipper on a spool directory in use, before it can take a group, naming the directory and the process", async () => {
  const first = open();
  await first.add(group("first"));
  let error: unknown;
  try {
    open();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(SpoolLockedError);
  const locked = error as SpoolLockedError;
  expect(locked.message).toContain(`The spool directory ${path.resolve(spoolDir)} is in use`);
  expect(locked.message).toContain(`pid ${process.pid}`);
  expect(locked.message).toMatch(/give this one its own spoolDir/);
  expect(locked.holder).toMatchObject({ pid: process.pid });
  // The first shipper goes on as if nothing happened.
  await first.add(group("second"));
  expect(await first.close()).toMatchObject({ shipped: 2, failed: 0, spooled: 0 });
});

it("lets a new shipper use the directory once the one before it closed", async () => {
  const first = open();
  await first.add(group("a"));
  expect(() => open()).toThrow(SpoolLockedError);
  await first.close();
  expect(await readdir(spoolDir)).toEqual([]);

  const next = open();
  await next.add(group("b"));
  expect(await next.close()).toMatchObject({ shipped: 1, failed: 0 });
  expect(await readdir(spoolDir)).toEqual([]);
});

it("does not count a spool file that is gone by the time it is read as unreadable", async () => {
  // Listed, then not there to open: as if someone removed it in between.
  await symlink(path.join(spoolDir, "removed.json"), path.join(spoolDir, "0001.group.json"));
  const logger = logged();
  const shipper = open(logger);
  const stats = await shipper.close();
  expect(stats).toMatchObject({ unreadable: 0, shipped: 0, failed: 0 });
  expect(logger.lines.join("\n")).not.toMatch(/could not read spool file/);
});

it("leaves spool files of the wrong shape in place, logs and counts them, and ships the rest", async () => {
  const good = { id: "00002", split: "train", group: group("good"), logged: false };
  const files: Record<string, unknown> = {
    "00001.group.json": null,
    "00003.group.json": { id: "00003", split: "train", logged: false },
    "00004.group.json": { ...good, id: "elsewhere" },
    "00005.job.json": { id: "00005", jobId: "j", stepBefore: 0 },
    "00006.job.json": { id: "00006", jobId: "j", stepBefore: 0, entries: [null] },
  };
  for (const [name, value] of Object.entries(files))
    await writeFile(path.join(spoolDir, name), JSON.stringify(value));
  await writeFile(path.join(spoolDir, "00002.group.json"), JSON.stringify(good));
  const logger = logged();
  const shipper = new TrajectoryShipper({
    model,
    spoolDir,
    flushOnExit: false,
    logger,
    // Kept for training although one trajectory has no reward signal: the spool files must stay.
    trainEvery: { groups: 5, noSignal: "send" },
  });
  await shipper.add(group("new"));
  const stats = await shipper.close();
  expect(stats).toMatchObject({ unreadable: 5, shipped: 2, failed: 0 });
  const text = logger.lines.join("\n");
  expect(text).toMatch(/00001\.group\.json \(not a spool file: the file is not an object\)/);
  expect(text).toMatch(
    /00003\.group\.json \(not a spool file: group: expected a trajectory group\)/,
  );
  expect(text).toMatch(/00004\.group\.json \(not a spool file: its id elsewhere is not its name\)/);
  expect(text).toMatch(/00005\.job\.json \(not a spool file: entries: expected an array\)/);
  expect(text).toMatch(/00006\.job\.json \(not a spool file: entries\[0\] is not an object\)/);
  const left = (await readdir(spoolDir)).filter((f) => f.endsWith(".json")).sort();
  // The two shipped groups wait for their training job; every bad file is still there.
  expect(left).toEqual(expect.arrayContaining(Object.keys(files)));
  expect(left).toHaveLength(7);
});
