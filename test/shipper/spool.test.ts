// The spool directory as a shipper finds it and leaves it.
import { mkdtemp, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { TrainableModel, TrainingClient, TrajectoryShipper } from "trajectory-recorder";
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

const logged = () => {
  const lines: string[] = [];
  return { lines, warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
};
const open = (logger = logged()) =>
  new TrajectoryShipper({ model, spoolDir, flushOnExit: false, logger });

it("does not count a spool file that is gone by the time it is read as unreadable", async () => {
  // Listed, then not there to open: as if someone removed it in between.
  await symlink(path.join(spoolDir, "removed.json"), path.join(spoolDir, "0001.group.json"));
  const logger = logged();
  const shipper = open(logger);
  const stats = await shipper.close();
  expect(stats).toMatchObject({ unreadable: 0, shipped: 0, failed: 0 });
  expect(logger.lines.join("\n")).not.toMatch(/could not read spool file/);
});
