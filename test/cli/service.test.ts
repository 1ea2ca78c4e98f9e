// The CLI against a real emulator on loopback: models, checkpoints, jobs,
// chat, log, train, sft, each as a user runs it, reading stdout, stderr and
// the exit code.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { TrainingClient, Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, inProcess } from "./run.js";

const KEY = "cli-test-key-0123456789";
let emu: Emulator;
let dir: string;
let keyFile: string;
let base: string[];
let uploads: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tr-cli-"));
  uploads = path.join(dir, "uploads");
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "me" }, sftDataDir: uploads });
  keyFile = path.join(dir, "key");
  await writeFile(keyFile, `${KEY}\n`);
  base = ["--base-url", emu.url, "--api-key-file", keyFile];
});
afterAll(async () => {
  await emu.close();
});

/** Groups of 8 sampled answers to "please say TARGET", rewarded 1 when they say it. */
async function writeGroups(file: string, modelName: string): Promise<void> {
  const openai = new TrainingClient({ apiKey: KEY, baseURL: emu.url }).createOpenAI();
  const lines: string[] = [];
  for (const target of ["red", "cat", "apple"]) {
    const prompt = { role: "user" as const, content: `please say ${target}` };
    const completion = await openai.chat.completions.create({
      model: modelName,
      messages: [prompt],
      n: 8,
      max_tokens: 3,
      logprobs: true,
    });
    const group = new TrajectoryGroup(
      completion.choices.map(
        (choice, i) =>
          new Trajectory({
            messages_and_choices: [prompt, choice],
            // Sampled rewards, with one sure difference so every group trains.
            reward: i === 0 ? 1 : (choice.message.content ?? "").includes(target) ? 1 : 0,
          }),
      ),
      { metadata: { scenario: target } },
    );
    group.trajectories[1]!.reward = 0;
    lines.push(JSON.stringify(group));
  }
  await writeFile(file, `${lines.join("\n")}\n`);
}

describe("a model's life from the command line", () => {
  let modelId: string;
  const groupsFile = () => path.join(dir, "groups.jsonl");

  it("models create prints the id, and --json the whole model", async () => {
    const created = await inProcess([
      "models",
      "create",
      "--project",
      "demo",
      "--name",
      "agent",
      "--base-model",
      "toy",
      "--json",
      ...base,
    ]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const model = JSON.parse(created.stdout);
    expect(model).toMatchObject({ entity: "me", project: "demo", name: "agent" });
    modelId = model.id;
    const again = await inProcess([
      "models",
      "create",
      "--project",
      "demo",
      "--name",
      "agent",
      "--base-model",
      "toy",
      "--return-existing",
      ...base,
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^${modelId}\tmodel me/demo/agent`));
    const taken = await inProcess([
      ...["models", "create", "--project", "demo", "--name", "agent", "--base-model", "toy"],
      ...base,
    ]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("already exists");
  });

  it("train follows the job with one line per event off a terminal, then prints the new step", async () => {
    await writeGroups(groupsFile(), "wandb-artifact:///me/demo/agent");
    const trained = await inProcess([
      "train",
      groupsFile(),
      "--model",
      modelId,
      "--learning-rate",
      "0.05",
      "--poll-interval",
      "20",
      ...base,
    ]);
    expect(trained.code).toBe(0);
    expect(trained.stderr).toMatch(/^Started training job [0-9a-f-]{36} on 3 group\(s\)\.$/m);
    expect(trained.stderr).toMatch(/^job [0-9a-f]{8} started: \d+ gradient steps$/m);
    expect(trained.stderr).toMatch(/^job [0-9a-f]{8} step 1\/\d+ .*loss=/m);
    expect(trained.stderr).not.toContain("\r");
    expect(trained.stdout).toMatch(/^Job [0-9a-f-]{36} completed, step 1: .*num_gradient_steps=/);
  });

  it("checkpoints list, chat on a pinned step, log, jobs get and follow, checkpoints delete", async () => {
    const listed = await inProcess(["checkpoints", "list", modelId, "--json", ...base]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((c: { step: number }) => c.step)).toEqual([0, 1]);

    const said = await inProcess([
      "chat",
      "me/demo/agent",
      "please",
      "say",
      "red",
      "--step",
      "1",
      "--json",
      ...base,
    ]);
    expect(said.code).toBe(0);
    // The answer is sampled (it may even be empty); the model it came from is not.
    const completion = JSON.parse(said.stdout);
    expect(completion.model).toBe("wandb-artifact:///me/demo/agent:step1");
    expect(completion.choices[0].logprobs.content).toBeInstanceOf(Array);
    const missing = await inProcess(["chat", "me/demo/agent", "hi", "--step", "9", ...base]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("has no checkpoint step9");

    const logged = await inProcess([
      "log",
      groupsFile(),
      "--model",
      modelId,
      "--split",
      "val",
      ...base,
    ]);
    expect(logged.code).toBe(0);
    expect(logged.stdout).toMatch(/^Logged 3 group\(s\) under val\. .*num_trajectories=24/);
    const withMetric = await inProcess(["checkpoints", "list", modelId, ...base]);
    expect(withMetric.stdout).toMatch(/^step 1\t[0-9a-f-]{36}\t.*val\/reward=/m);

    const second = await inProcess([
      ...["train", groupsFile(), "--model", modelId, "--poll-interval", "20", "--json"],
      ...base,
    ]);
    expect(second.code).toBe(0);
    const result = JSON.parse(second.stdout);
    expect(result).toMatchObject({ status: "COMPLETED", step: 2 });
    const job = await inProcess(["jobs", "get", result.job_id, ...base]);
    expect(job.code).toBe(0);
    expect(job.stdout).toContain("status: COMPLETED");
    expect(job.stdout).toContain("checkpoint_step: 2");
    const followed = await inProcess([
      "jobs",
      "follow",
      result.job_id,
      "--poll-interval",
      "10",
      ...base,
    ]);
    expect(followed.code).toBe(0);
    expect(followed.stdout).toMatch(/^Job .* completed: .*num_gradient_steps=/);

    const deleted = await inProcess(["checkpoints", "delete", modelId, "--steps", "1,7", ...base]);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe("Deleted 1 checkpoint(s); no checkpoint at step(s) 7.\n");
  });

  it("sft writes the conversations to --upload-dir and trains on them", async () => {
    const sft = await inProcess([
      ...["sft", groupsFile(), "--model", modelId, "--upload-dir", uploads],
      ...["--learning-rate", "0.01", "--poll-interval", "20"],
      ...base,
    ]);
    expect(sft.stderr).toMatch(/^Started SFT job [0-9a-f-]{36} on file:\/\//m);
    expect(sft.code).toBe(0);
    expect(sft.stdout).toMatch(/completed, step 3/);
  });

  it("models delete removes the model and its checkpoints", async () => {
    const gone = await inProcess(["models", "delete", modelId, ...base]);
    expect(gone.code).toBe(0);
    expect(gone.stdout).toBe(`Deleted model ${modelId} and 3 checkpoint(s).\n`);
  });
});

describe("keys", () => {
  it("reads WANDB_API_KEY, and never prints a key, even a refused one", async () => {
    const ok = await cli(
      ["checkpoints", "list", "00000000-0000-4000-8000-000000000000", "--base-url", emu.url],
      {
        WANDB_API_KEY: KEY,
      },
    );
    expect(ok.code).toBe(1);
    expect(ok.stderr).toContain("not found");
    const wrong = "wrong-key-abcdefghijkl";
    const refused = await cli(["chat", "me/demo/agent", "hi", "--base-url", emu.url], {
      WANDB_API_KEY: wrong,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("The API key is not valid for this server");
    expect(refused.stderr + refused.stdout).not.toContain(wrong);
  });

  it("without a key, says where to put one (exit 2)", async () => {
    const none = await cli(["jobs", "get", "00000000-0000-4000-8000-000000000000"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("No API key: set WANDB_API_KEY or pass --api-key-file PATH");
    const unreadable = await cli(["jobs", "get", "x", "--api-key-file", path.join(dir, "nope")]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain("could not be read (ENOENT)");
  });
});
