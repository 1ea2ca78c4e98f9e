// OpenAI's chat file, moved: `import openai-ft` then `sft` on the rows, from
// the CLI against a real emulator, up to a completed SFT job.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { inProcess } from "./run.js";

const KEY = "cli-import-sft-key-0123456789";
let emu: Emulator;
let dir: string;
let base: string[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tr-cli-import-sft-"));
  process.env.TRAJECTORY_RECORDER_STATE_DIR = path.join(dir, "state");
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "me" } });
  const keyFile = path.join(dir, "key");
  await writeFile(keyFile, `${KEY}\n`);
  base = ["--base-url", emu.url, "--api-key-file", keyFile];
});
afterAll(async () => {
  delete process.env.TRAJECTORY_RECORDER_STATE_DIR;
  await emu.close();
});

it("imports OpenAI's chat file with tools and weights, and an SFT job trains on its rows", async () => {
  const rows = path.join(dir, "rows.jsonl");
  const source = path.join(
    import.meta.dirname,
    "../migrate/fixtures/openai-docs/chat-tools-weights.jsonl",
  );
  const imported = await inProcess(["import", "openai-ft", source, "--out", rows]);
  expect(imported.code).toBe(0);
  expect(imported.stdout).toContain(
    "5 line(s): 2 accepted, 3 converted, 0 refused, 0 preference; 5 row(s) written",
  );
  const created = await inProcess([
    ...["models", "create", "--project", "moved", "--name", "dot", "--base-model", "toy"],
    ...base,
  ]);
  expect(created.code).toBe(0);
  const run = await inProcess([
    "sft",
    rows,
    "--model",
    "me/moved/dot",
    "--poll-interval",
    "20",
    ...base,
  ]);
  expect(run.stderr).toMatch(/^Started SFT job [0-9a-f-]{36}/m);
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/completed, step 1 \(/);
}, 60_000);
