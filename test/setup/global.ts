// vitest's global setup: finds redis-server and Chromium, installs them where
// they are missing and this machine can (see system-tools.ts), and hands
// their paths to the tests (`inject("systemTools")`); installs the real wandb
// Python client into a cached venv (see python-wandb.ts; `inject("wandbPython")`).
import type { TestProject } from "vitest/node";
import { ensureWandbPython, pythonMissing } from "./python-wandb.js";
import { cannotInstall, findTools, installMissing, missingTools } from "./system-tools.js";

export default function setup(project: TestProject): void {
  let tools = findTools();
  const missing = missingTools(tools);
  // Where it cannot install them, vitest.config.ts has left out their tests and said so.
  if (missing.length > 0 && cannotInstall() === undefined) {
    installMissing(missing);
    tools = findTools();
    const still = missingTools(tools);
    if (still.length > 0)
      throw new Error(
        `vitest global setup: apt-get installed ${still.map((t) => t.pkg).join(" ")}, but ${still
          .map((t) => t.names.join(" or "))
          .join(", ")} is still not on the PATH (${process.env.PATH}).`,
      );
  }
  project.provide("systemTools", tools);
  // The real wandb client, in a cached venv (vitest.config.ts left its test out where Python cannot be had).
  project.provide("wandbPython", pythonMissing() ? undefined : ensureWandbPython());
}
