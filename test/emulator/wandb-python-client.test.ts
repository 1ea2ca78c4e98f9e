// The real `wandb` 0.30 Python client (installed by the global setup into a
// cached venv; see test/setup/python-wandb.ts) against the emulator, with
// nothing translated: the W&B steps of ART's `_train_sft` (wandb.init with
// resume="allow" by run id, Artifact, add_file, log_artifact, wait, finish),
// twice in one process, then an SFT job on the artifact it logged, through
// TrainingClient.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TrainableModel, TrainingClient } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, inject, it } from "vitest";

// W&B keys are 40 characters; the client refuses others.
const KEY = "a1b2c3d4e5".repeat(4);
const python = inject("wandbPython");
const script = fileURLToPath(new URL("../fixtures/wandb/train_sft_upload.py", import.meta.url));

let emu: Emulator;
let origin: string;
let dir: string;
beforeAll(async () => {
  if (!python)
    throw new Error(
      "the global setup gave no wandb python (vitest.config.ts should have left this file out)",
    );
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "alice" } });
  origin = new URL(emu.url).origin;
  dir = await mkdtemp(path.join(tmpdir(), "wandb-python-"));
});
afterAll(async () => {
  await emu?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Round {
  round: number;
  resumed: boolean;
  run_id: string;
  name: string;
  version: string;
  digest: string;
  state: string;
  url: string;
}

/** Runs the script with the client's files kept under the test's temp dir. */
function runClient(env: Record<string, string>): Promise<Round[]> {
  const home = path.join(dir, "wandb");
  return new Promise((resolve, reject) => {
    execFile(
      python as string,
      [script],
      {
        timeout: 150_000,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: dir,
          WANDB_BASE_URL: origin,
          WANDB_API_KEY: KEY,
          WANDB_DIR: home,
          WANDB_CACHE_DIR: home,
          WANDB_CONFIG_DIR: home,
          WANDB_DATA_DIR: home,
          WANDB_ERROR_REPORTING: "false",
          WANDB__SERVICE_WAIT: "60",
          PYTHONUNBUFFERED: "1",
          ...env,
        },
      },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`the wandb client failed (${error.message}):\n${stderr}\n${stdout}`));
        else
          resolve(
            stdout
              .trim()
              .split("\n")
              .map((l) => JSON.parse(l) as Round),
          );
      },
    );
  });
}

async function graphql(query: string, variables: Record<string, unknown>) {
  const res = await fetch(`${origin}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Basic ${Buffer.from(`api:${KEY}`).toString("base64")}`,
    },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data: any; errors?: unknown };
}

it("runs ART's _train_sft uploads with the real wandb client, twice in one process, then trains on the artifact", async () => {
  const client = new TrainingClient({ apiKey: KEY, baseURL: emu.url, maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "sft-py",
    name: "agent",
    baseModel: "emulator/tiny",
  });
  const data = path.join(dir, "train.jsonl");
  const examples = ["red", "cat", "two"].map((w) => ({
    messages: [
      { role: "user", content: `say ${w}` },
      { role: "assistant", content: `${w} ${w}` },
    ],
  }));
  await writeFile(data, `${examples.map((e) => JSON.stringify(e)).join("\n")}\n`);

  const rounds = await runClient({
    ENTITY: model.entity,
    PROJECT: model.project,
    MODEL: model.name,
    RUN_ID: model.runId ?? model.name,
    DATA: data,
    ROUNDS: "2",
  });
  expect(rounds).toHaveLength(2);
  const [first, second] = rounds as [Round, Round];
  // The first round creates the run; the second, in the same process, resumes it by id.
  expect(first.resumed).toBe(false);
  expect(second.resumed).toBe(true);
  expect(second.run_id).toBe(first.run_id);
  for (const r of rounds) {
    expect(r.state).toBe("COMMITTED");
    expect(r.version).toBe("v0");
    expect(r.name).toMatch(/^agent-sft-data-[0-9a-f]{12}:v0$/);
  }
  expect(second.name).not.toBe(first.name);

  // The run ended as finished, with the summary the client sent.
  const run = await graphql(
    "query Run($entity: String!, $project: String!, $name: String!) { project(name: $project, entityName: $entity) { run(name: $name) { name state summaryMetrics } } }",
    { entity: model.entity, project: model.project, name: first.run_id },
  );
  expect(run.errors).toBeUndefined();
  expect(run.data.project.run).toMatchObject({ name: first.run_id, state: "finished" });
  expect(JSON.parse(run.data.project.run.summaryMetrics)).toHaveProperty("_wandb");

  // An SFT job on the artifact the real client logged, through TrainingClient.
  const stepBefore = await model.getStep();
  const job = await client.sftTrainingJobs.create({
    model_id: model.id,
    training_data_url: second.url,
    config: { batch_size: 1, learning_rate: 5e-5 },
  });
  const result = await model.followJob(job.id, { stepBefore, kind: "SFT", pollIntervalMs: 20 });
  expect(result.step).toBe(stepBefore + 1);
  expect(result.rawMetrics.num_gradient_steps).toBe(3);
  expect(result.metrics["loss/train"]).toEqual(expect.any(Number));
}, 180_000);
