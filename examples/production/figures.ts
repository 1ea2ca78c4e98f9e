// The production loop measured, offline: a store of production sessions
// with late feedback (thumbs up, thumbs down, sessions a flaky upstream hit),
// then SFT from the best, replayed groups over a few steps, infrastructure
// failures, policy versions and stale groups, through the library and again
// through the `trajectory-recorder` commands. Prints each figure, then all of
// them as one JSON line.
//
//   npx tsx examples/production/figures.ts [--users 144] [--flaky 0.15] [--steps 5] [--seed 1]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { TrainableModel, TrainingClient } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { replayGroups } from "trajectory-recorder/replay";
import {
  sftRowsFromStore,
  type TrajectoryStore,
  type TrajectoryWire,
} from "trajectory-recorder/store";
import { isInfraFailure, lastExchange, referencesOf, scoreAgainst } from "./references.js";
import { type ChatService, mulberry32, startChatService } from "./service.js";
import { type Conversation, converse, pleases, QUESTIONS, rate } from "./users.js";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "144" },
    flaky: { type: "string", default: "0.15" },
    steps: { type: "string", default: "5" },
    seed: { type: "string", default: "1" },
  },
});
const users = Number(values.users);
const steps = Number(values.steps);
const seed = Number(values.seed);
const flakyRate = Number(values.flaky);
const SAMPLES = 40; // answers sampled per question to measure a checkpoint
const N = 8; // answers per replayed state
const REPLAYED = 12; // states replayed
const figures: Record<string, unknown> = { users, flaky: flakyRate, seed };
const say = (line: string) => console.log(line);
const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

const work = mkdtempSync(path.join(tmpdir(), "production-figures-"));
const storeDir = path.join(work, "store");
const emulatorDir = path.join(work, "emulator");
const random = mulberry32(seed);
const service = await startChatService({
  storeDir,
  flakyRate,
  seed,
  emulatorDataDir: emulatorDir,
});
let best: Map<string, Set<string>>;
try {
  const model = await register(service.emulator, "library");
  service.setModel(model.inferenceName(0));
  await production(service);
  best = bestAnswers(service.store);
  await library(service, model);
} finally {
  await service.close();
}
policyVersionsSent();
await throughTheCli();
say(JSON.stringify(figures));
rmSync(work, { recursive: true, force: true });

/** Conversations at step 0, feedback only once they have all ended (late). */
async function production(service: ChatService): Promise<void> {
  const done: Conversation[] = [];
  for (let i = 0; i < users; i += 16)
    done.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(16, users - i) }, (_, j) =>
          converse(service, `user-${i + j + 1}`, random),
        ),
      )),
    );
  const rated = done.filter(() => random() < 0.9);
  for (const c of rated) await rate(c);
  const all = service.store.list();
  const marked = all.filter((s) => {
    const stored = service.store.get(s.id);
    return stored !== undefined && isInfraFailure(stored);
  });
  figures.store = {
    sessions: all.length,
    thumbs_up: all.filter((s) => s.reward === 1).length,
    thumbs_down: all.filter((s) => s.reward === 0).length,
    unrated: all.filter((s) => s.reward === null).length,
    infra_failures: marked.length,
    infra_failures_rated_down: marked.filter((s) => s.reward === 0).length,
  };
  say(`production: ${JSON.stringify(figures.store)} (served by step 0, rated after all ended)`);
}

async function library(service: ChatService, model: TrainableModel): Promise<void> {
  const store = service.store;
  const emu = service.emulator;
  // SFT from the best: thumbs up, sessions the infrastructure failed left out.
  const before = await matchRate(emu, model.inferenceName(0));
  const selection = sftRowsFromStore(store, { minReward: 1, eligible: true });
  const failed = new Set(
    selection.ids.filter((id) => {
      const stored = store.get(id);
      return stored !== undefined && isInfraFailure(stored);
    }),
  );
  const rows = selection.rows.filter((_, i) => !failed.has(selection.ids[i] ?? ""));
  const sft = await model.trainSft(rows, { learningRate: 5e-5, batchSize: 1 });
  const after = await matchRate(emu, model.inferenceName(sft.step));
  figures.sft = {
    rows: rows.length,
    infra_failures_left_out: failed.size,
    counts: selection.counts,
    job: sft.jobId === null ? null : "completed",
    step: sft.step,
    best_match_before: before.best,
    best_match_after: after.best,
    best_first_word_before: before.bestFirstWord,
    best_first_word_after: after.bestFirstWord,
    pleased_before: before.pleased,
    pleased_after: after.pleased,
  };
  say(
    `SFT from the best: ${rows.length} rows (${failed.size} infra-failed session(s) left out), job completed at step ${sft.step}; answers equal to a best-rated one ${pct(before.best)} -> ${pct(after.best)}, starting as one does ${pct(before.bestFirstWord)} -> ${pct(after.bestFirstWord)}, pleasing their asker ${pct(before.pleased)} -> ${pct(after.pleased)}`,
  );

  // The production sessions themselves, grouped by question, as RL groups:
  // the infra-failed ones are left out of the job and counted.
  const sessions = sessionGroups(store);
  const log: string[] = [];
  const logger = { info: (m: string) => log.push(m) };
  const direct = await model.train(sessions, { learningRate: 2e-5 }, { logger });
  figures.sessions_as_groups = {
    groups: sessions.length,
    trajectories: sessions.reduce((n, g) => n + g.trajectories.length, 0),
    infra_failures: direct.infraFailures ?? 0,
    metric: direct.metrics["data/step_num_infra_failures"] ?? null,
    step: direct.step,
  };
  say(
    `sessions as RL groups: ${sessions.length} groups, ${direct.infraFailures ?? 0} infra-failed trajectories left out of the job (data/step_num_infra_failures ${direct.metrics["data/step_num_infra_failures"]}), step ${direct.step}`,
  );

  // Replayed groups, from a model at its base checkpoint: the same states
  // each step, scored against the references.
  const fresh = await register(emu, "replayed");
  const references = referencesOf(store);
  let ids: string[] | undefined;
  const series: number[] = [];
  for (let s = 0; s <= steps; s++) {
    const replay = await replayGroups({
      store,
      model: fresh,
      n: N,
      reward: (t) => scoreAgainst(references, t),
      select: ids ? { ids } : { limit: REPLAYED, seed },
      requestOptions: { max_tokens: 24, temperature: 1, seed },
      logger,
    });
    ids ??= replay.states.map((r) => r.state.trajectoryId);
    series.push(mean(replay.states.flatMap((r) => r.rewards)));
    if (s < steps && replay.groups.length > 0)
      await fresh.train(replay.groups, { learningRate: 2e-5 }, { logger });
  }
  figures.replay = { states: ids?.length ?? 0, n: N, mean_reward_per_step: round(series) };
  say(
    `replayed groups: ${ids?.length} states x ${N} answers; their mean reward at each step: ${round(series).join(" -> ")}`,
  );

  // The production model trains on (replayed groups each round, as the
  // loop's trainer does) until its step is more than 4 past the step that
  // served the sessions; then the sessions arrive as groups again: stale.
  for (let round = 1; (await model.getStep()) <= 4; round++) {
    const replay = await replayGroups({
      store,
      model,
      n: N,
      reward: (t) => scoreAgainst(references, t),
      select: { limit: REPLAYED, seed: seed + round },
      requestOptions: { max_tokens: 24, temperature: 1, seed },
      logger,
    });
    if (replay.groups.length > 0)
      await model.train(replay.groups, { learningRate: 2e-5 }, { logger });
    else await model.trainSft(rows, { learningRate: 5e-5, batchSize: 1 });
  }
  const at = await model.getStep();
  const stale = await model.train(sessions, { learningRate: 2e-5 }, { logger });
  figures.stale = {
    step: at,
    sampled_at: 0,
    stale_groups: stale.staleGroups ?? 0,
    of: sessions.length,
    skipped: stale.skipped ?? null,
    metric: stale.metrics["data/step_num_groups_stale"] ?? null,
    logged: log.some((m) => m.includes("too far off-policy")),
  };
  say(
    `stale: at step ${at}, the ${sessions.length} session groups served at step 0 are dropped (staleGroups ${stale.staleGroups ?? 0}, ${stale.skipped ?? "a job still ran"}, data/step_num_groups_stale ${figures.stale && stale.metrics["data/step_num_groups_stale"]}), with a log line`,
  );
}

/** Every trajectory the emulator's jobs were sent, read back from its saved state. */
function policyVersionsSent(): void {
  const state = JSON.parse(readFileSync(path.join(emulatorDir, "emulator-state.json"), "utf8"));
  const sent = (state.jobs as { request?: { trajectory_groups?: { trajectories: object[] }[] } }[])
    .flatMap((j) => j.request?.trajectory_groups ?? [])
    .flatMap((g) => g.trajectories) as {
    initial_policy_version?: unknown;
    final_policy_version?: unknown;
    metadata?: { infra_failure?: unknown };
  }[];
  figures.sent = {
    trajectories: sent.length,
    with_policy_versions: sent.filter(
      (t) => Number.isInteger(t.initial_policy_version) && Number.isInteger(t.final_policy_version),
    ).length,
    infra_failures: sent.filter((t) => t.metadata?.infra_failure !== undefined).length,
  };
  say(`sent to training: ${JSON.stringify(figures.sent)}`);
}

/** The same through the commands, against a fresh emulator, from the store left on disk. */
async function throughTheCli(): Promise<void> {
  const key = "figures-cli-key-0123456789";
  const emu = await startEmulator({ port: 0, apiKeys: { [key]: "local" } });
  try {
    const keyFile = path.join(work, "key");
    writeFileSync(keyFile, `${key}\n`);
    const env = { TRAJECTORY_RECORDER_STATE_DIR: path.join(work, "state") };
    const base = ["--base-url", emu.url, "--api-key-file", keyFile];
    const cli = (args: string[]) => runCli([...args, ...base], env);
    await cli(["models", "create", "--project", "chat", "--name", "cli", "--base-model", "toy"]);
    const target = ["--model", "local/chat/cli"];
    const sftArgs = ["sft", "--from-store", storeDir, "--min-reward", "1", "--eligible", "--json"];
    const dry = JSON.parse(await cli([...sftArgs, ...target, "--dry-run"]));
    const before = await matchRate(
      { url: emu.url, apiKey: key },
      "wandb-artifact:///local/chat/cli",
    );
    const sft = JSON.parse(
      await cli([...sftArgs, ...target, "--learning-rate", "5e-5", "--batch-size", "1"]),
    );
    const after = await matchRate(
      { url: emu.url, apiKey: key },
      "wandb-artifact:///local/chat/cli",
    );
    // The reward module scores against the same references, saved as JSON.
    const store = await openStore(storeDir);
    const references = referencesOf(store);
    await store.close();
    writeFileSync(path.join(work, "refs.json"), JSON.stringify(references));
    const moduleURL = pathToFileURL(fileURLToPath(new URL("./references.ts", import.meta.url)));
    writeFileSync(
      path.join(work, "reward.mjs"),
      `import { readFileSync } from "node:fs";\nimport { scoreAgainst } from ${JSON.stringify(moduleURL.href)};\nconst refs = JSON.parse(readFileSync(${JSON.stringify(path.join(work, "refs.json"))}, "utf8"));\nexport default (t) => scoreAgainst(refs, t);\n`,
    );
    const replayArgs = [
      "replay",
      "--from-store",
      storeDir,
      ...target,
      "--n",
      String(N),
      "--reward",
      path.join(work, "reward.mjs"),
      "--limit",
      String(REPLAYED),
      "--seed",
      String(seed),
      "--max-tokens",
      "24",
      "--temperature",
      "1",
      "--json",
    ];
    const series: number[] = [];
    for (let s = 0; s <= steps; s++) {
      const out = JSON.parse(await cli([...replayArgs, s < steps ? "--train" : "--dry-run"]));
      series.push(mean(out.states.flatMap((st: { rewards: number[] }) => st.rewards)));
    }
    figures.cli = {
      sft_rows: dry.counts?.rows ?? null,
      sft_step: sft.step ?? null,
      best_match_before: before.best,
      best_match_after: after.best,
      best_first_word_before: before.bestFirstWord,
      best_first_word_after: after.bestFirstWord,
      pleased_before: before.pleased,
      pleased_after: after.pleased,
      replay_mean_reward_per_step: round(series),
    };
    say(
      `CLI: sft --from-store: ${dry.counts?.rows} rows, job completed at step ${sft.step}; answers equal to a best-rated one ${pct(before.best)} -> ${pct(after.best)}, starting as one does ${pct(before.bestFirstWord)} -> ${pct(after.bestFirstWord)}, pleasing ${pct(before.pleased)} -> ${pct(after.pleased)}; replay --train, mean reward of the replayed states at each step: ${round(series).join(" -> ")}`,
    );
  } finally {
    await emu.close();
  }
}

/** Per question, the answers users rated thumbs up (infra-failed sessions left out). */
function bestAnswers(store: TrajectoryStore): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const s of store.list()) {
    const stored = store.get(s.id);
    if (s.reward !== 1 || !stored || isInfraFailure(stored)) continue;
    const { question, answer } = lastExchange(stored.trajectory.messages_and_choices);
    if (question === undefined || answer === undefined) continue;
    out.set(question, (out.get(question) ?? new Set()).add(answer));
  }
  return out;
}

/** How often a checkpoint's answers equal a best-rated answer to the same question, and please. */
async function matchRate(
  emu: { url: string; apiKey: string },
  name: string,
): Promise<{ best: number; bestFirstWord: number; pleased: number }> {
  const openai = new OpenAI({ baseURL: emu.url, apiKey: emu.apiKey });
  let matched = 0;
  let firstMatched = 0;
  let pleased = 0;
  let total = 0;
  for (const [question, wanted] of QUESTIONS) {
    const r = await openai.chat.completions.create({
      model: name,
      messages: [{ role: "user", content: question }],
      max_tokens: 24,
      n: SAMPLES,
      seed: 7,
    });
    for (const c of r.choices) {
      const text = c.message.content ?? "";
      total++;
      if (best.get(question)?.has(text)) matched++;
      const firstWords = [...(best.get(question) ?? [])].map((a) => a.split(" ")[0]);
      if (firstWords.includes(text.split(" ")[0])) firstMatched++;
      if (pleases(text, wanted)) pleased++;
    }
  }
  return { best: matched / total, bestFirstWord: firstMatched / total, pleased: pleased / total };
}

/** The rated production sessions grouped by question, rewards from their feedback. */
function sessionGroups(store: TrajectoryStore): { trajectories: TrajectoryWire[] }[] {
  const byQuestion = new Map<string, TrajectoryWire[]>();
  for (const s of store.list()) {
    const stored = store.get(s.id);
    if (s.reward === null || !stored) continue;
    const { question } = lastExchange(stored.trajectory.messages_and_choices);
    if (question === undefined) continue;
    const group = byQuestion.get(question) ?? [];
    group.push({ ...stored.trajectory, reward: s.reward });
    byQuestion.set(question, group);
  }
  return [...byQuestion.values()].map((trajectories) => ({ trajectories }));
}

async function register(emu: { url: string; apiKey: string }, name: string) {
  const client = new TrainingClient({ baseURL: emu.url, apiKey: emu.apiKey });
  return TrainableModel.register(client, { project: "chat", name, baseModel: "emulator/tiny" });
}

async function openStore(dir: string): Promise<TrajectoryStore> {
  const { TrajectoryStore } = await import("trajectory-recorder/store");
  return TrajectoryStore.open({ dir, logger: { warn: () => {} } });
}

/** `trajectory-recorder ...args` as a user runs it; its stdout, or it throws with its stderr. */
function runCli(args: string[], env: Record<string, string>): Promise<string> {
  const entry = fileURLToPath(new URL("../../src/cli/index.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", entry, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve, reject) =>
    child.on("close", (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`trajectory-recorder ${args[0]} exited ${code}: ${stderr}`)),
    ),
  );
}

function round(xs: number[]): number[] {
  return xs.map((x) => Number(x.toFixed(3)));
}
