import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Child, runChild } from "./child.js";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.js";

let emu: Emulator;
const children: Child[] = [];
let proxy: FaultProxy;
let hold = true;
let slowMs = 0;
beforeEach(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  hold = true;
  slowMs = 0;
  // Groups k0-k2 go through; later ones hang unanswered until the restart.
  // (By key, not by the order requests arrive in: with two in flight, k3's
  // request may arrive before k2's.)
  proxy = await startFaultProxy(emu.url, ({ path, keys }) => {
    if (!path.endsWith("/log")) return undefined;
    if (slowMs > 0) return { kind: "slow", delayMs: slowMs };
    return hold && keys.some((k) => Number(k.slice(1)) >= 3) ? { kind: "hold" } : undefined;
  });
});
afterEach(async () => {
  // A child left running by a failed assertion would keep shipping.
  for (const child of children.splice(0)) child.proc.kill("SIGKILL");
  await proxy.close();
  await emu.close();
});

const run = (args: string[]) => {
  const child = runChild("ship-child.ts", args);
  children.push(child);
  return child;
};

const groupFiles = async (dir: string) =>
  (await readdir(dir)).filter((f) => f.endsWith(".group.json"));

/** Polls `dir` until it holds `count` group files. */
async function waitForGroupFiles(dir: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await groupFiles(dir)).length !== count) {
    if (Date.now() > deadline) {
      throw new Error(`expected ${count} group files in ${dir}: ${await groupFiles(dir)}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

it("replays the spool after the process is killed mid-shipping: nothing lost, nothing duplicated", async () => {
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const first = run(["ship", proxy.url, spoolDir, "10"]);
  await first.waitFor(/pid \d+\n/);
  // The process killed below must be the one shipping: were it a wrapper, the
  // shipping process would live on and race the resumed one.
  expect(Number(/pid (\d+)/.exec(first.output())![1])).toBe(first.proc.pid);
  await first.waitFor(/added 10/);
  await first.waitFor(/shipped 3/);
  // `shipped` counts a group before its spool file is removed: kill only once
  // the third group's file is gone (a kill before that would leave it to be
  // logged again by the restart, which the shipper allows).
  await waitForGroupFiles(spoolDir, 7);
  first.proc.kill("SIGKILL");
  await first.exit;
  expect(first.proc.signalCode).toBe("SIGKILL");
  // Two requests are in flight at once: k1 and k2 may be confirmed in either order.
  expect([...proxy.confirmed].sort()).toEqual(["k0", "k1", "k2"]);
  expect((await readdir(spoolDir)).filter((f) => f.endsWith(".json"))).toHaveLength(7);

  hold = false;
  const second = run(["resume", proxy.url, spoolDir]);
  await second.waitFor(/stats /);
  expect(await second.exit).toBe(0);
  const stats = JSON.parse(/stats (.*)/.exec(second.output())![1]!);
  expect(stats).toMatchObject({ shipped: 7, failed: 0, spooled: 0, queued: 0 });
  expect([...proxy.confirmed].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
  expect(await readdir(spoolDir)).toEqual([]);
}, 20_000);

it("flushes on SIGTERM within its deadline, then exits", async () => {
  hold = false;
  // Answers take 1.2 s, so at SIGTERM every group is still waiting for
  // its answer (even on a loaded machine, where the adds take longer).
  slowMs = 1200;
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const proc = run(["sigterm", proxy.url, spoolDir, "5"]);
  await proc.waitFor(/added 5/);
  expect(proc.output()).not.toMatch(/shipped [1-5]/);
  proc.proc.kill("SIGTERM");
  await proc.exit;
  // The default meaning of SIGTERM is kept: the process ends by the signal.
  expect(proc.proc.signalCode).toBe("SIGTERM");
  expect([...proxy.confirmed].sort()).toEqual(["k0", "k1", "k2", "k3", "k4"]);
  expect(await readdir(spoolDir)).toEqual([]);
}, 20_000);

it("refuses a second shipper on a spool directory another running process ships from, naming that process", async () => {
  hold = false;
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const first = run(["ship", proxy.url, spoolDir, "3"]);
  await first.waitFor(/added 3/);
  const second = run(["resume", proxy.url, spoolDir]);
  expect(await second.exit).toBe(1);
  expect(second.output()).toContain(
    `SpoolLockedError: The spool directory ${spoolDir} is in use by another shipper (process ${first.proc.pid}, which is still running)`,
  );
  // The second one shipped nothing: each group went out once, from the first.
  await first.waitFor(/shipped 3/);
  await waitForGroupFiles(spoolDir, 0);
  expect([...proxy.confirmed].sort()).toEqual(["k0", "k1", "k2"]);
}, 20_000);

it("takes over the lock of a shipper that was killed, and says so", async () => {
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const first = run(["ship", proxy.url, spoolDir, "0"]);
  await first.waitFor(/added 0/);
  first.proc.kill("SIGKILL");
  await first.exit;
  const second = run(["resume", proxy.url, spoolDir]);
  expect(await second.exit).toBe(0);
  expect(second.output()).toContain(
    `took over the lock on ${spoolDir} from process ${first.proc.pid}`,
  );
  expect(await readdir(spoolDir)).toEqual([]);
}, 20_000);
