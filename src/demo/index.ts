// The demo: a tool-using agent trained end to end on the embedded emulator.
// Each step gathers groups of agent rollouts on the latest checkpoint (the
// model calls the stall's tool, reads its answer, replies), scores each group
// as it finishes, trains on them, and moves on; at the end it writes the
// HTML report of the run.
import path from "node:path";
import { TrainingClient } from "../client/index.js";
import { Recorder } from "../recorder/index.js";
import { type ReportStep, type ReportTraining, renderReport } from "../report/index.js";
import { applyReward } from "../rewards/index.js";
import { TrainableModel } from "../training/index.js";
import { gatherTrajectoryGroups, type Trajectory, TrajectoryGroup } from "../trajectory/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { renderTerminalChart } from "./chart.js";
import {
  checkStock,
  FRUITS,
  question,
  type Scenario,
  scenario,
  scenarioMetadata,
  stockReward,
  TOOLS,
} from "./task.js";

export { renderTerminalChart } from "./chart.js";

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Training steps. Default 8. */
  steps?: number;
  /** Rollouts per group (one group per fruit). Default 16. */
  groupSize?: number;
  /** Where progress goes (the live bar draws only on a terminal). Default `process.stdout`. */
  out?: NodeJS.WritableStream;
  /** The HTML report to write; `false` for none. Default `./trajectory-report.html`. */
  reportPath?: string | false;
  /** Default 2e-5. */
  learningRate?: number;
  /** Base of the rollouts' seeds: the same seed gives the same run. Default 1. */
  seed?: number;
}

/** What {@link runDemo} returns. */
export interface DemoResult {
  /** Mean reward of each step's rollouts, then of the rollouts on the last checkpoint. */
  rewards: number[];
  /** The written report, when one was asked for. */
  reportPath: string | undefined;
  /** The emulator model the demo trained. */
  model: string;
}

/**
 * Runs the demo against an emulator it starts and stops itself, printing
 * progress to `out`, and returns the reward per step.
 *
 * @example
 * const { rewards } = await runDemo({ steps: 6, reportPath: "report.html" });
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const out = options.out ?? process.stdout;
  const print = (line: string) => out.write(`${line}\n`);
  const steps = options.steps ?? 8;
  const groupSize = options.groupSize ?? 16;
  const seed = options.seed ?? 1;
  if (!Number.isInteger(steps) || steps < 1)
    throw new InvalidArgumentError("runDemo", "steps", "a whole number of at least 1", steps);
  if (!Number.isInteger(groupSize) || groupSize < 2)
    throw new InvalidArgumentError(
      "runDemo",
      "groupSize",
      "a whole number of at least 2",
      groupSize,
    );
  // Library code never imports the emulator statically: it is loaded only here.
  const { startEmulator } = await import("../emulator/index.js");
  const emulator = await startEmulator({ port: 0, apiKeys: { "demo-key": "demo" } });
  try {
    const client = new TrainingClient({ apiKey: "demo-key", baseURL: emulator.url });
    const model = await TrainableModel.register(client, {
      project: "trajectory-recorder-demo",
      name: "fruit-stall",
      baseModel: "emulator/toy",
    });
    print(`emulator at ${emulator.url}: training ${model.project}/${model.name}`);
    print(
      `task: "how many <fruit> are left?"; the stock changes every rollout, only the tool check_stock knows it`,
    );
    const recorder = new Recorder();
    const openai = model.openai({ recorder });

    // One rollout: an ordinary agent loop. The model may call the tool; the
    // tool's answer goes back; the model's last message is its reply.
    const rollout = (s: Scenario, rolloutSeed: number): Promise<Trajectory> =>
      recorder.rollout(
        async (t) => {
          const messages: Parameters<typeof openai.chat.completions.create>[0]["messages"] = [
            {
              role: "system",
              content: "You keep a fruit stall. Check the stock before answering.",
            },
            { role: "user", content: question(s) },
          ];
          for (let turn = 0; turn < 3; turn++) {
            const r = await openai.chat.completions.create({
              model: "",
              messages,
              tools: TOOLS,
              max_tokens: 3,
              seed: rolloutSeed * 7 + turn,
            });
            const message = r.choices[0]?.message;
            if (!message) break;
            messages.push(message);
            const calls = message.tool_calls ?? [];
            // The report plots these per step: how the agent behaves, not only how it scores.
            t.metrics.tool_calls = (Number(t.metrics.tool_calls) || 0) + calls.length;
            if (calls.length === 0) {
              t.metrics.answer_words = (message.content ?? "").split(/\s+/).filter(Boolean).length;
              break;
            }
            for (const call of calls) {
              const args = call.type === "function" ? call.function.arguments : "{}";
              messages.push({ role: "tool", tool_call_id: call.id, content: checkStock(s, args) });
            }
          }
        },
        { metadata: scenarioMetadata(s) },
      );

    const logged: ReportStep[] = [];
    const training: ReportTraining[] = [];
    // A train step's rollouts draw fresh scenarios; the evaluation (`val`)
    // draws the same ones on every checkpoint it is run on, so the report's
    // Checkpoints view compares like with like.
    const VAL_SEEDS = 9_999;
    const gather = async (step: number, split: "train" | "val" = "train") => {
      const groups = await gatherTrajectoryGroups(
        FRUITS.map((fruit, f) =>
          TrajectoryGroup.from(
            Array.from({ length: groupSize }, (_, i) => {
              const k =
                seed * 1_000_000 + (split === "val" ? VAL_SEEDS : step) * 10_000 + f * 100 + i;
              return () => rollout(scenario(fruit, k), k);
            }),
          ),
        ),
        {
          concurrency: 16,
          // Scored as each group finishes, so the bar shows the live mean.
          afterEach: (group) => applyReward(group, stockReward),
          label: split === "val" ? `val on checkpoint ${step}` : `step ${step}`,
          progressStream: out as NodeJS.WritableStream & { isTTY?: boolean },
        },
      );
      const all = groups.flatMap((g) => g.trajectories);
      const mean = all.reduce((a, t) => a + t.reward, 0) / all.length;
      if (split === "val") {
        // Pinned to the checkpoint it evaluated, as evaluateCheckpoints does, and
        // logged to the service like any evaluation (metrics only, no training).
        for (const t of all) t.metadata.checkpoint_step = step;
        await model.log(groups, { split: "val" });
      }
      logged.push({
        step,
        split,
        groups: groups.map((g) => g.toJSON() as unknown as ReportStep["groups"][number]),
      });
      return { groups, mean };
    };

    const rewards: number[] = [];
    const { mean: before } = await gather(0, "val");
    print(`val on checkpoint 0: reward ${before.toFixed(3)}`);
    for (let step = 0; step < steps; step++) {
      const { groups, mean } = await gather(step);
      rewards.push(mean);
      const tools = groups
        .flatMap((g) => g.trajectories)
        .filter((t) => t.messages().some((m) => m.role === "tool")).length;
      // A group whose rollouts all scored alike teaches nothing: train
      // leaves it out, and creates no job when every group is like that.
      const result = await model.train(
        groups,
        { learningRate: options.learningRate ?? 2e-5 },
        { pollIntervalMs: 10, logger: { info: () => {} } },
      );
      if (result.skipped) {
        print(
          `step ${step}: reward ${mean.toFixed(3)}, every group scored alike: nothing to train`,
        );
        continue;
      }
      if (result.jobId !== null)
        training.push({
          step,
          job: { id: result.jobId, status: "COMPLETED" },
          // Under ART's names, as every report draws them.
          metrics: result.metrics,
        });
      print(
        `step ${step}: reward ${mean.toFixed(3)} (${tools}/${groups.length * groupSize} rollouts used the tool) -> checkpoint ${result.step}${result.noSignalGroups ? ` (${result.noSignalGroups} group(s) scored alike, left out)` : ""}`,
      );
    }
    const last = await model.getStep();
    const { mean } = await gather(last, "val");
    rewards.push(mean);
    print(`val on checkpoint ${last}: reward ${mean.toFixed(3)} (was ${before.toFixed(3)})`);
    print(`\nmean reward per step\n${renderTerminalChart(rewards)}`);

    let reportPath: string | undefined;
    if (options.reportPath !== false) {
      reportPath = path.resolve(options.reportPath ?? "trajectory-report.html");
      const { mkdir, writeFile } = await import("node:fs/promises");
      await mkdir(path.dirname(reportPath), { recursive: true });
      await writeFile(
        reportPath,
        renderReport({
          title: "Demo: the fruit-stall agent",
          subtitle: `${model.project}/${model.name} on the embedded emulator`,
          steps: logged,
          training,
        }),
      );
      print(`report written to ${reportPath}`);
    }
    return { rewards, reportPath, model: `${model.project}/${model.name}` };
  } finally {
    await emulator.close();
  }
}
