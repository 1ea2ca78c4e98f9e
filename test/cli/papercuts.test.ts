// The CLI's first-day papercuts (issue 36), each as a user meets it, against
// a real emulator on loopback, in process.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcess } from "./run.js";

const KEY = "cli-papercut-key-0123456789";
let emu: Emulator;
let dir: string;
let keyFile: string;
let base: string[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tr-papercuts-"));
  process.env.TRAJECTORY_RECORDER_STATE_DIR = path.join(dir, "state");
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "me" } });
  keyFile = path.join(dir, "key");
  await writeFile(keyFile, `${KEY}\n`);
  base = ["--base-url", emu.url, "--api-key-file", keyFile];
});
afterAll(async () => {
  delete process.env.TRAJECTORY_RECORDER_STATE_DIR;
  await emu.close();
});

const plainGroup = JSON.stringify({
  trajectories: [0, 1].map((reward) => ({
    messages_and_choices: [
      { role: "user", content: "q" },
      { role: "assistant", content: `a${reward}` },
    ],
    reward,
  })),
});

describe("CLI papercuts", () => {
  it("a base URL without /v1 gets the /v1 hint on a model name it does not know", async () => {
    const run = await inProcess([
      "models",
      "get",
      "me/p/nobody",
      "--base-url",
      emu.url.replace(/\/v1$/, ""),
      "--api-key-file",
      keyFile,
    ]);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`try ${emu.url}.`);
  });

  it("never echoes a key pasted as the model argument", async () => {
    const run = await inProcess(["checkpoints", "list", "sk-proj-abcdefghijklmnop1234", ...base]);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain("abcdefghijklmnop");
    expect(run.stderr).toMatch(/not shown, in case it is a key/);
  });

  it("says an unknown option in its own words, quotes balanced", async () => {
    const run = await inProcess(["models", "get", "--bogus", ...base]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^trajectory-recorder models get: unknown option --bogus; /);
    expect(run.stderr).not.toMatch(/place it at the end|'-- "/);
  });

  it("validate exits 3 on a file train refuses, as docs/cli.md's table says", async () => {
    const file = path.join(dir, "plain.jsonl");
    await writeFile(file, `${plainGroup}\n`);
    const validate = await inProcess(["validate", file]);
    expect(validate.code).toBe(3);
    expect(validate.stdout).toMatch(/every line is valid, but `train` refuses the file/);
    const train = await inProcess([
      "train",
      file,
      "--model",
      "00000000-0000-4000-8000-000000000000",
      ...base,
    ]);
    expect(train.code).toBe(3);
    // One "train:", not two.
    expect(train.stderr).not.toMatch(/train: train:/);
  });

  it("log refuses a group that holds no trajectory", async () => {
    const created = await inProcess([
      "models",
      "create",
      "--project",
      "p",
      "--name",
      "log1",
      "--base-model",
      "toy",
      ...base,
    ]);
    expect(created.code).toBe(0);
    const file = path.join(dir, "empty.jsonl");
    await writeFile(file, `${JSON.stringify({ trajectories: [] })}\n`);
    const run = await inProcess(["log", file, "--model", "me/p/log1", ...base]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/hold no trajectory/);
  });

  it("models get of a model just deleted says it was deleted", async () => {
    await inProcess([
      "models",
      "create",
      "--project",
      "p",
      "--name",
      "gone1",
      "--base-model",
      "toy",
      ...base,
    ]);
    const deleted = await inProcess(["models", "delete", "me/p/gone1", "--yes", ...base]);
    expect(deleted.code).toBe(0);
    const run = await inProcess(["models", "get", "me/p/gone1", ...base]);
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/was deleted from/);
    expect(run.stderr).not.toMatch(/--return-existing/);
  });

  it("demo --help lists no service options, report --help (which may read the service) lists them once", async () => {
    const demo = await inProcess(["demo", "--help"]);
    expect(demo.code).toBe(0);
    expect(demo.stdout).not.toMatch(/--base-url|--api-key-file/);
    const report = await inProcess(["report", "--help"]);
    expect(report.code).toBe(0);
    expect(report.stdout.match(/--base-url/g)).toHaveLength(1);
  });

  it("sft warns when it trains on trajectories whatever their reward, and --min-reward filters", async () => {
    const file = path.join(dir, "sft-groups.jsonl");
    await writeFile(file, `${plainGroup}\n`);
    const uploads = path.join(dir, "uploads");
    // A model the emulator does not know: the data is read and written before the job is refused.
    const args = ["sft", file, "--model", "me/p/log1", "--upload-dir", uploads, ...base];
    const warned = await inProcess(args);
    expect(warned.stderr).toMatch(
      /sft trains on all 2 trajectories, whatever their reward \(from 0 to 1\); --min-reward X/,
    );
    const filtered = await inProcess([...args, "--min-reward", "1"]);
    expect(filtered.stderr).toMatch(/kept 1 of 2 trajectories with reward >= 1/);
    expect(filtered.stderr).not.toMatch(/whatever their reward/);
    const none = await inProcess([...args, "--min-reward", "5"]);
    expect(none.code).toBe(3);
  });
});
