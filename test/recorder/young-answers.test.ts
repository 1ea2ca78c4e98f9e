import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

it("lets an answer the caller dropped die young: what outlives the call is the recorder's copy, not the SDK's objects", async () => {
  // In a child process run with --expose-gc, so that it can run the young
  // generation's collections itself and no test runner's objects count.
  const { stdout } = await promisify(execFile)(
    `${root}node_modules/.bin/tsx`,
    ["test/recorder/fixtures/young-answers.ts", "30"],
    { cwd: root, env: { ...process.env, NODE_OPTIONS: "--expose-gc" } },
  );
  const seen = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as {
    keptKB: number;
    recordedKB: number;
  };
  // A 512-token top-5 answer the caller keeps: ~840 KB in the old generation.
  expect(seen.keptKB).toBeGreaterThan(400);
  // Before the fix, a closure set per call as a new own property of the SDK's
  // promise (its asResponse) kept every answer through the young collections:
  // ~910 KB a call, the answer and the copy. The copy alone is ~200 KB.
  expect(seen.recordedKB).toBeLessThan(seen.keptKB / 2);
}, 60_000);
