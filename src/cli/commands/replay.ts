// `replay`: recorded production states sampled again from the model's latest
// checkpoint as groups, scored by the judge and/or a reward module, and
// (with --train) trained with model.train. A command line cannot take a JS
// function, so the reward comes from the judge or from a module's export.
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import OpenAI from "openai";
import { type ReplayResult, type ReplayReward, replayGroups } from "../../replay/index.js";
import type { JudgeOptions } from "../../rewards/index.js";
import { StoreLockedError, TrajectoryStore } from "../../store/index.js";
import { TrainableModel } from "../../training/index.js";
import { numberOption, parse, required, str, type Values } from "../args.js";
import { type Command, EXIT, print, readKeyFile, UsageError } from "../context.js";
import { isKnownModel } from "../known.js";
import { connect } from "../service.js";
import { MODEL_REF_HELP } from "./models.js";

const OPTIONS = {
  "from-store": { type: "string" },
  model: { type: "string" },
  n: { type: "string" },
  limit: { type: "string" },
  seed: { type: "string" },
  "negative-at-most": { type: "string" },
  id: { type: "string", multiple: true },
  reward: { type: "string" },
  "judge-model": { type: "string" },
  "judge-base-url": { type: "string" },
  "judge-api-key-file": { type: "string" },
  "max-tokens": { type: "string" },
  temperature: { type: "string" },
  "learning-rate": { type: "string" },
  "dry-run": { type: "boolean" },
  train: { type: "boolean" },
} as const;

export const replay: Command = {
  name: "replay",
  summary: "sample groups from recorded production states and train on those whose rewards differ",
  usage:
    "--from-store DIR --model MODEL (--dry-run | --train) [--n 4] [--judge-model NAME | --reward FILE]",
  details: `${MODEL_REF_HELP}
Chooses states of the store (trajectories with negative feedback first, then a
seeded sample of the rest; each replayed up to its last assistant turn),
samples N answers to each from the model's latest checkpoint, scores each
group, and leaves out (counting them) the groups whose rewards are all equal.
--dry-run prints the groups' rewards; --train also trains on them (model.train)
and prints the new step. The store is read directly: not while a proxy runs
on it.

Scoring (at least one; with both, the judge's score is added to the module's):
  --judge-model NAME    a chat model that judges each group as a whole (RULER-style),
                        at --judge-base-url URL (default $JUDGE_BASE_URL, then
                        OpenAI's) with the key of --judge-api-key-file PATH
                        (default $JUDGE_API_KEY, then $OPENAI_API_KEY)
  --reward FILE         an ES module whose default export (or export "reward") is
                        (trajectory, state) => number, scoring each answer on its own

Options:
  --from-store DIR      the store's directory (as the proxy's --store)
  --model MODEL         the model that samples, and trains with --train
  --n N                 answers per state, the group's size (default 4)
  --limit N             the most states (default 8)
  --seed N              seeds the sample of the states without negative feedback (default 1)
  --negative-at-most X  a reward at or below X is negative feedback (default 0)
  --id ID               replay this trajectory (repeatable), instead of choosing
  --max-tokens N        max_tokens of each sampled answer
  --temperature X       temperature of each sampled answer
  --learning-rate X     with --train, e.g. 1e-5 (default: the service's)
  --dry-run | --train   print the groups only, or train on them too

Without a tool runner (which only the library takes), each sample is one
answer to the replayed turn.`,
  async run(args, out) {
    const { values } = parse(args, OPTIONS, { min: 0, max: 0, names: "" });
    const dir = required(values, "from-store");
    const ref = required(values, "model");
    if ((values["dry-run"] === true) === (values.train === true))
      throw new UsageError("give exactly one of --dry-run (print the groups) and --train.");
    const reward = await rewardModule(str(values, "reward"));
    const judge = judgeOptions(values);
    if (!reward && !judge)
      throw new UsageError(
        "nothing scores the groups: give --judge-model NAME (a judge model) or --reward FILE (a reward module), or both.",
      );
    const learningRate = numberOption("learning-rate", str(values, "learning-rate"));
    const s = await connect(values, out);
    const known = s.known.model(ref);
    if (!isKnownModel(known))
      throw new UsageError(
        `replay needs the model's name to sample from it; ${ref} is known here only by its id: run 'models create ... --return-existing' once, or give ENTITY/PROJECT/NAME.`,
      );
    const model = await TrainableModel.register(s.client, {
      entity: known.entity,
      project: known.project,
      name: known.name,
      baseModel: known.base_model,
    });
    const store = await openStore(dir);
    try {
      const result = await replayGroups({
        store,
        model,
        n: numberOption("n", str(values, "n"), { integer: true, min: 2 }),
        reward,
        judge,
        select: selection(values),
        requestOptions: requestOptions(values),
        logger: { info: (m) => out.stderr.write(`${m}\n`) },
      });
      if (values["dry-run"] === true) {
        print(out, values.json, summary(result), describe(result));
        return EXIT.ok;
      }
      if (result.groups.length === 0) {
        print(
          out,
          values.json,
          { ...summary(result), trained: null },
          `${describe(result)}\nNo group with differing rewards: nothing trained.`,
        );
        return EXIT.ok;
      }
      const trained = await model.train(
        result.groups,
        learningRate === undefined ? undefined : { learningRate },
        { logger: { info: (m) => out.stderr.write(`${m}\n`) } },
      );
      print(
        out,
        values.json,
        { ...summary(result), trained: { job_id: trained.jobId, step: trained.step } },
        `${describe(result)}\nTrained ${result.groups.length} group(s) (job ${trained.jobId}): the model is at step ${trained.step}.`,
      );
      return EXIT.ok;
    } finally {
      await store.close();
    }
  },
};

async function openStore(dir: string): Promise<TrajectoryStore> {
  if (!existsSync(dir)) throw new UsageError(`--from-store ${dir}: no such directory.`);
  try {
    return await TrajectoryStore.open({ dir, logger: { warn: () => {} } });
  } catch (error) {
    if (StoreLockedError.isInstance(error))
      throw new UsageError(
        `the store at ${dir} is in use${error.pid === null ? "" : ` by process ${error.pid}`} (a running proxy holds its lock): stop it, or replay from a copy of the directory.`,
      );
    throw error;
  }
}

async function rewardModule(file: string | undefined): Promise<ReplayReward | undefined> {
  if (file === undefined) return undefined;
  const full = path.resolve(file);
  if (!existsSync(full)) throw new UsageError(`--reward ${file}: no such file.`);
  const mod = (await import(pathToFileURL(full).href)) as Record<string, unknown>;
  const fn = typeof mod.default === "function" ? mod.default : mod.reward;
  if (typeof fn !== "function")
    throw new UsageError(
      `--reward ${file} exports no reward function: export default (trajectory, state) => number (or export const reward).`,
    );
  return fn as ReplayReward;
}

export function judgeOptions(values: Values): JudgeOptions | undefined {
  const name = str(values, "judge-model");
  if (name === undefined) return undefined;
  const file = str(values, "judge-api-key-file");
  const apiKey = file
    ? readKeyFile(file, "--judge-api-key-file")
    : (process.env.JUDGE_API_KEY ?? process.env.OPENAI_API_KEY);
  if (!apiKey)
    throw new UsageError(
      "--judge-model needs the judge's key: --judge-api-key-file PATH, or $JUDGE_API_KEY or $OPENAI_API_KEY.",
    );
  const baseURL = str(values, "judge-base-url") ?? process.env.JUDGE_BASE_URL;
  return { client: new OpenAI({ apiKey, baseURL }), model: name };
}

function selection(values: Values) {
  const ids = values.id;
  return {
    limit: numberOption("limit", str(values, "limit"), { integer: true, positive: true }),
    seed: numberOption("seed", str(values, "seed"), { integer: true }),
    negativeAtMost: numberOption("negative-at-most", str(values, "negative-at-most")),
    ids: Array.isArray(ids) ? ids : undefined,
  };
}

function requestOptions(values: Values): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const maxTokens = numberOption("max-tokens", str(values, "max-tokens"), {
    integer: true,
    positive: true,
  });
  const temperature = numberOption("temperature", str(values, "temperature"), { min: 0 });
  if (maxTokens !== undefined) out.max_tokens = maxTokens;
  if (temperature !== undefined) out.temperature = temperature;
  return out;
}

function summary(result: ReplayResult) {
  return {
    states: result.states.map((s) => ({
      trajectory_id: s.state.trajectoryId,
      negative: s.state.negative,
      turn: s.state.turn,
      rewards: s.rewards,
      outcome: s.outcome,
      failed_samples: s.failedSamples,
    })),
    trainable_groups: result.groups.length,
    no_signal_groups: result.noSignalGroups,
    unusable: result.unusable,
  };
}

function describe(result: ReplayResult): string {
  const rows = result.states.map(
    (s) =>
      `${s.state.trajectoryId}  ${s.state.negative ? "negative" : "sampled "}  ${s.outcome.padEnd(16)}  rewards ${s.rewards.map((r) => Number(r.toFixed(3))).join(", ") || "-"}`,
  );
  return [
    ...rows,
    `${result.states.length} state(s) replayed: ${result.groups.length} group(s) with differing rewards, ${result.noSignalGroups} scored alike (left out), ${result.unusable} not replayable.`,
  ].join("\n");
}
