// Runs every complete ```ts block of README.md and docs/*.md, each in its own
// node process as a reader runs it (`npx tsx file.mts`), against an emulator
// this script starts: TRAINING_SERVICE_BASE_URL and WANDB_API_KEY point at it.
// A block fails when it exits non-zero or its stderr holds a finding of the
// check before training. Excerpts are marked ```ts fragment: they use names
// an earlier step of the reader's program made, and are only type-checked
// (scripts/readme-types.mjs).
//
// Usage: node scripts/readme-run.mjs (after `npm run build`); --list names the blocks only.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { tsBlocks } from "./doc-sources.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const blocks = tsBlocks(root).filter((b) => !b.fragment);
// --list prints the blocks it would run (FILE:LINE, one a line) and stops.
if (process.argv.includes("--list")) {
  for (const b of blocks) console.log(`${b.source}:${b.line}`);
  process.exit(0);
}
if (!existsSync(join(root, "dist/emulator.js"))) {
  console.error("dist/ is missing: run `npm run build` first");
  process.exit(1);
}
const { startEmulator } = await import(pathToFileURL(join(root, "dist/emulator.js")).href);

// What the check before training says when it finds something (see src/trajectory/validate.ts).
const FINDING = /lists them \(said once per process|failed the check before training/;

function run(file, cwd, env) {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", file], { cwd, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 180_000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr });
    });
  });
}

// Inside the repository, so `trajectory-recorder` resolves to the sources
// through tsconfig.json's paths, as in the tests.
const dir = mkdtempSync(join(root, ".readme-run-"));
const emulator = await startEmulator({ port: 0 });
let failed = 0;
try {
  for (const [i, block] of blocks.entries()) {
    const name = `block-${i + 1}-${block.source.replace(/[/.]/g, "_")}-line-${block.line}`;
    const cwd = join(dir, name);
    const file = join(cwd, "main.mts");
    rmSync(cwd, { recursive: true, force: true });
    await import("node:fs/promises").then((fs) => fs.mkdir(cwd, { recursive: true }));
    writeFileSync(file, block.code);
    const env = {
      ...process.env,
      TRAINING_SERVICE_BASE_URL: emulator.url,
      WANDB_API_KEY: "readme-run",
      TSX_TSCONFIG_PATH: join(root, "tsconfig.json"),
    };
    const started = Date.now();
    const r = await run(file, cwd, env);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    const problem =
      r.code !== 0
        ? `exited with ${r.code ?? r.signal}`
        : FINDING.test(r.stderr)
          ? "printed a finding of the check before training"
          : undefined;
    if (problem) {
      failed++;
      console.error(
        `FAIL ${block.source}:${block.line} ${problem} (${secs} s)\n${r.stderr}${r.stdout.slice(-2000)}`,
      );
    } else console.log(`ok   ${block.source}:${block.line} (${secs} s)`);
  }
} finally {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
}
if (failed > 0) {
  console.error(`README: ${failed} of ${blocks.length} complete TypeScript blocks failed`);
  process.exitCode = 1;
} else console.log(`README: all ${blocks.length} complete TypeScript blocks run`);
