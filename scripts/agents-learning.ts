// Trains the docs' OpenAI Agents SDK agent (one strict function tool, an exact
// grader, maxTurns 4, scoreMaxTurns(0)) on the embedded emulator, as the
// README's quickstart trains (2 groups of 16 a step, 8 steps, 2e-5), and
// prints each step's mean reward and tool use (MODEL.md, issue #52).
//   npx tsx scripts/agents-learning.ts [--seeds 1,2,3] [--steps 8] [--scenarios 2] [--group 16]
//     [--unseeded]   (no seed in the requests, as the README's agents send none: runs differ)
// "tool" is the share of rollouts that called the tool for the fruit asked
// about; "max" the share that ended in MaxTurnsExceededError (scored 0).
import { runAgentsLearning } from "../test/emulator/agents-learning.js";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
}

const seeds = arg("seeds", "1,2,3").split(",").map(Number);
const unseeded = process.argv.includes("--unseeded");
const steps = Number(arg("steps", "8"));
const scenarios = Number(arg("scenarios", "2"));
const groupSize = Number(arg("group", "16"));
const f = (x: number) => x.toFixed(2);
/** How far a step's mean reward fell below the best before it, at most. */
const largestFall = (rewards: number[]) =>
  Math.max(0, ...rewards.map((r, i) => Math.max(...rewards.slice(0, i + 1)) - r));

let met = 0;
for (const seed of seeds) {
  const run = await runAgentsLearning({ seed, steps, scenarios, groupSize, unseeded });
  console.log(`seed ${seed}`);
  for (const [i, s] of run.entries())
    console.log(
      `  step ${i + 1}: reward ${f(s.reward)}  tool ${f(s.toolUse)}  max ${f(s.maxTurns)}  calls ${f(s.calls)}`,
    );
  const fall = largestFall(run.map((s) => s.reward));
  const last = run.at(-1) as (typeof run)[number];
  const ok = last.reward >= 0.8 && last.toolUse >= 0.8 && fall <= 0.1;
  if (ok) met++;
  console.log(
    `  last ${f(last.reward)} (tool ${f(last.toolUse)}), largest fall below an earlier peak ${f(fall)}: ${ok ? "meets" : "misses"} the target`,
  );
}
console.log(
  `${met} of ${seeds.length} runs meet the target (last step >= 0.8 with tool >= 0.8, no fall below an earlier peak of more than 0.1)`,
);
