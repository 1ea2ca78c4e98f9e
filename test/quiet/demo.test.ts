// Our own defaults pass our own checks: the demo, run as `npm run demo` and
// as `npx trajectory-recorder demo` run it, writes nothing to stderr (no check
// finding, no warning).
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { runScript } from "./run-example.js";

it("npm run demo (examples/demo/main.ts) trains and writes nothing to stderr", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "quiet-demo-"));
  const run = await runScript("examples/demo/main.ts", [
    "--steps",
    "2",
    "--report",
    path.join(dir, "report.html"),
  ]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/report written to/);
}, 180_000);

it("trajectory-recorder demo writes nothing to stderr", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "quiet-cli-demo-"));
  const run = await runScript("src/cli/index.ts", [
    "demo",
    "--steps",
    "2",
    "--report",
    path.join(dir, "report.html"),
  ]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/on checkpoint \d+: reward/);
}, 180_000);
