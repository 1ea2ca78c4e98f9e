// `trajectory-recorder replay` against a real emulator on loopback: a store
// of recorded conversations with feedback, a reward module, a dry run and a
// training run, as a user runs them.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { TrajectoryStore } from "trajectory-recorder/store";
import { afterAll, beforeAll, expect, it } from "vitest";
import { inProcess } from "./run.js";

const KEY = "cli-replay-key-0123456789";
let emu: Emulator;
let dir: string;
let storeDir: string;
let base: string[];
let modelId: string;

const answer = (content: string) => ({
  finish_reason: "stop",
  index: 0,
  logprobs: null,
  message: { role: "assistant" as const, content, refusal: null },
});

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tr-replay-"));
  process.env.TRAJECTORY_RECORDER_STATE_DIR = path.join(dir, "state");
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "me" } });
  const keyFile = path.join(dir, "key");
  await writeFile(keyFile, `${KEY}\n`);
  base = ["--base-url", emu.url, "--api-key-file", keyFile];
  storeDir = path.join(dir, "store");
  const store = await TrajectoryStore.open({ dir: storeDir });
  for (const [id, topic, reward] of [
    ["trj_good", "apple", 1],
    ["trj_bad", "cat", 0],
    ["trj_new", "red", undefined],
  ] as const) {
    store.put({
      id,
      session: id,
      status: "finished",
      calls: 1,
      trajectory: {
        messages_and_choices: [{ role: "user", content: `please say ${topic}` }, answer("no")],
        tools: null,
        additional_histories: [],
        reward: 0,
        initial_policy_version: null,
        final_policy_version: null,
        metrics: {},
        metadata: {},
        logs: [],
      },
    });
    if (reward !== undefined) store.addFeedback({ trajectory_id: id, reward });
  }
  await store.close();
  // Longer answers score higher: the groups' rewards differ.
  await writeFile(
    path.join(dir, "reward.mjs"),
    "export default (t) => String(t.messages().at(-1)?.content ?? '').length;\n",
  );
  const created = await inProcess([
    "models",
    "create",
    "--project",
    "p",
    "--name",
    "replayed",
    "--base-model",
    "toy",
    "--json",
    ...base,
  ]);
  expect(created.code).toBe(0);
  modelId = JSON.parse(created.stdout).id;
});
afterAll(async () => {
  delete process.env.TRAJECTORY_RECORDER_STATE_DIR;
  await emu.close();
});

const replayArgs = () => [
  "replay",
  "--from-store",
  storeDir,
  "--model",
  modelId,
  "--n",
  "3",
  "--reward",
  path.join(dir, "reward.mjs"),
  "--max-tokens",
  "4",
  ...base,
];

it("--dry-run prints each state's group rewards, negative feedback first, and trains nothing", async () => {
  const r = await inProcess([...replayArgs(), "--dry-run", "--json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout);
  expect(out.states[0]).toMatchObject({ trajectory_id: "trj_bad", negative: true, turn: 1 });
  expect(out.states.map((s: { trajectory_id: string }) => s.trajectory_id).sort()).toEqual([
    "trj_bad",
    "trj_good",
    "trj_new",
  ]);
  for (const s of out.states) expect(s.rewards).toHaveLength(3);
  expect(out.trainable_groups + out.no_signal_groups).toBe(3);
});

it("--train trains the groups whose rewards differ and prints the new step", async () => {
  const r = await inProcess([...replayArgs(), "--train", "--learning-rate", "1e-5"]);
  expect(r.code).toBe(0);
  // Step 1: the dry run before it trained nothing.
  expect(r.stdout).toMatch(/Trained \d group\(s\) \(job [^)]+\): the model is at step 1\./);
  expect(r.stdout).toMatch(/^trj_bad {2}negative/m);
});

it("says what is missing before sampling anything", async () => {
  const neither = await inProcess([
    "replay",
    "--from-store",
    storeDir,
    "--model",
    modelId,
    "--dry-run",
    ...base,
  ]);
  expect(neither.code).toBe(2);
  expect(neither.stderr).toContain("nothing scores the groups: give --judge-model NAME");
  const both = await inProcess([...replayArgs(), "--dry-run", "--train"]);
  expect(both.code).toBe(2);
  expect(both.stderr).toContain("give exactly one of --dry-run");
  const small = await inProcess([...replayArgs(), "--n", "1", "--dry-run"]);
  expect(small.code).toBe(2);
  expect(small.stderr).toContain("--n must be an integer of at least 2");
});
