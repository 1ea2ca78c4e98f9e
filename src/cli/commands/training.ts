// `log`, `train` and `sft` from a JSONL file.
import { randomUUID } from "node:crypto";
import type { TrainingClient } from "../../client/index.js";
import {
  defaultSftUploader,
  LocalFileUploader,
  type SftFilter,
  type SftSelection,
  sftRowsFromTrajectories,
  toExperimentalConfig,
  toSftConfig,
  toSftJsonl,
  toWireGroups,
} from "../../training/index.js";
import { checkGroups } from "../../trajectory/index.js";
import { numberOption, parse, required, str, type Values } from "../args.js";
import {
  type Command,
  EXIT,
  InvalidDataError,
  type Output,
  print,
  UsageError,
} from "../context.js";
import { plainMetrics } from "../format.js";
import { type GroupsFile, readGroupsFile } from "../groups-file.js";
import { isKnownModel } from "../known.js";
import { connect } from "../service.js";
import { describeSelection, filterOf, SELECT_OPTIONS, selectFromStore } from "../sft-selection.js";
import { GROUP_BY_HELP } from "./files.js";
import { FOLLOW_HELP, FOLLOW_OPTIONS, followAndPrint } from "./jobs.js";
import { MODEL_REF_HELP } from "./models.js";

/** Invalid lines stop the command before anything is sent (exit 3, as `validate`). */
function refuseProblems(file: string, read: GroupsFile, out: Output): void {
  if (read.problems.length === 0) return;
  for (const p of read.problems.slice(0, 20)) out.stderr.write(`${file}:${p.line}: ${p.message}\n`);
  if (read.problems.length > 20)
    out.stderr.write(`... and ${read.problems.length - 20} more (see 'validate ${file}')\n`);
  throw new InvalidDataError(
    `${file} has ${read.problems.length} invalid line(s); nothing was sent.`,
  );
}

/** The file's groups; invalid lines, SFT lines or no group at all stop the command. */
async function groupsOf(file: string, values: Values, out: Output, command: string) {
  const read = await readGroupsFile(file, str(values, "group-by"));
  refuseProblems(file, read, out);
  if (read.lines.sft > 0)
    throw new InvalidDataError(
      `${file} holds ${read.lines.sft} SFT line(s) ({messages}): \`${command}\` takes trajectory groups or trajectories; train on SFT lines with \`sft\`.`,
    );
  if (read.groups.length === 0) throw new InvalidDataError(`${file} holds no trajectory group.`);
  return read.groups;
}

async function latestStep(client: TrainingClient, modelId: string): Promise<number> {
  const page = await client.models.checkpoints.list(modelId, { limit: 1, order: "desc" });
  return page.data[0]?.step ?? 0;
}

/** After a job ended, its checkpoint may take a moment to be listed. */
async function stepAfter(
  client: TrainingClient,
  modelId: string,
  before: number,
  intervalMs: number,
): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const step = await latestStep(client, modelId);
    if (step > before || Date.now() > deadline) return step;
    await new Promise((r) => setTimeout(r, Math.max(intervalMs, 10)));
  }
}

const GROUP_OPTIONS = { model: { type: "string" }, "group-by": { type: "string" } } as const;

export const log: Command = {
  name: "log",
  summary: "log the groups of a JSONL file under a split (metrics only, no training)",
  usage: "FILE --model MODEL [--split NAME] [--group-by KEY]",
  details: `${MODEL_REF_HELP}
Exits 3, sending nothing, when a line is invalid (as \`validate\` reports it).

Options:
  --model MODEL         the model to log under
  --split NAME          e.g. val or test (default val)
${GROUP_BY_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { ...GROUP_OPTIONS, split: { type: "string" } },
      { min: 1, max: 1, names: "FILE" },
    );
    const ref = required(values, "model");
    // The file is checked before anything else: bad data is said without a network.
    const groups = toWireGroups(
      await groupsOf(positionals[0] as string, values, out, "log"),
      "log",
    );
    // An empty group would be logged as reward=0 with no trajectory: a point
    // on the chart that no rollout made.
    const empty = groups.filter((g) => g.trajectories.length === 0).length;
    if (empty > 0)
      throw new InvalidDataError(
        `${empty} of the ${groups.length} group(s) in ${positionals[0]} hold no trajectory ({"trajectories":[]}, or every rollout failed): the service would log them as reward 0. Nothing was sent; leave them out (see 'validate').`,
      );
    const s = await connect(values, out);
    const modelId = s.known.model(ref).id;
    const split = str(values, "split") ?? "val";
    const answer = await s.client.models.log(modelId, { split, trajectory_groups: groups });
    print(
      out,
      values.json,
      answer,
      `Logged ${groups.length} group(s) under ${split}. ${plainMetrics(answer)}`.trim(),
    );
    return EXIT.ok;
  },
};

export const train: Command = {
  name: "train",
  summary: "train a model (RL) on the groups of a JSONL file and follow the job",
  usage: "FILE --model MODEL [--learning-rate X] [--group-by KEY] [--poll-interval MS]",
  details: `${MODEL_REF_HELP}
Creates an RL training job on the file's groups, follows it with a progress
bar, and prints the new step and the metrics averaged over the gradient steps.
The groups are checked first, as \`model.train\` checks them: nothing is sent,
and it exits 3, when a line is invalid or no trajectory holds a sampled turn
with logprobs (the job would train on nothing). Exits 1 if the job failed.

Options:
  --model MODEL         the model to train
  --learning-rate X     e.g. 1e-5 (default: the service's)
${GROUP_BY_HELP}
${FOLLOW_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { ...GROUP_OPTIONS, ...FOLLOW_OPTIONS, "learning-rate": { type: "string" } },
      { min: 1, max: 1, names: "FILE" },
    );
    const ref = required(values, "model");
    const learningRate = numberOption("learning-rate", str(values, "learning-rate"));
    const interval =
      numberOption("poll-interval", str(values, "poll-interval"), { min: 0 }) ?? 1000;
    const trajectory_groups = toWireGroups(
      await groupsOf(positionals[0] as string, values, out, "train"),
      "train",
    );
    // The refusal model.train makes (no trainable turn anywhere), in its words.
    checkGroups(trajectory_groups, undefined, "train", { refuseUntrainable: true });
    const s = await connect(values, out);
    const modelId = s.known.model(ref).id;
    const experimental_config = toExperimentalConfig(
      learningRate === undefined ? undefined : { learningRate },
    );
    const before = await latestStep(s.client, modelId);
    const job = await s.client.trainingJobs.create({
      model_id: modelId,
      trajectory_groups,
      experimental_config,
    });
    s.known.rememberJob({
      id: job.id,
      model_id: modelId,
      kind: "RL",
      created_at: new Date().toISOString(),
    });
    await s.known.save();
    out.stderr.write(`Started training job ${job.id} on ${trajectory_groups.length} group(s).\n`);
    return followAndPrint(s.client, job.id, values, out, async () => ({
      step: await stepAfter(s.client, modelId, before, interval),
    }));
  },
};

/**
 * The SFT lines of a file: SFT lines as written, each trajectory's history
 * branches as rows (as `--from-store` makes them). Trajectories carry
 * rewards: `--min-reward` keeps those at or above it (as ART's SFT users
 * filter a run's best rollouts); without it, training on every one whatever
 * its reward is said on stderr when the rewards differ.
 */
async function sftFromFile(
  file: string,
  values: Values,
  filter: SftFilter,
  out: Output,
): Promise<{ jsonl: string; selection: SftSelection; sftLines: number }> {
  const read = await readGroupsFile(file, str(values, "group-by"));
  refuseProblems(file, read, out);
  const all = read.groups.flatMap((g) => g.trajectories);
  const minReward = filter.minReward;
  const selection = sftRowsFromTrajectories(all, filter);
  if (minReward !== undefined) {
    if (all.length > 0)
      out.stderr.write(
        `sft: kept ${all.length - selection.counts.dropped.reward} of ${all.length} trajectories with reward >= ${minReward}.\n`,
      );
    if (all.length > 0 && selection.counts.selected === 0 && read.sft.length === 0)
      throw new InvalidDataError(
        `no trajectory of ${file} has a reward of ${minReward} or more; nothing to train on.`,
      );
  } else if (all.length > 0) {
    const rewards = all.map((t) => t.reward ?? 0);
    const low = Math.min(...rewards);
    const high = Math.max(...rewards);
    if (low !== high)
      out.stderr.write(
        `warning: sft trains on all ${all.length} trajectories, whatever their reward (from ${low} to ${high}); --min-reward X keeps only those at or above X.\n`,
      );
  }
  const fromTrajectories = selection.rows.length > 0 ? toSftJsonl(selection.rows).jsonl : "";
  const jsonl = `${read.sft.map((l) => `${l}\n`).join("")}${fromTrajectories}`;
  if (jsonl === "" && !values["dry-run"])
    throw new InvalidDataError(
      `${file} holds no SFT line and no trajectory with a row to train on.`,
    );
  return { jsonl, selection, sftLines: read.sft.length };
}

/** The rows the store's selection gives, said on stderr; none is an error unless a dry run. */
async function sftFromStore(dir: string, filter: SftFilter, values: Values, out: Output) {
  const selection = await selectFromStore(dir, filter);
  if (selection.rows.length === 0 && !values["dry-run"]) {
    for (const line of describeSelection(selection, filter)) out.stderr.write(`sft: ${line}\n`);
    throw new InvalidDataError(
      `no row to train on was selected from the store at ${dir}; nothing was sent.`,
    );
  }
  const jsonl = selection.rows.length > 0 ? toSftJsonl(selection.rows).jsonl : "";
  return { jsonl, selection, sftLines: 0 };
}

/** A dry run's answer: the counts and one sample row, nothing sent. */
function printDryRun(
  made: { jsonl: string; selection: SftSelection; sftLines: number },
  filter: SftFilter,
  values: Values,
  out: Output,
): number {
  const sample =
    made.jsonl === "" ? null : JSON.parse(made.jsonl.slice(0, made.jsonl.indexOf("\n")));
  const lines = describeSelection(made.selection, filter);
  if (made.sftLines > 0) lines.push(`SFT lines as written: ${made.sftLines}`);
  lines.push(sample ? `sample row:\n${JSON.stringify(sample)}` : "no row to train on.");
  print(
    out,
    values.json,
    { dry_run: true, counts: made.selection.counts, sft_lines: made.sftLines, sample },
    `Dry run: nothing was sent.\n${lines.join("\n")}`,
  );
  return EXIT.ok;
}

export const sft: Command = {
  name: "sft",
  summary: "supervised fine-tuning on a JSONL file (uploaded as a W&B artifact) or a URL",
  usage:
    "(FILE | --from-store DIR | --data-url URL) --model MODEL [--min-reward X] [--eligible] [--since T] [--until T] [--served-by M] [--metadata K=V] [--dry-run] [--upload-dir DIR] [--learning-rate X] [--batch-size N]",
  details: `${MODEL_REF_HELP}
FILE holds SFT lines ({messages, tools?}), trajectory groups or trajectories
(each trajectory's conversation becomes a line), checked as \`validate\` checks
them. It is uploaded as \`model.trainSft\` uploads it: a W&B dataset artifact
(the emulator on loopback serves W&B's artifact API too), which needs the
model's ENTITY/PROJECT/NAME (give it, or a model this CLI knows).
--upload-dir writes the file there instead and gives the service a file://
URL (an emulator started with --sft-data-dir on that directory reads it);
--data-url takes data uploaded by other means. Trajectories are trained on
whatever their reward unless --min-reward says which to keep (a warning says
so when their rewards differ).
--from-store DIR selects production trajectories from a store (as the
proxy's --store) by their feedback: one row per history branch, each cut
before a generation that errored, was cut off or interrupted, tools kept,
identical rows once; trajectories a feedback marked not eligible are left
out. --dry-run prints what was selected and dropped, and a sample row, and
sends nothing (no --model needed).

Options:
  --model MODEL         the model to train
  --from-store DIR      select from the store in DIR (while no proxy runs on it)
  --min-reward X        keep only trajectories with a reward of X or more
  --eligible            only trajectories eligible for training (store)
  --since T, --until T  last written or rated in [T, T'): ISO 8601, or 30m, 24h, 7d ago (store)
  --served-by M         served by model M, or by any checkpoint of M when M has no :stepN (store)
  --metadata K=V        metadata K equals V; repeat for more
  --dry-run             print the counts and a sample row; send nothing
  --upload-dir DIR      write the JSONL there (file:// URL) instead of uploading it
  --data-url URL        data already uploaded (instead of FILE)
  --learning-rate X     default 5e-5
  --batch-size N        trajectories per batch (default: the service's)
${GROUP_BY_HELP}
${FOLLOW_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      {
        ...GROUP_OPTIONS,
        ...FOLLOW_OPTIONS,
        ...SELECT_OPTIONS,
        "upload-dir": { type: "string" },
        "data-url": { type: "string" },
        "learning-rate": { type: "string" },
        "batch-size": { type: "string" },
      },
      { min: 0, max: 1, names: "FILE" },
    );
    const file = positionals[0];
    const dataUrl = str(values, "data-url");
    const fromStore = str(values, "from-store");
    const uploadDir = str(values, "upload-dir");
    const sources = [file, dataUrl, fromStore].filter((v) => v !== undefined).length;
    if (sources !== 1) {
      throw new UsageError("give one of FILE, --from-store DIR or --data-url URL.");
    }
    if (dataUrl !== undefined && uploadDir !== undefined) {
      throw new UsageError("--upload-dir writes FILE; with --data-url there is nothing to write.");
    }
    if (dataUrl !== undefined && values["dry-run"])
      throw new UsageError(
        "--dry-run shows what FILE or --from-store would send; --data-url sends no data of ours.",
      );
    const filter = filterOf(values, fromStore !== undefined);
    if (dataUrl !== undefined && (filter.minReward !== undefined || filter.metadata))
      throw new UsageError(
        "--min-reward and --metadata select from FILE or --from-store; --data-url is sent as it is.",
      );
    const dryRun = values["dry-run"] === true;
    const ref = dryRun ? str(values, "model") : required(values, "model");
    const config = toSftConfig({
      learningRate: numberOption("learning-rate", str(values, "learning-rate")),
      batchSize: numberOption("batch-size", str(values, "batch-size"), {
        integer: true,
        positive: true,
      }),
    });
    const interval =
      numberOption("poll-interval", str(values, "poll-interval"), { min: 0 }) ?? 1000;
    const made =
      fromStore !== undefined
        ? await sftFromStore(fromStore, filter, values, out)
        : file !== undefined
          ? await sftFromFile(file, values, filter, out)
          : undefined;
    if (made && dryRun) return printDryRun(made, filter, values, out);
    if (made)
      for (const line of describeSelection(made.selection, filter))
        if (fromStore !== undefined || made.selection.counts.considered > 0)
          out.stderr.write(`sft: ${line}\n`);
    const jsonl = made?.jsonl;
    const s = await connect(values, out);
    const model = s.known.model(ref as string);
    let url = dataUrl as string;
    if (jsonl !== undefined) {
      if (uploadDir !== undefined) {
        url = await new LocalFileUploader(uploadDir).upload({
          name: `sft-${Date.now()}.jsonl`,
          data: jsonl,
          contentType: "application/jsonl",
        });
      } else {
        if (!isKnownModel(model)) {
          throw new UsageError(
            `uploading the data as a W&B artifact needs the model's ENTITY/PROJECT/NAME, and model ${model.id} is not known here: give --model ENTITY/PROJECT/NAME, or --upload-dir / --data-url.`,
          );
        }
        const lines = jsonl.split("\n").length - 1;
        url = await defaultSftUploader(s.client).upload({
          name: `${model.name}-sft-data-${randomUUID().replaceAll("-", "").slice(0, 12)}.jsonl`,
          data: jsonl,
          contentType: "application/jsonl",
          owner: { entity: model.entity, project: model.project, run: model.run_id ?? model.name },
          metadata: { format: "jsonl", num_trajectories: lines },
        });
      }
    }
    const before = await latestStep(s.client, model.id);
    const job = await s.client.sftTrainingJobs.create({
      model_id: model.id,
      training_data_url: url,
      config,
    });
    s.known.rememberJob({
      id: job.id,
      model_id: model.id,
      kind: "SFT",
      created_at: new Date().toISOString(),
    });
    await s.known.save();
    out.stderr.write(`Started SFT job ${job.id} on ${url}.\n`);
    return followAndPrint(
      s.client,
      job.id,
      values,
      out,
      async () => ({ step: await stepAfter(s.client, model.id, before, interval) }),
      "SFT",
    );
  },
};
