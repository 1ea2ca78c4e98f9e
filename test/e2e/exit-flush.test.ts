import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runChild } from "./child.js";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.js";

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

const statsOf = (output: string) => JSON.parse(/stats (.*)/.exec(output)![1]!);

it("flushes on beforeExit: groups added by a script that just ends still arrive", async () => {
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-exit-"));
  const child = runChild("exit-child.ts", [proxy.url, spoolDir, "3", "100", "5000"]);
  expect(await child.exit).toBe(0);
  expect(child.output()).toMatch(/added 3/);
  expect([...proxy.confirmed].sort()).toEqual(["e0", "e1", "e2"]);
  expect(statsOf(child.output())).toMatchObject({ shipped: 3, failed: 0, queued: 0 });
  expect(await readdir(spoolDir)).toEqual([]);
}, 20_000);

it("gives the beforeExit flush a deadline: past exitTimeoutMs it closes, counting and keeping what is left", async () => {
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-exit-"));
  const started = Date.now();
  const child = runChild("exit-child.ts", [proxy.url, spoolDir, "2", "never", "300"]);
  expect(await child.exit).toBe(0);
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  expect(proxy.confirmed).toEqual([]);
  expect(child.output()).toMatch(
    /closed after 0 ms with 2 group\(s\) not shipped; they stay in .* and are replayed on the next start/,
  );
  expect(statsOf(child.output())).toMatchObject({ shipped: 0, failed: 2, queued: 0, spooled: 2 });
  expect(await readdir(spoolDir)).toHaveLength(2);
}, 20_000);

it("flushes on SIGINT (Ctrl-C) without a spool, then ends by the signal", async () => {
  // Each log waits 300 ms first, so at SIGINT every group is still queued or in flight.
  const child = runChild("exit-child.ts", [proxy.url, "-", "4", "300", "5000", "wait"]);
  await child.waitFor(/added 4/);
  expect(proxy.confirmed).toEqual([]);
  child.proc.kill("SIGINT");
  await child.exit;
  expect(child.proc.signalCode).toBe("SIGINT");
  expect([...proxy.confirmed].sort()).toEqual(["e0", "e1", "e2", "e3"]);
}, 60_000);

it("says how many groups process.exit() left behind, and where they are", async () => {
  const noSpool = runChild("exit-child.ts", [proxy.url, "-", "3", "never", "5000", "exit"]);
  expect(await noSpool.exit).toBe(0);
  expect(noSpool.output()).toMatch(
    /the process exited with 3 group\(s\) not shipped, without waiting for them; they are lost/,
  );
  const spoolDir = await mkdtemp(path.join(tmpdir(), "spool-exit-"));
  const spooled = runChild("exit-child.ts", [proxy.url, spoolDir, "2", "never", "5000", "exit"]);
  expect(await spooled.exit).toBe(0);
  expect(spooled.output()).toMatch(
    /the process exited with 2 group\(s\) not shipped, without waiting for them; they stay in .* and are shipped by the next start/,
  );
  expect((await readdir(spoolDir)).filter((f) => f.endsWith(".group.json"))).toHaveLength(2);
}, 60_000);
