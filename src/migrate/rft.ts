// A reinforcement fine-tuning job moved off OpenAI: the dataset's items are
// scenarios, each sampled as a group on the trainable model, scored by the
// grader, and trained with model.train, step after step; the grader's score
// is measured on the first and the last checkpoint with the same seeds.
import { Recorder } from "../recorder/index.js";
import { type ReportStep, type ReportTraining, renderReport } from "../report/index.js";
import { type GraderReward, graderReward } from "../rewards/index.js";
import type { TrainableModel } from "../training/index.js";
import { gatherTrajectoryGroups, type Trajectory, TrajectoryGroup } from "../trajectory/index.js";
import { checkRftOptions, type RftOptions, type RftSettings } from "./rft-options.js";
import { answerScenario, type OpenAiScenario, readOpenAiScenarios } from "./scenarios.js";

/** One training step of {@link runRft}. */
export interface RftStep {
  /** The step's number in the run, from 1. */
  index: number;
  /** The checkpoint that sampled the step's groups. */
  step: number;
  /** The grader's mean score over the step's answers. */
  score: number;
  /** The mean of each part's score (`grader_<name>` metrics), for a `multi` grader's parts. */
  graders: Record<string, number>;
  /** The checkpoint the step trained into; the same as `step` when nothing was trained. */
  checkpoint: number;
  /** The training job (null when every group scored alike). */
  jobId: string | null;
  /** Groups whose answers all scored alike, left out of training. */
  noSignalGroups: number;
}

/** What {@link runRft} returns. */
export interface RftResult {
  /** Each training step, in order. */
  steps: RftStep[];
  /** The validation score on the first checkpoint (absent with `validation: false`). */
  before?: { step: number; score: number };
  /** The validation score on the last checkpoint. */
  after?: { step: number; score: number };
  /** The report written, when `reportPath` asked for one. */
  reportPath?: string;
}

const CALL = "runRft(options)";

/**
 * Runs an OpenAI-style reinforcement fine-tuning job on the Training Service
 * (or its emulator): each dataset item (its `messages` the prompt, the whole
 * item the grader's `item`) is answered `groupSize` times on the model's
 * latest checkpoint, graded with `graderReward`, and the groups are trained
 * with `model.train`. Everything is checked before the first request: a bad
 * option, grader or dataset line throws `InvalidArgumentError` naming it.
 *
 * @example
 * const grader = { type: "string_check", name: "label", input: "{{ sample.output_text }}", reference: "{{ item.label }}", operation: "eq" };
 * const result = await runRft({ model, dataset: "tickets.jsonl", grader, steps: 6, groupSize: 8, out: process.stdout });
 * console.log(result.before?.score, "->", result.after?.score);
 */
export async function runRft(options: RftOptions): Promise<RftResult> {
  const settings = checkRftOptions(options, CALL);
  const reward = graderReward(options.grader, options.graderOptions);
  const scenarios = await readOpenAiScenarios(options.dataset);
  const validation =
    options.validation === false
      ? undefined
      : options.validation === undefined
        ? scenarios
        : await readOpenAiScenarios(options.validation);
  const run = new RftRun(options.model, reward, settings, options);
  return run.run(scenarios, validation);
}

class RftRun {
  private readonly recorder = new Recorder();
  private readonly logged: ReportStep[] = [];
  private readonly training: ReportTraining[] = [];

  constructor(
    private readonly model: TrainableModel,
    private readonly reward: GraderReward,
    private readonly settings: RftSettings,
    private readonly options: RftOptions,
  ) {}

  private print(line: string): void {
    this.options.out?.write(`${line}\n`);
  }

  async run(scenarios: OpenAiScenario[], validation?: OpenAiScenario[]): Promise<RftResult> {
    const { model, settings } = this;
    this.print(
      `rft: ${scenarios.length} item(s), ${settings.steps} step(s) of ${Math.min(settings.itemsPerStep ?? scenarios.length, scenarios.length)} group(s) x ${settings.groupSize} answers, on ${model.project}/${model.name}`,
    );
    const result: RftResult = { steps: [] };
    if (validation) result.before = await this.evaluate(validation);
    const order = seededOrder(scenarios.length, settings.seed);
    const perStep = settings.itemsPerStep ?? scenarios.length;
    for (let i = 0; i < settings.steps; i++) {
      const picked = Array.from(
        { length: Math.min(perStep, scenarios.length) },
        (_, k) => scenarios[order[(i * perStep + k) % order.length] as number] as OpenAiScenario,
      );
      result.steps.push(await this.trainStep(i, picked));
    }
    if (validation) {
      result.after = await this.evaluate(validation);
      this.print(
        `validation: grader ${result.before?.score.toFixed(3)} on checkpoint ${result.before?.step} -> ${result.after.score.toFixed(3)} on checkpoint ${result.after.step}`,
      );
    }
    if (settings.reportPath !== false) result.reportPath = await this.writeReport();
    return result;
  }

  private async trainStep(index: number, picked: OpenAiScenario[]): Promise<RftStep> {
    const { model, settings } = this;
    const step = await model.getStep();
    const openai = model.openai({ recorder: this.recorder });
    const groups = await gatherTrajectoryGroups(
      picked.map((s, g) =>
        TrajectoryGroup.from(
          Array.from({ length: settings.groupSize }, (_, k) => () => {
            const seed = settings.seed * 1_000_000 + index * 10_000 + g * 100 + k;
            return answerScenario(openai, s, this.rolloutOptions(), seed);
          }),
        ),
      ),
      { concurrency: settings.concurrency, label: `step ${step}` },
    );
    const all = groups.flatMap((g) => g.trajectories);
    // The report's x-axis is the step's index: a step that trained nothing keeps the checkpoint.
    this.logged.push({ step: index, split: "train", groups: groups.map(reportGroup) });
    const trained = await model.train(
      groups,
      { learningRate: settings.learningRate },
      { pollIntervalMs: 10, logger: this.options.logger ?? { info: (m) => this.print(m) } },
    );
    if (trained.jobId !== null)
      this.training.push({
        step: index,
        job: { id: trained.jobId, status: "COMPLETED" },
        metrics: trained.metrics,
      });
    const out: RftStep = {
      index: index + 1,
      step,
      score: meanReward(all),
      graders: graderMeans(all),
      checkpoint: trained.step,
      jobId: trained.jobId,
      noSignalGroups: trained.noSignalGroups ?? 0,
    };
    const own = `grader_${(this.options.grader as { name?: unknown }).name}`;
    this.print(`step ${index + 1}/${settings.steps} ${describeStep(out, groups.length, own)}`);
    return out;
  }

  private async evaluate(scenarios: OpenAiScenario[]): Promise<{ step: number; score: number }> {
    const step = await this.model.getStep();
    const openai = this.model.openai({ recorder: this.recorder, step });
    // The same seeds on every checkpoint, so before and after answer alike where nothing was learnt.
    const groups = await gatherTrajectoryGroups(
      scenarios.map((s, g) =>
        TrajectoryGroup.from(
          Array.from(
            { length: this.settings.validationSamples },
            (_, k) => () =>
              answerScenario(openai, s, this.rolloutOptions(), 999_000_000 + g * 100 + k),
          ),
        ),
      ),
      { concurrency: this.settings.concurrency, label: `validation on checkpoint ${step}` },
    );
    const all = groups.flatMap((g) => g.trajectories);
    for (const t of all) t.metadata.checkpoint_step = step;
    this.logged.push({ step, split: "val", groups: groups.map(reportGroup) });
    const score = meanReward(all);
    this.print(
      `validation on checkpoint ${step}: grader ${score.toFixed(3)} (${all.length} answers)`,
    );
    return { step, score };
  }

  private rolloutOptions() {
    return {
      recorder: this.recorder,
      reward: this.reward,
      requestOptions: this.settings.requestOptions,
    };
  }

  private async writeReport(): Promise<string> {
    const { mkdir, writeFile } = await import("node:fs/promises");
    const path = await import("node:path");
    const file = path.resolve(this.settings.reportPath as string);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(
      file,
      renderReport({
        title: "Reinforcement fine-tuning with an OpenAI grader",
        subtitle: `${this.model.project}/${this.model.name}`,
        steps: this.logged,
        training: this.training,
      }),
    );
    this.print(`report written to ${file}`);
    return file;
  }
}

const reportGroup = (g: TrajectoryGroup) => g.toJSON() as unknown as ReportStep["groups"][number];

function meanReward(all: Trajectory[]): number {
  return all.length ? all.reduce((a, t) => a + t.reward, 0) / all.length : Number.NaN;
}

function graderMeans(all: Trajectory[]): Record<string, number> {
  const sums: Record<string, [number, number]> = {};
  for (const t of all)
    for (const [key, value] of Object.entries(t.metrics)) {
      if (!key.startsWith("grader_") || typeof value !== "number") continue;
      const [sum, n] = sums[key] ?? [0, 0];
      sums[key] = [sum + value, n + 1];
    }
  return Object.fromEntries(Object.entries(sums).map(([k, [sum, n]]) => [k, sum / n]));
}

// The parts of a multi grader beside its score (the grader's own metric is the score itself).
function describeStep(s: RftStep, groups: number, own: string): string {
  const parts = Object.entries(s.graders)
    .filter(([k]) => !k.endsWith("_pass") && k !== own)
    .map(([k, v]) => `${k.slice("grader_".length)} ${v.toFixed(3)}`);
  const detail = parts.length > 0 ? ` (${parts.join(", ")})` : "";
  const trained =
    s.jobId === null
      ? "every group scored alike: nothing trained"
      : `-> checkpoint ${s.checkpoint}${s.noSignalGroups ? ` (${s.noSignalGroups} of ${groups} group(s) scored alike, left out)` : ""}`;
  return `(checkpoint ${s.step}): grader ${s.score.toFixed(3)}${detail} ${trained}`;
}

// A fixed shuffle (mulberry32), so a seed names one order of the items.
function seededOrder(n: number, seed: number): number[] {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}
