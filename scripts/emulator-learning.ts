// Measures how the emulator's policy learns the agent shapes users write,
// over seeds and learning rates (the table in src/emulator/MODEL.md).
//   npx tsx scripts/emulator-learning.ts [--seeds 10] [--shapes a,b] [--lrs 5e-6,2e-5,1e-4]
//     [--steps 4] [--scenarios 4] [--group 4]
// Look-up shapes add the honest behaviour on the last checkpoint: the share of
// rollouts that called the tool for the fruit asked about, and the answers'
// mean length in words (medians over the seeds).
import { runShape, SHAPES } from "../test/emulator/learning-agents.js";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
}

const seeds = Number(arg("seeds", "10"));
const steps = Number(arg("steps", "4"));
const scenarios = Number(arg("scenarios", "4"));
const groupSize = Number(arg("group", "4"));
const shapes = arg("shapes", Object.keys(SHAPES).join(",")).split(",");
const lrs = arg("lrs", "5e-6,2e-5,1e-4").split(",").map(Number);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const f = (x: number) => x.toFixed(2);

console.log(
  "| shape | lr | step 0 (median) | final median | final worst | runs ≥ 0.8 | collapsed | right tool | answer words |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const name of shapes) {
  const shape = SHAPES[name];
  if (!shape) throw new Error(`unknown shape ${name}; one of ${Object.keys(SHAPES).join(", ")}`);
  for (const learningRate of lrs) {
    const runs = [];
    for (let seed = 1; seed <= seeds; seed++)
      runs.push(await runShape({ shape, seed, learningRate, steps, scenarios, groupSize }));
    const finals = runs.map((r) => r.final);
    const honest = runs.flatMap((r) => (r.honest ? [r.honest] : []));
    const right = honest.length ? f(median(honest.map((h) => h.rightTool))) : "-";
    const words = honest.length ? f(median(honest.map((h) => h.answerWords))) : "-";
    console.log(
      `| ${name} | ${learningRate.toExponential(0)} | ${f(median(runs.map((r) => r.steps[0] as number)))} | ${f(median(finals))} | ${f(Math.min(...finals))} | ${finals.filter((x) => x >= 0.8).length}/${seeds} | ${runs.filter((r) => r.collapsed).length}/${seeds} | ${right} | ${words} |`,
    );
    if (process.env.VERBOSE)
      for (const r of runs)
        console.error(
          `  ${r.steps.map(f).join(" ")} -> ${f(r.final)}${r.skipped ? ` (${r.skipped} skipped)` : ""}${r.honest ? ` right tool ${f(r.honest.rightTool)}, ${f(r.honest.answerWords)} words` : ""}`,
        );
  }
}
