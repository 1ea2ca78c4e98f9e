// `trajectory-recorder rft` as a user runs it: an OpenAI RFT dataset and its
// grader, trained offline on the embedded emulator, the grader's score per
// step; bad input refused before anything runs, naming the field.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, expect, it } from "vitest";
import { cli } from "./run.js";

const fixture = (name: string) => path.join(import.meta.dirname, "../migrate/fixtures", name);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tr-rft-"));
});

it("trains a dataset with its string_check grader on the emulator, the grader's score rising", async () => {
  const report = path.join(dir, "rft.html");
  const run = await cli([
    "rft",
    fixture("say-word.jsonl"),
    "--grader",
    fixture("say-word-grader.json"),
    "--model",
    "me/rft/say-word",
    "--emulator",
    "--steps",
    "4",
    "--group-size",
    "16",
    "--max-tokens",
    "3",
    "--learning-rate",
    "5e-5",
    "--report",
    report,
    "--json",
  ]);
  expect(run.stderr).toMatch(/^step 1\/4 \(checkpoint 0\): grader 0\.\d+ -> checkpoint 1/m);
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout) as {
    steps: {
      index: number;
      step: number;
      score: number;
      graders: Record<string, number>;
      checkpoint: number;
    }[];
    before: { step: number; score: number };
    after: { step: number; score: number };
    reportPath: string;
  };
  expect(result.steps.map((s) => s.index)).toEqual([1, 2, 3, 4]);
  expect(result.steps.at(-1)?.checkpoint).toBeGreaterThan(2);
  // Each step's score is the grader's own part, as the report plots it.
  for (const s of result.steps) expect(s.graders.grader_says_word).toBeCloseTo(s.score, 10);
  expect(result.steps.at(-1)?.score).toBeGreaterThan((result.steps[0]?.score ?? 1) + 0.3);
  expect(result.before.step).toBe(0);
  expect(result.after.score).toBeGreaterThan(result.before.score + 0.5);
  expect(result.reportPath).toBe(report);
}, 120_000);

it("refuses a bad grader and a bad dataset line before starting, naming the field", async () => {
  const grader = path.join(dir, "bad-grader.json");
  await writeFile(
    grader,
    JSON.stringify({
      type: "string_check",
      name: "x",
      input: "a",
      reference: "b",
      operation: "is",
    }),
  );
  const badGrader = await cli([
    "rft",
    fixture("say-word.jsonl"),
    "--grader",
    grader,
    "--model",
    "me/rft/bad",
    "--emulator",
  ]);
  expect(badGrader.code).toBe(3);
  expect(badGrader.stderr).toMatch(/grader\.operation/);
  expect(badGrader.stderr).not.toMatch(/emulator at/);

  const data = path.join(dir, "bad.jsonl");
  await writeFile(
    data,
    `${JSON.stringify({ messages: [{ role: "user", content: "please say red" }] })}\n${JSON.stringify({ messages: [{ role: "robot", content: "hi" }] })}\n`,
  );
  const badData = await cli([
    "rft",
    data,
    "--grader",
    fixture("say-word-grader.json"),
    "--model",
    "me/rft/bad",
    "--emulator",
  ]);
  expect(badData.code).toBe(3);
  expect(badData.stderr).toMatch(/line 2: messages\[0\]\.role/);
  expect(badData.stderr).not.toMatch(/emulator at/);
}, 60_000);
