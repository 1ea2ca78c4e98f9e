// `jobs get` and `jobs follow`.
import type { TrainingClient } from "../../client/index.js";
import { followTrainingJob, TrainingFailedError } from "../../training/index.js";
import { numberOption, parse, str, type Values } from "../args.js";
import { type Command, EXIT, type Output, print } from "../context.js";
import { averagedMetrics, formatNumber } from "../format.js";
import { jobProgress } from "../progress.js";
import { connect } from "../service.js";

const JOB_REF_HELP = `JOB is the job's id, or a unique prefix of the id of a job this CLI started
(the short id its progress lines show).`;

export const jobsGet: Command = {
  name: "jobs get",
  summary: "show a training job (RL or SFT) and its status",
  usage: "JOB",
  details: `${JOB_REF_HELP}
Prints the job's status and, once it ended, its checkpoint step or error.
Exits 4 when the service has no such job.`,
  async run(args, out) {
    const { values, positionals } = parse(args, {}, { min: 1, max: 1, names: "JOB" });
    const s = await connect(values, out);
    const job = await s.client.trainingJobs.retrieve(s.known.job(positionals[0] as string).id);
    const fields = Object.entries(job)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(
        ([k, v]) =>
          `${k}: ${typeof v === "object" ? JSON.stringify(v) : typeof v === "number" ? formatNumber(v) : v}`,
      );
    print(out, values.json, job, fields.join("\n"));
    return EXIT.ok;
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
    // The CLI speaks the service's language: its raw metric keys (the
    // library's results carry ART's names, which --json adds as art_metrics).
    const { metrics: artMetrics, rawMetrics: metrics } = await followTrainingJob(client, jobId, {
      onEvent: progress.onEvent,
      pollIntervalMs: pollIntervalMs ?? 1000,
      kind,
    });
    progress.end();
    const more = await extra(metrics);
    const result = {
      job_id: jobId,
      status: "COMPLETED",
      ...more,
      metrics,
      art_metrics: artMetrics,
    };
    const step = "step" in more ? `, step ${more.step}` : "";
    const steps = metrics.num_gradient_steps;
    const over = steps === undefined ? "" : ` (metrics: mean over ${steps} gradient step(s))`;
    print(
      out,
      values.json === true,
      result,
      `Job ${jobId} completed${step}${over}: ${averagedMetrics(metrics)}`,
    );
    return EXIT.ok;
  } catch (error) {
    progress.end();
    if (error instanceof TrainingFailedError) {
      print(
        out,
        values.json === true,
        { job_id: jobId, status: "FAILED", error_message: error.serviceMessage },
        `Job ${jobId} failed: ${error.serviceMessage}`,
      );
      return EXIT.failure;
    }
    throw error;
  }
}

export const jobsFollow: Command = {
  name: "jobs follow",
  summary: "follow a training job to its end, with a live progress bar",
  usage: "JOB [--poll-interval MS]",
  details: `${JOB_REF_HELP}
Draws gradient steps and metrics on stderr (a bar on a terminal, one line per
event otherwise), then prints the metrics averaged over the steps. Exits 1 if
the job failed. Stopping this command does not stop the job.

Options:
${FOLLOW_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(args, FOLLOW_OPTIONS, {
      min: 1,
      max: 1,
      names: "JOB",
    });
    const s = await connect(values, out);
    const job = s.known.job(positionals[0] as string);
    // Unknown ids are checked first, so a typo is "not found", not a stalled follow.
    await s.client.trainingJobs.retrieve(job.id);
    const kind = "kind" in job ? job.kind : "RL";
    return followAndPrint(s.client, job.id, values, out, undefined, kind);
  },
};
