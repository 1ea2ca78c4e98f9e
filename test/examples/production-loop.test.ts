// examples/production/loop.ts as a user runs it: simulated users rate the
// chat's answers, the trainer turns their feedback into SFT-from-best rows
// and replayed RL groups every K events, the service switches checkpoints,
// and the users' satisfaction rises; nothing on stderr.
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

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

it("trains on production feedback every K events and the simulated users' satisfaction rises", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "loop-store-"));
  dirs.push(dir);
  const run = await runScript(
    "examples/production/loop.ts",
    ["--rounds", "6", "--users", "24", "--every", "16", "--seed", "3", "--store", dir],
    240_000,
  );
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const summary = JSON.parse(run.stdout.trim().split("\n").at(-1) as string);
  expect(summary.satisfaction).toHaveLength(6);
  expect(summary.trainings).toBeGreaterThanOrEqual(4);
  expect(summary.step).toBeGreaterThanOrEqual(summary.trainings);
  // The last two rounds please clearly more users than the first two.
  const [first, last] = [summary.satisfaction.slice(0, 2), summary.satisfaction.slice(-2)];
  expect(mean(last)).toBeGreaterThan(mean(first) + 0.15);
  expect(run.stdout).toMatch(/trainer: \d+ feedback events: SFT on \d+ best-rated row/);
  expect(run.stdout).toMatch(/the chat now serves step \d+/);

  // Every session records the checkpoint that served it, and those the
  // flaky upstream hit are marked as infrastructure failures.
  const store = await TrajectoryStore.open({ dir });
  try {
    const all = store.list();
    expect(all).toHaveLength(6 * 24);
    const stored = all.map((s) => store.get(s.id)?.trajectory);
    for (const t of stored) expect(typeof t?.initial_policy_version).toBe("number");
    const versions = new Set(stored.map((t) => t?.initial_policy_version));
    expect(versions.size).toBeGreaterThan(2);
    const marked = stored.filter((t) => t?.metadata?.infra_failure === "upstream_error");
    expect(marked.length).toBe(summary.infra_failures);
  } finally {
    await store.close();
  }
}, 300_000);
