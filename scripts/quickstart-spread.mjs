// Runs the README's quickstart N times (default 10), each in its own process
// as a reader runs it (`npx tsx quickstart.mts`), and prints the mean reward
// of its first and last step per run, then their spread (min, median, max).
// The README states that spread.
//
// Usage: node scripts/quickstart-spread.mjs [--runs 10]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { runs: { type: "string", default: "10" } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`--runs: expected a positive integer, got ${values.runs}`);
  process.exit(2);
}

const readme = readFileSync(join(root, "README.md"), "utf8");
const section = /<!-- section:quickstart -->([\s\S]*?)<!-- \/section:quickstart -->/.exec(readme);
const block = section && /^```ts\n([\s\S]*?)^```$/m.exec(section[1]);
if (!block) {
  console.error("README.md: no ```ts block in the quickstart section");
  process.exit(1);
}
// Inside the repository, so `trajectory-recorder` resolves to the sources
// (tsconfig paths), as the tests see it.
const dir = mkdtempSync(join(root, ".quickstart-spread-"));
const file = join(dir, "quickstart.mts");
writeFileSync(file, block[1]);

const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return `min ${s[0].toFixed(3)}, median ${median.toFixed(3)}, max ${s.at(-1).toFixed(3)}`;
};
const starts = [];
const ends = [];
try {
  for (let i = 1; i <= runs; i++) {
    const out = execFileSync(process.execPath, ["--import", "tsx", file], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    const means = [...out.matchAll(/^step \d+: mean reward ([\d.]+)/gm)].map((m) => Number(m[1]));
    if (means.length < 2) throw new Error(`run ${i} printed no step lines:\n${out}`);
    starts.push(means[0]);
    ends.push(means.at(-1));
    console.log(
      `run ${String(i).padStart(2)}: step 1 ${means[0].toFixed(3)} -> step ${means.length} ${means.at(-1).toFixed(3)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\n${runs} runs`);
console.log(`first step: ${stat(starts)}`);
console.log(`last step:  ${stat(ends)}`);
