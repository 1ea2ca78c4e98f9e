// A look-up agent (a tool returns a word; the reply must be that word) learns
// on the emulator as on a language model: the policy ends its answers, so an
// exact-match grader has a way up, and the honest way is the one it takes
// for exact match (the right tool called, one-word replies). 8 steps of 8 scenarios x 8
// rollouts, as issue #34 asks; `scripts/emulator-learning.ts` runs 10 seeds.
import { expect, it } from "vitest";
import { runShape, SHAPES } from "./learning-agents.js";

const run = (shape: string, seed: number) =>
  runShape({
    shape: SHAPES[shape]!,
    seed,
    learningRate: 2e-5,
    steps: 8,
    scenarios: 8,
    groupSize: 8,
  });

it("an agent graded by exact match learns to look the word up and answer with it alone", async () => {
  const r = await run("lookup-exact", 1);
  expect(r.steps[0]!).toBeLessThan(0.4);
  expect(r.final).toBeGreaterThanOrEqual(0.8);
  expect(r.honest!.rightTool).toBeGreaterThanOrEqual(0.9);
  expect(r.honest!.answerWords).toBeLessThan(1.2);
}, 120_000);

it("graded by contains, it learns to look the word up and say it (the length is left free)", async () => {
  const r = await run("lookup-contains", 1);
  expect(r.final).toBeGreaterThanOrEqual(0.8);
  // The honest behaviour is what gains: the right tool, the word said. A
  // contains grader does not ask the answer to stop, so over seeds most
  // learn to run on (MODEL.md's table): not asserted here either way.
  expect(r.honest!.rightTool).toBeGreaterThanOrEqual(0.9);
}, 180_000);

it("an OpenAI Agents SDK agent graded by exact match learns while calling its tool", async () => {
  const r = await run("agents-sdk-exact", 1);
  expect(r.final).toBeGreaterThanOrEqual(0.8);
  expect(r.final).toBeGreaterThan(r.steps[0]! + 0.3);
  expect(r.honest!.rightTool).toBeGreaterThanOrEqual(0.9);
}, 180_000);
