import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

it("switches Node's async hooks off whenever no rollout is running", async () => {
  // In a child process: the test runner may hold async hooks of its own.
  const { stdout } = await promisify(execFile)(
    `${root}node_modules/.bin/tsx`,
    ["test/recorder/fixtures/idle-hooks.ts"],
    { cwd: root },
  );
  const seen = JSON.parse(stdout.trim().split("\n").at(-1) ?? "");
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
