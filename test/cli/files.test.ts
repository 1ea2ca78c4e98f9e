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
    "groups                 3 (2 with different rewards: RL can learn from them; 1 with equal rewards: left out)",
  );
  expect(human.stdout).toContain("trajectories           6");
  expect(human.stdout).toContain(
    "reward                 mean 0.666667, std 0.471405, min 0, max 1",
  );
  expect(human.stdout).toContain(
    "sampled turns          5 with logprobs: trainable; 1 without: not trainable",
  );
  expect(human.stdout).not.toContain("nothing to train");
  const json = JSON.parse((await inProcess(["inspect", p, "--json"])).stdout);
  expect(json).toMatchObject({
    groups: 3,
    trajectories: 6,
    groupsWithSpread: 2,
    lines: { groups: 2, trajectories: 2, sft: 0 },
  });
});

it("inspect says when nothing would be trained, in the same words as the counts", async () => {
  const p = await file([
    { trajectories: [trajectory("red", 1, "a", false), trajectory("blue", 0, "a", false)] },
  ]);
  const r = await inProcess(["inspect", p]);
  expect(r.stdout).toContain("1 with different rewards: RL can learn from them");
  expect(r.stdout).toContain("sampled turns          0 with logprobs: trainable; 2 without");
  expect(r.stdout).toContain(
    "nothing to train       no sampled turn has logprobs: `train` refuses this file",
  );
});

it("validate names each invalid line and field, warns about what will not train, and exits 3 as train does", async () => {
  const good = await file([
    { trajectories: [trajectory("red", 1, "a"), trajectory("blue", 0, "a")] },
  ]);
  const ok = await inProcess(["validate", good]);
  expect(ok).toMatchObject({
    code: 0,
    stderr: "",
    // Both histories are [1, 2] then [7]: the second reads all 3 tokens again.
    stdout: `token ids: 2 histories carry them; 0 split(s) where the tokens diverged; 3 prefix token(s) a trainer reads more than once, as the service's format cannot share a prefix (most in ${good}:1: 3)\n${good}: 1 group(s), 2 trajectories: valid.\n`,
  });

  const bad = await file([
    { trajectories: [trajectory("red", 1, "a"), { ...trajectory("x", 0, "a"), reward: "high" }] },
    "{not json",
    { hello: 1 },
    { trajectories: [trajectory("red", 1, "b"), trajectory("red", 1, "b")] },
  ]);
  const r = await inProcess(["validate", bad]);
  expect(r.code).toBe(3);
  expect(r.stdout).toMatch(new RegExp(`^${bad}:1: .*trajectories\\[1\\]\\.reward`, "m"));
  expect(r.stdout).toMatch(new RegExp(`^${bad}:2: not JSON`, "m"));
  expect(r.stdout).toContain(`${bad}:3: neither a trajectory group`);
  expect(r.stdout).toContain("warning: 1 of 1 group(s) have rewards that are all equal");
  expect(r.stdout).toContain(`${bad}: 3 invalid line(s).`);

  // The same invalid lines stop log and train before anything is sent, with the same exit code.
  for (const command of ["train", "log"]) {
    const sent = await inProcess([command, bad, "--model", "m", "--api-key-file", bad]);
    expect(sent.code, command).toBe(3);
    expect(sent.stderr).toContain("has 3 invalid line(s); nothing was sent.");
    expect(sent.stderr).toMatch(new RegExp(`^${bad}:2: not JSON`, "m"));
  }
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
    new RegExp(
      `^warning: ${orphan}:1: trajectories\\[0\\]\\.messages_and_choices\\[1\\]\\.tool_call_id: .*"call_9", which no earlier assistant turn`,
      "m",
    ),
  );
  const json = JSON.parse((await inProcess(["validate", bad, "--json"])).stdout);
  expect(json).toMatchObject({ valid: false, problems: [{ line: 1 }, { line: 2 }, { line: 3 }] });
  const missing = await inProcess(["validate", path.join(path.dirname(bad), "nope.jsonl")]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("could not be read (ENOENT)");
});

it("validate counts what the histories share in tokens: splits, and prefix tokens read again", async () => {
  const sampled = (prompt_token_ids: number[], token_ids: number[]) => ({
    ...choice("red"),
    prompt_token_ids,
    token_ids,
  });
  const withTokens = (c: object, logs: string[] = []) => ({
    messages_and_choices: [prompt, c],
    reward: 1,
    metadata: { scenario: "s" },
    logs,
  });
  const p = await file([
    // A 4-token prompt shared by both (read again once: 4), then diverging.
    {
      trajectories: [
        withTokens(sampled([1, 2, 3, 4], [5]), ["token lineage split: history 1 of 2"]),
        { ...withTokens(sampled([1, 2, 3, 4], [6])), reward: 0 },
      ],
    },
    // A group with a single history shares nothing.
    { trajectories: [withTokens(sampled([9], [8]))] },
    // No token ids: not counted.
    { trajectories: [{ messages_and_choices: [prompt], reward: 0 }] },
  ]);
  const r = await inProcess(["validate", p]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(
    `token ids: 3 histories carry them; 1 split(s) where the tokens diverged; 4 prefix token(s) a trainer reads more than once, as the service's format cannot share a prefix (most in ${p}:1: 4)`,
  );
  const json = JSON.parse((await inProcess(["validate", p, "--json"])).stdout);
  expect(json.tokens).toEqual({
    histories: 3,
    splits: 1,
    duplicatePrefixTokens: 4,
    mostAt: `${p}:1`,
  });
  // inspect says the same, from the same counts.
  const counted = await inProcess(["inspect", p]);
  expect(counted.stdout).toContain(
    `token ids: 3 histories carry them; 1 split(s) where the tokens diverged; 4 prefix token(s) a trainer reads more than once, as the service's format cannot share a prefix (most in ${p}:1: 4)`,
  );
  expect(JSON.parse((await inProcess(["inspect", p, "--json"])).stdout).tokens).toEqual(
    json.tokens,
  );
  // Without token ids, nothing is said of them.
  const plain = await file([{ trajectories: [{ messages_and_choices: [prompt], reward: 0 }] }]);
  expect((await inProcess(["validate", plain])).stdout).not.toContain("token ids:");
  expect((await inProcess(["inspect", plain])).stdout).not.toContain("token ids:");
});

it("validate says each finding once, and reports an empty group as such", async () => {
  const noTokenIds = (reward: number) => {
    const t = trajectory("red", reward, "a");
    const {
      token_ids: _,
      prompt_token_ids: __,
      ...rest
    } = t.messages_and_choices[1] as Record<string, unknown>;
    return { ...t, messages_and_choices: [prompt, rest] };
  };
  const p = await file([
    { trajectories: [noTokenIds(1), noTokenIds(0), noTokenIds(1)] },
    { trajectories: [trajectory("red", 1, "a", false), trajectory("x", 0, "a", false)] },
  ]);
  const r = await inProcess(["validate", p]);
  expect(r.code).toBe(0);
  const tokenIds = r.stdout.split("\n").filter((l) => l.includes("token_ids"));
  expect(tokenIds).toHaveLength(1);
  expect(tokenIds[0]).toContain(`${p}:1: trajectories[0].messages_and_choices[1].token_ids:`);
  expect(tokenIds[0]).toContain("(and 2 more like it)");
  expect(r.stdout.split("\n").filter((l) => l.includes("logprobs"))).toHaveLength(1);

  const empty = await file([{ trajectories: [] }]);
  const e = await inProcess(["validate", empty]);
  // `train` refuses it, so validate exits 3 as docs/cli.md's table says.
  expect(e.code).toBe(3);
  expect(e.stdout).toBe(
    [
      'warning: 1 group(s) hold no trajectory ({"trajectories":[]}, or every rollout failed): nothing to train or log in them',
      "warning: no group holds a trajectory: `train` refuses this file",
      `${empty}: 1 group(s), 0 trajectories: every line is valid, but \`train\` refuses the file.`,
      "",
    ].join("\n"),
  );
  expect((await inProcess(["inspect", empty])).stdout).toContain(
    "groups                 1 (0 with different rewards: RL can learn from them; 0 with equal rewards: left out; 1 empty)",
  );
});

it("validate checks SFT lines as sft does", async () => {
  const p = await file([
    {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
    },
    { messages: [{ role: "user", content: "hi" }] },
    { messages: [] },
  ]);
  const r = await inProcess(["validate", p]);
  expect(r.code).toBe(3);
  expect(r.stdout).toContain(`${p}:2: `);
  expect(r.stdout).toContain("expected the last message to be an assistant message");
  expect(r.stdout).toContain(`${p}:3: `);
  expect(r.stdout).not.toContain(`${p}:1: `);
  const sent = await inProcess([
    "sft",
    p,
    "--model",
    "m",
    "--upload-dir",
    "/tmp",
    "--api-key-file",
    p,
  ]);
  expect(sent.code).toBe(3);
  expect(sent.stderr).toContain("has 2 invalid line(s); nothing was sent.");
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
