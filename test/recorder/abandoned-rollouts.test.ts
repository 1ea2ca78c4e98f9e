import { expect, it } from "vitest";
import { runFixture } from "../helpers/fixture-process.js";

it("frees a rollout that can never settle and stops counting it as running", async () => {
  // In a child process run with --expose-gc: the heap is measured after real
  // collections, and no test runner holds async hooks of its own.
  const seen = await runFixture<{
    heldMB: number;
    beforeMB: number;
    afterMB: number;
    running: number;
    hooksOn: boolean;
  }>("test/recorder/fixtures/abandoned-rollouts.ts", ["300"], { exposeGc: true });
  // 300 rollouts, each left waiting on a promise nobody resolves after a
  // 2,000-token answer with logprobs: ~250 MB while they were reachable.
  expect(seen.heldMB - seen.beforeMB).toBeGreaterThan(100);
  // Before the fix: every rollout counted as running forever (hooks stayed
  // on) and ~85 MB of their SDK logprob lists stayed reachable.
  expect(seen.running).toBe(0);
  expect(seen.hooksOn).toBe(false);
  expect(seen.afterMB - seen.beforeMB).toBeLessThan(10);
}, 60_000);
