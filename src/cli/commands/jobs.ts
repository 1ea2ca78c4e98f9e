// `jobs get` and `jobs follow`.
import type { TrainingClient } from "../../client/index.js";
import { followTrainingJob, TrainingFailedError } from "../../training/index.js";
import { numberOption, parse, str, type Values } from "../args.js";
import { type Command, makeClient, type Output, print } from "../context.js";
import { jobProgress } from "../progress.js";

export const jobsGet: Command = {
  name: "jobs get",
  summary: "show a training job (RL or SFT) and its status",
  usage: "JOB_ID",
  details: "Prints the job's status and, once it ended, its checkpoint step or error.",
  async run(args, out) {
    const { values, positionals } = parse(args, {}, { min: 1, max: 1, names: "JOB_ID" });
    const job = await makeClient(values).trainingJobs.retrieve(positionals[0] as string);
    const fields = Object.entries(job)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`);
    print(out, values.json, job, fields.join("\n"));
    return 0;
  },
};

export const FOLLOW_OPTIONS = { "poll-interval": { type: "string" } } as const;
export const FOLLOW_HELP = `  --poll-interval MS     wait between polls of the job's events (default 1000)`;

/**
 * Follows a job to its end with a progress bar on stderr, then prints its
 * averaged metrics. Exit 1 when the job failed.
 */
export async function followAndPrint(
  client: TrainingClient,
  jobId: string,
  values: Values,
  out: Output,
  extra: (metrics: Record<string, number>) => Promise<Record<string, unknown>> = async () => ({}),
  kind: "RL" | "SFT" = "RL",
): Promise<number> {
  const pollIntervalMs = numberOption("poll-interval", str(values, "poll-interval"), { min: 0 });
  const progress = jobProgress(out, jobId);
  try {
    const { metrics } = await followTrainingJob(client, jobId, {
      onEvent: progress.onEvent,
      pollIntervalMs: pollIntervalMs ?? 1000,
      kind,
    });
    progress.end();
    const more = await extra(metrics);
    const result = { job_id: jobId, status: "COMPLETED", ...more, metrics };
    const shown = Object.entries(metrics)
      .map(([k, v]) => `${k}=${Number(v.toFixed(4))}`)
      .join(" ");
    const step = "step" in more ? `, step ${more.step}` : "";
    print(out, values.json === true, result, `Job ${jobId} completed${step}: ${shown}`);
    return 0;
  } catch (error) {
    progress.end();
    if (error instanceof TrainingFailedError) {
      print(
        out,
        values.json === true,
        { job_id: jobId, status: "FAILED", error_message: error.serviceMessage },
        `Job ${jobId} failed: ${error.serviceMessage}`,
      );
      return 1;
    }
    throw error;
  }
}

export const jobsFollow: Command = {
  name: "jobs follow",
  summary: "follow a training job to its end, with a live progress bar",
  usage: "JOB_ID [--poll-interval MS]",
  details: `Draws gradient steps and metrics on stderr (a bar on a terminal, one line per
event otherwise), then prints the metrics averaged over the steps. Exits 1 if
the job failed. Stopping this command does not stop the job.

Options:
${FOLLOW_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(args, FOLLOW_OPTIONS, {
      min: 1,
      max: 1,
      names: "JOB_ID",
    });
    return followAndPrint(makeClient(values), positionals[0] as string, values, out);
  },
};
