// The CLI's state file (known.json) under concurrency and when it is broken:
// real CLI processes against a real emulator on loopback.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./run.js";

const KEY = "cli-known-key-0123456789";
let emu: Emulator;
let dir: string;
let base: string[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tr-known-"));
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "me" } });
  const keyFile = path.join(dir, "key");
  await writeFile(keyFile, `${KEY}\n`);
  base = ["--base-url", emu.url, "--api-key-file", keyFile];
});
afterAll(async () => {
  await emu.close();
});

const create = (stateDir: string, name: string) =>
  cli(["models", "create", "--project", "p", "--name", name, "--base-model", "toy", ...base], {
    TRAJECTORY_RECORDER_STATE_DIR: stateDir,
  });

describe("known.json", () => {
  it("keeps every model when 10 `models create` processes run at once", async () => {
    const stateDir = path.join(dir, "concurrent");
    const names = Array.from({ length: 10 }, (_, i) => `c${i}`);
    const runs = await Promise.all(names.map((name) => create(stateDir, name)));
    for (const run of runs) expect(run.stderr).toBe("");
    expect(runs.map((r) => r.code)).toEqual(names.map(() => 0));
    const file = JSON.parse(await readFile(path.join(stateDir, "known.json"), "utf8"));
    const models = Object.values(file.services[emu.url].models) as { name: string }[];
    expect(models.map((m) => m.name).sort()).toEqual(names);
    // Found by name afterwards, and no lock left behind.
    const got = await cli(["models", "get", "me/p/c7", ...base], {
      TRAJECTORY_RECORDER_STATE_DIR: stateDir,
    });
    expect(got.code).toBe(0);
    await expect(readFile(path.join(stateDir, "known.json.lock"))).rejects.toThrow(/ENOENT/);
  }, 120_000);

  const broken: [string, (stateDir: string) => Promise<void>, RegExp][] = [
    [
      '{"services":null}',
      (d) => writeFile(path.join(d, "known.json"), '{"version":1,"services":null}'),
      /does not hold what the CLI writes \(services: /,
    ],
    [
      "models: null",
      (d) =>
        writeFile(
          path.join(d, "known.json"),
          JSON.stringify({ version: 1, services: { x: { models: null, jobs: {} } } }),
        ),
      /services\.x\.models: /,
    ],
    [
      "a corrupt file",
      (d) => writeFile(path.join(d, "known.json"), '{"version":1,"servi'),
      /is not valid JSON/,
    ],
    [
      "a FIFO in its place",
      async (d) => {
        execFileSync("mkfifo", [path.join(d, "known.json")]);
      },
      /it is a FIFO, not a regular file/,
    ],
  ];
  for (const [what, breakIt, problem] of broken) {
    it(`with ${what}: creates the model, says what is wrong with the file, and leaves it as it was`, async () => {
      const stateDir = await mkdtemp(path.join(dir, "broken-"));
      await breakIt(stateDir);
      const file = path.join(stateDir, "known.json");
      const before = what.includes("FIFO") ? "" : await readFile(file, "utf8");
      const run = await create(stateDir, `b${Math.random().toString(36).slice(2, 8)}`);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^[0-9a-f-]{36}\t/);
      expect(run.stderr).toContain(file);
      expect(run.stderr).toMatch(problem);
      expect(run.stderr).not.toMatch(/TypeError|EEXIST|at .*\.ts/);
      // Said once, not again when the command would have saved.
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      if (!what.includes("FIFO")) expect(await readFile(file, "utf8")).toBe(before);
    }, 30_000);
  }

  it("with a state directory that is a file: creates the model and says so, naming it", async () => {
    const stateDir = path.join(dir, "a-file");
    await mkdir(dir, { recursive: true });
    await writeFile(stateDir, "not a directory");
    const run = await create(stateDir, "f1");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^[0-9a-f-]{36}\t/);
    expect(run.stderr).toContain(stateDir);
    expect(run.stderr).not.toMatch(/EEXIST|ENOTDIR|TypeError/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  }, 30_000);
});
