// The worked migration (examples/openai-migration): an OpenAI RFT dataset and
// its string_check grader trained on the embedded emulator; the grader's
// score rises on the training items, and nothing is written to stderr.
import { expect, it } from "vitest";
import { runScript } from "./run-example.js";

it("examples/openai-migration/main.ts trains the ticket router, the score rising, with no warning", async () => {
  const run = await runScript("examples/openai-migration/main.ts", ["--steps", "4"]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const trained = /training items \(4 steps\): grader ([\d.]+) before -> ([\d.]+) after/.exec(
    run.stdout,
  );
  expect(trained, run.stdout).not.toBeNull();
  expect(Number(trained?.[2])).toBeGreaterThan(Number(trained?.[1]) + 0.2);
  expect(run.stdout).toMatch(
    /held-out items \(12\): grader [\d.]+ on checkpoint 0 -> [\d.]+ on checkpoint 4/,
  );
}, 180_000);
