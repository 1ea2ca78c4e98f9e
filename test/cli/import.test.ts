import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmulator } from "trajectory-recorder/emulator";
import { describe, expect, it } from "vitest";
import { cli, inProcess } from "./run.js";

const fixtures = path.join(
  path.dirname(new URL(import.meta.url).pathname),
  "../fixtures/openai-ft",
);

describe("trajectory-recorder import openai-ft", () => {
  it("writes the rows, reports converted and refused lines, and exits 3 when any was refused", async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), "oaift-cli-")), "rows.jsonl");
    const file = path.join(fixtures, "mixed.jsonl");
    const run = await inProcess(["import", "openai-ft", file, "--out", out]);
    expect(run.code).toBe(3);
    const printed = run.stdout.trimEnd().split("\n");
    expect(printed.filter((l) => l.includes(": converted: ")).map((l) => l.split(":")[1])).toEqual([
      "2",
      "3",
      "4",
    ]);
    expect(printed.filter((l) => l.includes(": refused: ")).map((l) => l.split(":")[1])).toEqual([
      "6",
      "7",
      "8",
      "9",
      "10",
      "11",
    ]);
    expect(run.stdout).toContain(`${file}:6: refused: messages[1].weight: expected 0 or 1`);
    expect(run.stdout).toContain(
      `${file}: 11 line(s): 1 accepted, 3 converted, 6 refused, 1 preference; 4 row(s) written to ${out}.`,
    );
    expect(run.stdout).toContain("1 preference (DPO) line(s) not converted");
    expect(readFileSync(out, "utf8").trimEnd().split("\n")).toHaveLength(4);
  });

  it("says everything as JSON with --json, and trains preferred answers with --preferred-as-sft", async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), "oaift-cli-")), "rows.jsonl");
    const file = path.join(fixtures, "dpo.jsonl");
    const run = await inProcess([
      "import",
      "openai-ft",
      file,
      "--out",
      out,
      "--preferred-as-sft",
      "--json",
    ]);
    expect(run.code).toBe(3);
    const json = JSON.parse(run.stdout);
    expect(json).toMatchObject({
      lines: expect.any(Array),
      rows: 2,
      converted: 2,
      refused: 1,
      out,
    });
    expect(json.lines.map((l: { line: number; status: string }) => [l.line, l.status])).toEqual([
      [1, "converted"],
      [2, "converted"],
      [3, "refused"],
    ]);
    expect(JSON.parse(readFileSync(out, "utf8").split("\n")[1] as string).tools).toHaveLength(1);
  });

  it("exits 0 on a file of good lines, and 2 without --out or with a path it cannot use", async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), "oaift-cli-")), "rows.jsonl");
    const good = await cli([
      "import",
      "openai-ft",
      path.join(fixtures, "good.jsonl"),
      "--out",
      out,
    ]);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain("2 line(s): 2 accepted");
    const usage = await inProcess(["import", "openai-ft", path.join(fixtures, "good.jsonl")]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--out is required");
    const missing = await inProcess([
      "import",
      "openai-ft",
      path.join(fixtures, "nope.jsonl"),
      "--out",
      out,
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/: the file .*nope\.jsonl could not be read \(ENOENT\)\./);
    const noDir = await inProcess([
      "import",
      "openai-ft",
      path.join(fixtures, "good.jsonl"),
      "--out",
      path.join(path.dirname(out), "x", "y.jsonl"),
    ]);
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toMatch(/--out: the file .*y\.jsonl could not be written \(ENOENT\)\./);
    const same = path.join(path.dirname(out), "same.jsonl");
    writeFileSync(same, readFileSync(path.join(fixtures, "good.jsonl")));
    const overwrite = await inProcess([
      "import",
      "openai-ft",
      same,
      "--out",
      `${path.dirname(out)}/../${path.basename(path.dirname(out))}/same.jsonl`,
    ]);
    expect(overwrite.code).toBe(2);
    expect(overwrite.stderr).toContain("--out: it is the input file, which writing would destroy.");
    expect(readFileSync(same, "utf8")).toBe(
      readFileSync(path.join(fixtures, "good.jsonl"), "utf8"),
    );
  });
});

describe("import openai-ft, then sft", () => {
  it("trains the imported rows as an SFT job on the emulator", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "oaift-sft-"));
    const KEY = "cli-oaift-key-0123456789";
    process.env.TRAJECTORY_RECORDER_STATE_DIR = path.join(dir, "state");
    const emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "me" } });
    try {
      const keyFile = path.join(dir, "key");
      writeFileSync(keyFile, `${KEY}\n`);
      const base = ["--base-url", emu.url, "--api-key-file", keyFile];
      const rows = path.join(dir, "rows.jsonl");
      const imported = await inProcess([
        "import",
        "openai-ft",
        path.join(fixtures, "mixed.jsonl"),
        "--out",
        rows,
      ]);
      expect(imported.code).toBe(3);
      const created = await inProcess([
        ...["models", "create", "--project", "oa", "--name", "ft", "--base-model", "toy"],
        ...base,
      ]);
      expect(created.code).toBe(0);
      const run = await inProcess([
        "sft",
        rows,
        "--model",
        "me/oa/ft",
        "--poll-interval",
        "20",
        ...base,
      ]);
      expect(run.stderr).toMatch(/^Started SFT job /m);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/completed, step 1 \(/);
    } finally {
      delete process.env.TRAJECTORY_RECORDER_STATE_DIR;
      await emu.close();
    }
  }, 60_000);
});
