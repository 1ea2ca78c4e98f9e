// `sft --from-store`: production sessions with late feedback, selected by
// their feedback and trained on through the W&B artifact path, as a user runs it.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { productionStore } from "../training/sft-fixture.js";
import { inProcess } from "./run.js";

const KEY = "cli-sft-store-key-0123456789";
let emu: Emulator;
let dir: string;
let storeDir: string;
let base: string[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tr-cli-sft-store-"));
  process.env.TRAJECTORY_RECORDER_STATE_DIR = path.join(dir, "state");
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "me" } });
  const keyFile = path.join(dir, "key");
  await writeFile(keyFile, `${KEY}\n`);
  base = ["--base-url", emu.url, "--api-key-file", keyFile];
  storeDir = path.join(dir, "store");
  await (await productionStore(storeDir)).close();
});
afterAll(async () => {
  delete process.env.TRAJECTORY_RECORDER_STATE_DIR;
  await emu.close();
});

describe("sft --from-store", () => {
  it("a dry run prints the counts and a sample row, with no model and no service to send to", async () => {
    const run = await inProcess([
      ...["sft", "--from-store", storeDir, "--min-reward", "0.5", "--eligible", "--dry-run"],
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Dry run: nothing was sent.");
    expect(run.stdout).toContain("trajectories: 11 considered, 8 selected");
    expect(run.stdout).toContain(
      "left out: 2 not eligible (or not yet rated), 1 below --min-reward 0.5",
    );
    expect(run.stdout).toContain(
      "histories: 3 cut before a generation that errored, was cut off or interrupted; 0 without an assistant turn",
    );
    expect(run.stdout).toContain("rows: 7 (2 duplicates left out)");
    const sample = JSON.parse(run.stdout.split("sample row:\n")[1] as string);
    expect(sample.messages.map((m: { content: string }) => m.content)).toEqual([
      "q1",
      "a1",
      "q2",
      "a2",
    ]);
    expect(sample.tools[0].function.name).toBe("lookup");

    const json = await inProcess(["sft", "--from-store", storeDir, "--dry-run", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      dry_run: true,
      counts: { considered: 11, selected: 10, dropped: { ineligible: 1 } },
    });
  });

  it("refuses bad filter values naming the flag, before opening anything", async () => {
    const cases: [string[], RegExp][] = [
      [["--min-reward", "high"], /--min-reward must be a number; got "high"/],
      [["--since", "yesterday"], /--since must be an ISO 8601 time .* got "yesterday"/],
      [["--since", "1d", "--until", "2d"], /--since \(.*\) must be before --until/],
      [["--metadata", "tier"], /--metadata takes KEY=VALUE .* got "tier"/],
      [["--served-by", ""], /--served-by must name a model/],
    ];
    for (const [flags, message] of cases) {
      const run = await inProcess(["sft", "--from-store", storeDir, "--dry-run", ...flags]);
      expect(run.code, flags.join(" ")).toBe(2);
      expect(run.stderr).toMatch(message);
    }
    const file = await inProcess(["sft", path.join(dir, "x.jsonl"), "--eligible", "--dry-run"]);
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/--eligible selects from a store's records: it needs --from-store/);
    const missing = await inProcess(["sft", "--from-store", path.join(dir, "nope"), "--dry-run"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--from-store .*nope does not exist/);
  });

  it("trains the selected rows as an SFT job on the emulator, uploaded as a W&B artifact", async () => {
    const created = await inProcess([
      ...["models", "create", "--project", "demo", "--name", "agent", "--base-model", "toy"],
      ...base,
    ]);
    expect(created.code).toBe(0);
    const run = await inProcess([
      ...["sft", "--from-store", storeDir, "--min-reward", "0.5", "--eligible"],
      ...["--served-by", "wandb-artifact:///me/demo/agent", "--model", "me/demo/agent"],
      ...["--poll-interval", "20", ...base],
    ]);
    expect(run.stderr).toContain("sft: rows: 6 (2 duplicates left out)");
    expect(run.stderr).toMatch(
      /^Started SFT job [0-9a-f-]{36} on wandb-artifact:\/\/\/me\/demo\/agent-sft-data-[0-9a-f]{12}:v0\.$/m,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/completed, step 1 \(/);
  });

  it("says why nothing is sent when no row is selected", async () => {
    const run = await inProcess([
      ...["sft", "--from-store", storeDir, "--min-reward", "5", "--model", "me/demo/agent"],
      ...base,
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("sft: left out: 1 marked not eligible, 10 below --min-reward 5");
    expect(run.stderr).toMatch(
      /no row to train on was selected from the store .* nothing was sent/,
    );
  });
});
