import { expect, it } from "vitest";
import { runFixture } from "../helpers/fixture-process.js";

it("switches Node's async hooks off whenever no rollout is running", async () => {
  // In a child process: the test runner may hold async hooks of its own.
  const seen = await runFixture<Record<string, boolean>>("test/recorder/fixtures/idle-hooks.ts");
  // Where AsyncLocalStorage needs no hooks (AsyncContextFrame), none are ever on.
  const inRollout = seen.storageUsesHooks;
  expect(seen).toEqual({
    before: false,
    during: inRollout,
    afterOne: false,
    whileOneRuns: inRollout,
    secondStillCurrent: true,
    afterBoth: false,
    afterAFailedOne: false,
    again: inRollout,
    againCurrent: true,
    storageUsesHooks: inRollout,
  });
});
