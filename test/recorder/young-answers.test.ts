import { expect, it } from "vitest";
import { runFixture } from "../helpers/fixture-process.js";

it("lets an answer the caller dropped die young: what outlives the call is the recorder's copy, not the SDK's objects", async () => {
  // In a child process run with --expose-gc, so that it can run the young
  // generation's collections itself and no test runner's objects count.
  const seen = await runFixture<{ keptKB: number; recordedKB: number }>(
    "test/recorder/fixtures/young-answers.ts",
    ["30"],
    { exposeGc: true },
  );
  // A 512-token top-5 answer the caller keeps: ~840 KB in the old generation.
  expect(seen.keptKB).toBeGreaterThan(400);
  // Before the fix, a closure set per call as a new own property of the SDK's
  // promise (its asResponse) kept every answer through the young collections:
  // ~910 KB a call, the answer and the copy. The copy alone is ~200 KB.
  expect(seen.recordedKB).toBeLessThan(seen.keptKB / 2);
}, 60_000);
