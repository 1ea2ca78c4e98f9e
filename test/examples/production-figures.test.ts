// examples/production/figures.ts as a user runs it, small: a store of
// late-rated production sessions, some the infrastructure failed, then the
// loop's pieces through the library and through the commands. What must hold
// whatever the numbers: infra failures counted and never sent to training,
// every trajectory sent carrying its policy versions, stale groups dropped
// and counted, the commands selecting the same SFT rows as the library.
import { expect, it } from "vitest";
import { runScript } from "../quiet/run-example.js";

it("measures the loop: infra failures counted and never trained, policy versions on every trajectory sent, stale groups dropped, the CLI as the library", async () => {
  const run = await runScript(
    "examples/production/figures.ts",
    ["--users", "48", "--flaky", "0.3", "--steps", "2", "--seed", "2"],
    400_000,
  );
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const f = JSON.parse(run.stdout.trim().split("\n").at(-1) as string);
  expect(f.store.sessions).toBe(48);
  expect(f.store.infra_failures).toBeGreaterThan(0);
  // SFT from the best: a job completed, from the thumbs up only.
  expect(f.sft.job).toBe("completed");
  expect(f.sft.rows + f.sft.infra_failures_left_out).toBe(f.sft.counts.rows);
  expect(f.sft.counts.dropped.reward).toBe(f.store.thumbs_down);
  // The sessions' infra failures were counted and taken out of the job.
  expect(f.sessions_as_groups.infra_failures).toBeGreaterThan(0);
  expect(f.sessions_as_groups.metric).toBe(f.sessions_as_groups.infra_failures);
  // Replayed: one mean reward per step, and training raised it.
  expect(f.replay.mean_reward_per_step).toHaveLength(3);
  expect(f.replay.mean_reward_per_step.at(-1)).toBeGreaterThan(f.replay.mean_reward_per_step[0]);
  // Stale: every session group, sampled at step 0, dropped past step 4.
  expect(f.stale.step).toBeGreaterThan(4);
  expect(f.stale).toMatchObject({
    stale_groups: f.stale.of,
    skipped: "stale_policy",
    logged: true,
  });
  expect(f.stale.metric).toBe(f.stale.of);
  // What the jobs were sent: versions on every trajectory, no infra failure.
  expect(f.sent.trajectories).toBeGreaterThan(0);
  expect(f.sent.with_policy_versions).toBe(f.sent.trajectories);
  expect(f.sent.infra_failures).toBe(0);
  // The commands select the rows the library selects (before it leaves out
  // the infra-failed sessions, which sft --from-store does not).
  expect(f.cli.sft_rows).toBe(f.sft.counts.rows);
  expect(f.cli.sft_step).toBe(1);
  expect(f.cli.replay_mean_reward_per_step).toHaveLength(3);
}, 420_000);
