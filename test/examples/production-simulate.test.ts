// examples/production/simulate.ts as a user runs it: simulated conversations
// with random thumbs, then the store's counts, which must be what the store
// on disk holds when opened again; and nothing on stderr.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { TrajectoryStore } from "trajectory-recorder/store";
import { afterEach, expect, it } from "vitest";
import { runScript } from "../quiet/run-example.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("runs simulated users and prints the counts the store holds", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "simulate-store-"));
  dirs.push(dir);
  const run = await runScript("examples/production/simulate.ts", [
    "--users",
    "5",
    "--turns",
    "3",
    "--seed",
    "7",
    "--store",
    dir,
  ]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const counts = JSON.parse(run.stdout.trim().split("\n").at(-1) as string);

  const store = await TrajectoryStore.open({ dir });
  try {
    const all = store.list({ limit: 10_000 });
    expect(counts).toEqual({
      trajectories: all.length,
      rewarded: all.filter((t) => t.reward !== null).length,
      eligible: all.filter((t) => t.eligible === true).length,
      thumbs_up: all.filter((t) => t.reward === 1).length,
    });
    // One trajectory per simulated user, each ended after its three turns.
    expect(all.map((t) => t.session).sort()).toEqual([
      "user-1",
      "user-2",
      "user-3",
      "user-4",
      "user-5",
    ]);
    for (const t of all) {
      expect(t).toMatchObject({ status: "finished", calls: 3, interrupted: false });
      expect(t.reward === null || t.reward === 0 || t.reward === 1).toBe(true);
    }
    expect(counts.rewarded).toBeGreaterThan(0);
    expect(run.stdout).toContain(
      `${counts.trajectories} trajectories, ${counts.rewarded} rewarded`,
    );
  } finally {
    await store.close();
  }
}, 120_000);
