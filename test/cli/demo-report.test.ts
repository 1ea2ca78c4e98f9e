// `demo` and `report` from the command line.
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { inProcess } from "./run.js";

it("demo trains the agent, prints its progress and writes the report it names", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-cli-demo-"));
  const out = path.join(dir, "demo.html");
  const r = await inProcess(["demo", "--steps", "1", "--report", out, "--json"]);
  expect(r.code).toBe(0);
  const result = JSON.parse(r.stdout);
  expect(result.reportPath).toBe(out);
  expect(result.rewards.length).toBeGreaterThanOrEqual(2);
  expect(r.stderr).toContain("emulator at http://127.0.0.1:");
  expect(readFileSync(out, "utf8")).toMatch(/^<!doctype html>/i);
}, 120_000);

it("report writes one HTML page from a JSONL file of groups", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-cli-report-"));
  const groups = path.join(dir, "groups.jsonl");
  const prompt = { role: "user", content: "say red" };
  const choice = (content: string) => ({
    index: 0,
    finish_reason: "stop",
    message: { role: "assistant", content },
    logprobs: { content: [{ token: content, logprob: -0.7, bytes: null, top_logprobs: [] }] },
  });
  const group = {
    trajectories: [
      { messages_and_choices: [prompt, choice("red")], reward: 1 },
      { messages_and_choices: [prompt, choice("blue")], reward: 0 },
    ],
  };
  await writeFile(groups, `${JSON.stringify(group)}\n`);
  const out = path.join(dir, "report.html");
  const r = await inProcess(["report", "--groups", groups, "--out", out, "--title", "my run"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(`Wrote ${out}: 1 step(s), 2 trajectories.\n`);
  expect(readFileSync(out, "utf8")).toContain("my run");

  const neither = await inProcess(["report", "--out", out]);
  expect(neither.code).toBe(2);
  expect(neither.stderr).toContain("give exactly one of --data-dir DIR or --groups FILE.");
  expect(existsSync(path.join(dir, "nothing.html"))).toBe(false);
});

it("report exits 1 when the run holds no trajectory, and the page it writes says so", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-cli-report-empty-"));
  const groups = path.join(dir, "empty.jsonl");
  await writeFile(groups, `${JSON.stringify({ trajectories: [] })}\n`);
  const out = path.join(dir, "empty.html");
  const r = await inProcess(["report", "--groups", groups, "--out", out]);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toBe(
    `Nothing to report: ${groups} holds no trajectory. Wrote ${out}, which says so.\n`,
  );
  expect(readFileSync(out, "utf8")).toContain("Nothing logged");
});
