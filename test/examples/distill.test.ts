// examples/distill/main.ts end to end, as a user runs it: a teacher's
// sessions recorded through the Responses API on the embedded emulator, SFT
// of the student on the best of them, and the student's score on the
// teacher's scenarios rising past its own start and the teacher's; nothing on
// stderr (no warning, no check finding).
import { expect, it } from "vitest";
import { runScript } from "../quiet/run-example.js";

function score(stdout: string, who: RegExp): number {
  const line = stdout.split("\n").find((l) => who.test(l));
  const value = Number(line?.trim().split(/\s+/).at(-1));
  if (!Number.isFinite(value)) throw new Error(`no score for ${who} in:\n${stdout}`);
  return value;
}

it("distils a teacher's best Responses sessions into the student, whose score rises", async () => {
  const run = await runScript("examples/distill/main.ts");
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(
    /teacher teacher-large: 128 sessions, .* kept \(reward 1\) as \d+ SFT rows/,
  );
  const teacher = score(run.stdout, /^\s+teacher teacher-large\s/);
  const before = score(run.stdout, /^\s+student step 0\s/);
  const after = score(run.stdout, /^\s+student step 1\s/);
  expect(after).toBeGreaterThan(before + 0.15);
  expect(after).toBeGreaterThan(teacher);
}, 180_000);
