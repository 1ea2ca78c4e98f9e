// The agent shapes users write learn on the emulator, at ART's default
// learning rate (5e-6) and the README's (2e-5), in 4 steps of 4 scenarios x 4
// rollouts, and none collapses onto one tool at 1e-4. Each run is seeded;
// `scripts/emulator-learning.ts` measures the same runs over 10 seeds.
import { describe, expect, it } from "vitest";
import { runShape, SHAPES } from "./learning-agents.js";

const run = (shape: string, learningRate: number, seed: number) =>
  runShape({ shape: SHAPES[shape]!, seed, learningRate });

describe("agents learn on the emulator in 4 steps of 16 rollouts", () => {
  for (const learningRate of [5e-6, 2e-5]) {
    it(`a lookup-then-answer agent with two tools and tool_choice "required" (lr ${learningRate})`, async () => {
      const r = await run("lookup-answer-forced", learningRate, 1);
      expect(r.steps[0]!).toBeLessThan(0.5);
      expect(r.final).toBeGreaterThanOrEqual(0.8);
    });
    it(`a lookup-then-answer agent with two tools, unforced (lr ${learningRate})`, async () => {
      const r = await run("lookup-answer", learningRate, 3);
      expect(r.steps[0]!).toBeLessThan(0.5);
      expect(r.final).toBeGreaterThanOrEqual(0.8);
    });
  }
  it("a one-tool agent that must call its tool only for the question it fits", async () => {
    const r = await run("pick-1-tool", 5e-6, 1);
    expect(r.final).toBeGreaterThanOrEqual(0.8);
  });
  for (const shape of ["pick-2-tools", "pick-2-tools-forced"])
    it(`the quickstart's two-tool agent (${shape})`, async () => {
      const r = await run(shape, 2e-5, 2);
      expect(r.steps[0]!).toBeLessThan(0.6);
      expect(r.final).toBeGreaterThanOrEqual(0.8);
    });
  it("a three-tool agent, forced or not, moves well above where it started", async () => {
    for (const shape of ["pick-3-tools", "pick-3-tools-forced"]) {
      const r = await run(shape, 2e-5, 2);
      expect(r.final).toBeGreaterThan(r.steps[0]! + 0.3);
    }
  });
});

describe("a learning rate of 1e-4", () => {
  for (const shape of [
    "pick-2-tools",
    "pick-2-tools-forced",
    "pick-3-tools",
    "pick-3-tools-forced",
  ])
    it(`does not collapse ${shape} onto one tool whatever the question`, async () => {
      const r = await run(shape, 1e-4, 1);
      expect(r.collapsed).toBe(false);
      expect(r.final).toBeGreaterThan(0.6);
    });
});

it("gives the same run for the same seed", async () => {
  const a = await run("lookup-answer-forced", 2e-5, 4);
  const b = await run("lookup-answer-forced", 2e-5, 4);
  expect(b).toEqual(a);
});
