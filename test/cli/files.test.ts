// `validate` and `inspect` on JSONL files, and the live progress bar on a terminal.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { jobProgress } from "../../src/cli/progress.js";
import { inProcess } from "./run.js";

const prompt = { role: "user", content: "say red" };
const choice = (content: string, logprobs = true) => ({
  index: 0,
  finish_reason: "stop",
  message: { role: "assistant", content },
  logprobs: logprobs
    ? { content: [{ token: content, logprob: -0.5, bytes: null, top_logprobs: [] }] }
    : null,
  token_ids: [7],
  prompt_token_ids: [1, 2],
});
const trajectory = (content: string, reward: number, scenario: string, logprobs = true) => ({
  messages_and_choices: [prompt, choice(content, logprobs)],
  reward,
  metadata: { scenario },
});

async function file(lines: unknown[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-cli-files-"));
  const p = path.join(dir, "data.jsonl");
  await writeFile(
    p,
    `${lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n")}\n`,
  );
  return p;
}

it("inspect counts groups, rewards and what RL would learn from", async () => {
  const p = await file([
    { trajectories: [trajectory("red", 1, "a"), trajectory("blue", 0, "a")] },
    { trajectories: [trajectory("red", 1, "b"), trajectory("red", 1, "b")] },
    // Loose trajectories group by metadata.scenario.
    trajectory("red", 1, "c"),
    trajectory("cat", 0, "c", false),
  ]);
  const human = await inProcess(["inspect", p]);
  expect(human.code).toBe(0);
  expect(human.stdout).toContain(
    "groups                 3 (2 with different rewards: trained; 1 with equal rewards: skipped)",
  );
  expect(human.stdout).toContain("trajectories           6");
  expect(human.stdout).toContain("reward                 mean 0.6667, std 0.4714, min 0, max 1");
  expect(human.stdout).toContain("sampled turns          5 with logprobs (trained), 1 without");
  const json = JSON.parse((await inProcess(["inspect", p, "--json"])).stdout);
  expect(json).toMatchObject({
    groups: 3,
    trajectories: 6,
    groupsWithSpread: 2,
    lines: { groups: 2, trajectories: 2 },
  });
});

it("validate names each invalid line and field, warns about what will not train, and exits 1", async () => {
  const good = await file([
    { trajectories: [trajectory("red", 1, "a"), trajectory("blue", 0, "a")] },
  ]);
  const ok = await inProcess(["validate", good]);
  expect(ok).toEqual({
    code: 0,
    stderr: "",
    stdout: `${good}: 1 group(s), 2 trajectories: valid ART JSON.\n`,
  });

  const bad = await file([
    { trajectories: [trajectory("red", 1, "a"), { ...trajectory("x", 0, "a"), reward: "high" }] },
    "{not json",
    { hello: 1 },
    { trajectories: [trajectory("red", 1, "b"), trajectory("red", 1, "b")] },
  ]);
  const r = await inProcess(["validate", bad]);
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(new RegExp(`^${bad}:1: .*trajectories\\[1\\]\\.reward`, "m"));
  expect(r.stdout).toMatch(new RegExp(`^${bad}:2: not JSON`, "m"));
  expect(r.stdout).toContain(`${bad}:3: neither a trajectory group`);
  expect(r.stdout).toContain("warning: 1 of 1 group(s) have rewards that are all equal");
  expect(r.stdout).toContain(`${bad}: 3 invalid line(s).`);

  const train = await inProcess(["train", bad, "--model", "m", "--api-key-file", bad]);
  expect(train.code).toBe(2);
  expect(train.stderr).toContain("has 3 invalid line(s); nothing was sent.");
  // Valid JSON the trainer would still learn wrongly from: the check's findings are warned.
  const orphan = await file([
    {
      trajectories: [
        {
          ...trajectory("red", 1, "a"),
          messages_and_choices: [
            prompt,
            { role: "tool", tool_call_id: "call_9", content: "42" },
            choice("red"),
          ],
        },
        trajectory("blue", 0, "a"),
      ],
    },
  ]);
  const checked = await inProcess(["validate", orphan]);
  expect(checked.code).toBe(0);
  expect(checked.stdout).toMatch(
    /^warning: group 1: trajectories\[0\]\.messages_and_choices\[1\]\.tool_call_id: .*"call_9", which no earlier assistant turn/m,
  );
  const missing = await inProcess(["validate", path.join(path.dirname(bad), "nope.jsonl")]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("could not be read (ENOENT)");
});

it("on a terminal, jobs follow draws one bar that moves with the gradient steps", () => {
  let written = "";
  const stderr = { isTTY: true, write: (s: string) => (written += s) };
  const bar = jobProgress({ stdout: { write: () => true }, stderr }, "0123456789abcdef");
  const base = { jobId: "0123456789abcdef", totalSteps: 4 };
  bar.onEvent({ ...base, type: "training_started", data: {}, gradientSteps: 0 });
  bar.onEvent({
    ...base,
    type: "gradient_step",
    data: { loss: 0.5, reward: 0.25 },
    gradientSteps: 1,
  });
  bar.onEvent({
    ...base,
    type: "gradient_step",
    data: { loss: 0.25, reward: 0.75 },
    gradientSteps: 2,
  });
  bar.end();
  const frames = written.split("\r\x1b[K").filter(Boolean);
  expect(frames).toEqual([
    "job 01234567 [....................] 0/4 ",
    "job 01234567 [#####...............] 1/4 loss=0.5000 reward=0.2500",
    "job 01234567 [##########..........] 2/4 loss=0.2500 reward=0.7500\n",
  ]);
});
