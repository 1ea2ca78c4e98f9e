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
  // The models and jobs the CLI knows are kept here, not in the user's home.
  process.env.TRAJECTORY_RECORDER_STATE_DIR = path.join(dir, "state");
  uploads = path.join(dir, "uploads");
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "me" }, sftDataDir: uploads });
  keyFile = path.join(dir, "key");
  await writeFile(keyFile, `${KEY}\n`);
  base = ["--base-url", emu.url, "--api-key-file", keyFile];
});
afterAll(async () => {
  delete process.env.TRAJECTORY_RECORDER_STATE_DIR;
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
    expect(taken.stderr).toContain(
      "A model named agent already exists in project demo. Add --return-existing to use it, or pick another --name.",
    );
    expect(taken.stderr).not.toContain("return_existing");
  });

  it("models list and get: by id, by ENTITY/PROJECT/NAME and by a unique id prefix", async () => {
    const listed = await inProcess(["models", "list", ...base]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(`${modelId}\tme/demo/agent\tbase toy\tstep 0\n`);
    for (const ref of [
      modelId,
      "me/demo/agent",
      modelId.slice(0, 8),
      "wandb-artifact:///me/demo/agent",
    ]) {
      const got = await inProcess(["models", "get", ref, "--json", ...base]);
      expect(got.code, ref).toBe(0);
      expect(JSON.parse(got.stdout)).toMatchObject({
        id: modelId,
        entity: "me",
        project: "demo",
        name: "agent",
        latest_step: 0,
      });
    }
    const unknown = await inProcess(["models", "get", "me/demo/nobody", ...base]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain("no model named me/demo/nobody is known");
    const gone = await inProcess([
      "models",
      "get",
      "00000000-0000-4000-8000-000000000000",
      ...base,
    ]);
    expect(gone.code).toBe(4);
    expect(gone.stderr).toContain("does not exist");
    const short = await inProcess(["models", "get", "ab", ...base]);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("give at least 4 characters");
  });

  it("train follows the job with one line per event off a terminal, then prints the new step", async () => {
    await writeGroups(groupsFile(), "wandb-artifact:///me/demo/agent");
    const trained = await inProcess([
      "train",
      groupsFile(),
      "--model",
      modelId,
      "--learning-rate",
      "2e-5",
      "--poll-interval",
      "20",
      ...base,
    ]);
    expect(trained.code).toBe(0);
    // Numbers as given: the learning rate is not rounded away; averaged counts say so.
    expect(trained.stdout).toContain(" learning_rate=2e-5 ");
    // Means are shown with 6 significant digits, not 15.
    for (const [, value] of trained.stdout.matchAll(/=(-?[\d.]+)(?:e-?\d+)?/g)) {
      const digits = (value as string).replace(/^-?0*\.?0*/, "").replace(".", "");
      expect(digits.length, value).toBeLessThanOrEqual(6);
    }
    expect(trained.stdout).toMatch(/ num_trainable_tokens=[\d.]+\/step/);
    expect(trained.stdout).toMatch(/\(metrics: mean over \d+ gradient step\(s\)\)/);
    expect(trained.stderr).toMatch(/^Started training job [0-9a-f-]{36} on 3 group\(s\)\.$/m);
    expect(trained.stderr).toMatch(/^job [0-9a-f]{8} started: \d+ gradient steps$/m);
    expect(trained.stderr).toMatch(/^job [0-9a-f]{8} step 1\/\d+ .*loss=/m);
    expect(trained.stderr).not.toContain("\r");
    expect(trained.stdout).toMatch(
      /^Job [0-9a-f-]{36} completed, step 1 .*num_gradient_steps=\d+$/m,
    );
    // The short id the progress lines show is enough for jobs get.
    const short = /^job ([0-9a-f]{8}) started/m.exec(trained.stderr)?.[1] as string;
    const job = await inProcess(["jobs", "get", short, ...base]);
    expect(job.code).toBe(0);
    expect(job.stdout).toContain("status: COMPLETED");
  });

  it("checkpoints list, chat on a pinned step, log, jobs get and follow, checkpoints delete", async () => {
    const listed = await inProcess(["checkpoints", "list", modelId, "--json", ...base]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((c: { step: number }) => c.step)).toEqual([0, 1]);

    const byPrefix = await inProcess(["chat", modelId.slice(0, 6), "hi", "--json", ...base]);
    expect(byPrefix.code).toBe(0);
    expect(JSON.parse(byPrefix.stdout).model).toBe("wandb-artifact:///me/demo/agent");
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
    expect(missing.code).toBe(4);
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
    expect(followed.stdout).toMatch(/^Job .* completed .*num_gradient_steps=/);

    // Not a terminal: refused without --yes, nothing deleted.
    const unasked = await inProcess(["checkpoints", "delete", modelId, "--steps", "1", ...base]);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain("pass --yes to confirm");
    const deleted = await inProcess([
      ...["checkpoints", "delete", "me/demo/agent", "--steps", "1,7", "--yes"],
      ...base,
    ]);
    // Step 7 does not exist: said, and exit 4; step 1 is gone.
    expect(deleted.code).toBe(4);
    expect(deleted.stdout).toBe("Deleted 1 checkpoint(s).\n");
    expect(deleted.stderr).toContain("has no checkpoint at step(s) 7");
    const json = await inProcess([
      ...["checkpoints", "delete", modelId, "--steps", "99", "--yes", "--json"],
      ...base,
    ]);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({
      deleted_count: 0,
      error: { type: "not_found" },
    });
  });

  it("sft writes the conversations to --upload-dir and trains on them", async () => {
    const sft = await inProcess([
      ...["sft", groupsFile(), "--model", modelId, "--upload-dir", uploads],
      ...["--learning-rate", "5e-5", "--poll-interval", "20"],
      ...base,
    ]);
    expect(sft.stderr).toMatch(/^Started SFT job [0-9a-f-]{36} on file:\/\//m);
    expect(sft.code).toBe(0);
    expect(sft.stdout).toMatch(/completed, step 3 \(/);
    expect(sft.stdout).toContain(" learning_rate=5e-5 ");
  });

  it("sft without --upload-dir uploads a W&B dataset artifact, as model.trainSft does", async () => {
    const lines = [
      {
        messages: [
          { role: "user", content: "say red" },
          { role: "assistant", content: "red" },
        ],
      },
      {
        messages: [
          { role: "user", content: "say cat" },
          { role: "assistant", content: "cat" },
        ],
      },
    ];
    const file = path.join(dir, "sft.jsonl");
    await writeFile(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const checked = await inProcess(["validate", file]);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain("2 SFT line(s): valid.");
    const sft = await inProcess([
      ...["sft", file, "--model", "me/demo/agent", "--poll-interval", "20"],
      ...base,
    ]);
    expect(sft.stderr).toMatch(
      /^Started SFT job [0-9a-f-]{36} on wandb-artifact:\/\/\/me\/demo\/agent-sft-data-[0-9a-f]{12}:v0\.$/m,
    );
    expect(sft.code).toBe(0);
    expect(sft.stdout).toMatch(/completed, step 4 \(/);
  });

  it("train refuses groups with no sampled turn, as model.train does, and starts no job", async () => {
    const file = path.join(dir, "untrainable.jsonl");
    const t = (reward: number) => ({
      messages_and_choices: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
      reward,
    });
    await writeFile(file, `${JSON.stringify({ trajectories: [t(1), t(0)] })}\n`);
    const r = await inProcess([...["train", file, "--model", modelId], ...base]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("trainable Choice");
    expect(r.stderr).not.toContain("Started training job");
    const cps = await inProcess(["checkpoints", "list", modelId, "--json", ...base]);
    expect(JSON.parse(cps.stdout).map((c: { step: number }) => c.step)).toEqual([0, 2, 3, 4]);
  });

  it("models delete asks on a terminal, and takes --yes elsewhere", async () => {
    const declined = await inProcess(["models", "delete", modelId, ...base], { answers: ["n"] });
    expect(declined.asked[0]).toContain(`Delete model ${modelId} (me/demo/agent)`);
    expect(declined.code).toBe(1);
    expect(declined.stderr).toContain("Nothing was deleted.");
    const unasked = await cli(["models", "delete", modelId, ...base]);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain("pass --yes to confirm");
    const gone = await inProcess(["models", "delete", modelId.slice(0, 8), ...base], {
      answers: ["y"],
    });
    expect(gone.code).toBe(0);
    expect(gone.stdout).toBe(`Deleted model ${modelId} and 4 checkpoint(s).\n`);
    const listed = await inProcess(["models", "list", "--json", ...base]);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    const again = await inProcess(["models", "get", modelId, "--json", ...base]);
    expect(again.code).toBe(4);
    expect(JSON.parse(again.stdout)).toEqual({
      error: { type: "not_found", message: expect.stringContaining(modelId), exit_code: 4 },
    });
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
    expect(ok.code).toBe(4);
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

  it("never echoes a key typed where its file goes, nor the credentials of a URL", async () => {
    const key = "sk-live-0123456789abcdef";
    const typed = await inProcess(["models", "list", "--api-key-file", key, "--json"]);
    expect(typed.code).toBe(2);
    expect(typed.stderr).toContain("takes the path of a file holding the key, not the key itself");
    expect(typed.stderr + typed.stdout).not.toContain(key);
    const url = emu.url.replace("http://", "http://user:SECRET-PASS@");
    for (const args of [
      ["models", "list", "--base-url", url, "--api-key-file", keyFile],
      ["models", "list", "--base-url", `${url.replace(/:\d+/, ":1")}`],
    ]) {
      const r = await cli(args, { WANDB_API_KEY: KEY });
      expect(r.code, args.join(" ")).not.toBe(0);
      expect(r.stderr + r.stdout, args.join(" ")).not.toContain("SECRET-PASS");
    }
  });
});
