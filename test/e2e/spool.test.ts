import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runChild } from "./child.js";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.js";

let emu: Emulator;
let proxy: FaultProxy;
let hold = true;
let slowMs = 0;
beforeEach(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  hold = true;
  slowMs = 0;
  let logs = 0;
  // The first three logs go through; later ones hang unanswered until the restart.
  proxy = await startFaultProxy(emu.url, ({ path }) => {
    if (!path.endsWith("/log")) return undefined;
    logs += 1;
    if (slowMs > 0) return { kind: "slow", delayMs: slowMs };
    return hold && logs > 3 ? { kind: "hold" } : undefined;
  });
});
afterEach(async () => {
  await proxy.close();
  await emu.close();
});

const run = (args: string[]) => runChild("ship-child.ts", args);

it("replays the spool after the process is killed mid-shipping: nothing lost, nothing duplicated", async () => {
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const first = run(["ship", proxy.url, spoolDir, "10"]);
  await first.waitFor(/added 10/);
  await first.waitFor(/shipped 3/);
  first.proc.kill("SIGKILL");
  await first.exit;
  expect(proxy.confirmed).toEqual(["k0", "k1", "k2"]);
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
  // Answers take half a second, so at SIGTERM every group is still waiting for its answer.
  slowMs = 500;
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-"));
  const proc = run(["sigterm", proxy.url, spoolDir, "5"]);
  await proc.waitFor(/added 5/);
  expect(proc.output()).not.toMatch(/shipped [1-5]/);
  proc.proc.kill("SIGTERM");
  await proc.exit;
  // The default meaning of SIGTERM is kept: the process ends by the signal
  // (tsx's wrapper reports it as exit code 143).
  expect(proc.proc.signalCode === "SIGTERM" || proc.proc.exitCode === 143).toBe(true);
  expect([...proxy.confirmed].sort()).toEqual(["k0", "k1", "k2", "k3", "k4"]);
  expect(await readdir(spoolDir)).toEqual([]);
}, 20_000);
