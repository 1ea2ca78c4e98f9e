// `log`, `train` and `sft` from a JSONL file.
import { readFileSync } from "node:fs";
import type { TrainingClient } from "../../client/index.js";
import {
  LocalFileUploader,
  toExperimentalConfig,
  toSftConfig,
  toSftJsonl,
  toWireGroups,
} from "../../training/index.js";
import { numberOption, parse, required, str, type Values } from "../args.js";
import { type Command, makeClient, type Output, print, UsageError } from "../context.js";
import { readGroupsFile } from "../groups-file.js";
import { GROUP_BY_HELP } from "./files.js";
import { FOLLOW_HELP, FOLLOW_OPTIONS, followAndPrint } from "./jobs.js";

/** The file's groups; invalid lines stop the command before anything is sent. */
function groupsOf(file: string, values: Values, out: Output) {
  const read = readGroupsFile(file, str(values, "group-by"));
  if (read.problems.length > 0) {
    for (const p of read.problems) out.stderr.write(`${file}:${p.line}: ${p.message}\n`);
    throw new UsageError(`${file} has ${read.problems.length} invalid line(s); nothing was sent.`);
  }
  if (read.groups.length === 0) throw new UsageError(`${file} holds no trajectory.`);
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
  usage: "FILE --model MODEL_ID [--split NAME] [--group-by KEY]",
  details: `Options:
  --model MODEL_ID      the model to log under
  --split NAME          e.g. val or test (default val)
${GROUP_BY_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { ...GROUP_OPTIONS, split: { type: "string" } },
      { min: 1, max: 1, names: "FILE" },
    );
    const modelId = required(values, "model");
    const groups = toWireGroups(groupsOf(positionals[0] as string, values, out), "log");
    const split = str(values, "split") ?? "val";
    const answer = await makeClient(values).models.log(modelId, {
      split,
      trajectory_groups: groups,
    });
    const shown = Object.entries(answer)
      .filter(([, v]) => typeof v === "number")
      .map(([k, v]) => `${k}=${Number((v as number).toFixed(4))}`)
      .join(" ");
    print(
      out,
      values.json,
      answer,
      `Logged ${groups.length} group(s) under ${split}. ${shown}`.trim(),
    );
    return 0;
  },
};

export const train: Command = {
  name: "train",
  summary: "train a model (RL) on the groups of a JSONL file and follow the job",
  usage: "FILE --model MODEL_ID [--learning-rate X] [--group-by KEY] [--poll-interval MS]",
  details: `Creates an RL training job on the file's groups (validated first: nothing is
sent if a line is invalid), follows it with a progress bar, and prints the new
step and the metrics averaged over the gradient steps. Exits 1 if the job failed.

Options:
  --model MODEL_ID      the model to train
  --learning-rate X     e.g. 1e-5 (default: the service's)
${GROUP_BY_HELP}
${FOLLOW_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(
      args,
      { ...GROUP_OPTIONS, ...FOLLOW_OPTIONS, "learning-rate": { type: "string" } },
      { min: 1, max: 1, names: "FILE" },
    );
    const modelId = required(values, "model");
    const learningRate = numberOption("learning-rate", str(values, "learning-rate"));
    const trajectory_groups = toWireGroups(
      groupsOf(positionals[0] as string, values, out),
      "train",
    );
    const experimental_config = toExperimentalConfig(
      learningRate === undefined ? undefined : { learningRate },
    );
    const client = makeClient(values);
    const before = await latestStep(client, modelId);
    const job = await client.trainingJobs.create({
      model_id: modelId,
      trajectory_groups,
      experimental_config,
    });
    out.stderr.write(`Started training job ${job.id} on ${trajectory_groups.length} group(s).\n`);
    const interval = numberOption("poll-interval", str(values, "poll-interval")) ?? 1000;
    return followAndPrint(client, job.id, values, out, async () => ({
      step: await stepAfter(client, modelId, before, interval),
    }));
  },
};

/** The SFT lines: the file as is when its lines are `{messages}`, else from its trajectories. */
function sftData(file: string, values: Values, out: Output): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(
      `the file ${file} could not be read (${(error as NodeJS.ErrnoException).code}).`,
    );
  }
  const first = text.split(/\r?\n/).find((l) => l.trim() !== "");
  let isSft = false;
  try {
    isSft = first !== undefined && Array.isArray(JSON.parse(first).messages);
  } catch {}
  if (isSft) return toSftJsonl(text).jsonl;
  const trajectories = groupsOf(file, values, out).flatMap((g) => g.trajectories);
  return toSftJsonl(trajectories).jsonl;
}

export const sft: Command = {
  name: "sft",
  summary: "supervised fine-tuning on a JSONL file, uploaded to a directory or given by URL",
  usage:
    "(FILE --upload-dir DIR | --data-url URL) --model MODEL_ID [--learning-rate X] [--batch-size N]",
  details: `FILE holds SFT lines ({messages, tools?}), or trajectory groups or trajectories
(each trajectory's conversation becomes a line). It is written to --upload-dir
and given to the service as a file:// URL: that works with the emulator
started with --sft-data-dir on the same directory. For the hosted service,
upload the data first and pass --data-url.

Options:
  --model MODEL_ID      the model to train
  --upload-dir DIR      where to write the JSONL (file:// URL)
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
        "upload-dir": { type: "string" },
        "data-url": { type: "string" },
        "learning-rate": { type: "string" },
        "batch-size": { type: "string" },
      },
      { min: 0, max: 1, names: "FILE" },
    );
    const modelId = required(values, "model");
    const file = positionals[0];
    const dataUrl = str(values, "data-url");
    const uploadDir = str(values, "upload-dir");
    if ((file === undefined) === (dataUrl === undefined)) {
      throw new UsageError("give either FILE (with --upload-dir DIR) or --data-url URL.");
    }
    if (file !== undefined && uploadDir === undefined) {
      throw new UsageError(
        "FILE needs --upload-dir DIR, where the JSONL is written for the service to read.",
      );
    }
    const config = toSftConfig({
      learningRate: numberOption("learning-rate", str(values, "learning-rate")),
      batchSize: numberOption("batch-size", str(values, "batch-size"), {
        integer: true,
        positive: true,
      }),
    });
    const client = makeClient(values);
    let url = dataUrl as string;
    if (file !== undefined) {
      const jsonl = sftData(file, values, out);
      url = await new LocalFileUploader(uploadDir as string).upload({
        name: `sft-${Date.now()}.jsonl`,
        data: jsonl,
        contentType: "application/jsonl",
      });
    }
    const before = await latestStep(client, modelId);
    const job = await client.sftTrainingJobs.create({
      model_id: modelId,
      training_data_url: url,
      config,
    });
    out.stderr.write(`Started SFT job ${job.id} on ${url}.\n`);
    const interval = numberOption("poll-interval", str(values, "poll-interval")) ?? 1000;
    return followAndPrint(
      client,
      job.id,
      values,
      out,
      async () => ({ step: await stepAfter(client, modelId, before, interval) }),
      "SFT",
    );
  },
};
