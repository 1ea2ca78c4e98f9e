// The demo: train a small agent end to end through the public API.
//
//   npm run demo                      # against the emulator, started in-process
//   WANDB_API_KEY=... TRAINING_SERVICE_BASE_URL=https://api.training.wandb.ai/v1 \
//     npm run demo -- --base-model OpenPipe/Qwen3-14B-Instruct   # against the real service
//
// The task: the user asks the agent to say a word; the reward is 1 when the
// answer contains it. Each step gathers groups of rollouts on the latest
// checkpoint, scores them, and trains on them; the next rollouts use the new one.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  applyReward,
  gatherTrajectoryGroups,
  Recorder,
  TrainableModel,
  TrainingClient,
  type Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { renderSvgChart, renderTerminalChart } from "./chart.js";

const TARGETS = ["red", "cat", "apple", "two"];

/** Options of {@link main}. */
export interface DemoOptions {
  steps?: number;
  /** Rollouts per group. */
  groupSize?: number;
  baseModel?: string;
  /** Where the SVG goes. */
  outDir?: string;
  log?: (line: string) => void;
}

/** Runs the demo; returns the mean reward before each training step and after the last. */
export async function main(
  options: DemoOptions = {},
): Promise<{ rewards: number[]; svgPath: string }> {
  const log = options.log ?? ((line: string) => console.log(line));
  const steps = options.steps ?? 6;
  const groupSize = options.groupSize ?? 12;
  const real = Boolean(process.env.WANDB_API_KEY && process.env.TRAINING_SERVICE_BASE_URL);
  const emulator = real ? undefined : await startEmulator({ port: 0, apiKeys: ["demo-key"] });
  try {
    const client = emulator
      ? new TrainingClient({ apiKey: "demo-key", baseURL: emulator.url })
      : new TrainingClient();
    if (real && !options.baseModel)
      throw new Error("Against the real service, pass --base-model <model>.");
    const model = await TrainableModel.register(client, {
      project: "trajectory-recorder-demo",
      name: real ? "say-the-word" : `say-the-word-${Date.now()}`,
      baseModel: options.baseModel ?? "emulator/toy-bigram",
    });
    log(
      `${emulator ? `emulator at ${emulator.url}` : client.baseURL}: model ${model.name} (${model.id})`,
    );
    // A wrapped openai client on the model's latest checkpoint: every call made
    // inside recorder.rollout() lands on that rollout's trajectory, with the
    // logprobs and token ids the trainer needs (the recorder asks for them).
    const recorder = new Recorder();
    const openai = model.openai({ recorder });

    // One rollout: an ordinary chat completion call, as an agent would make it.
    // Seeds make a run repeatable; each rollout of a group still gets its own.
    const rollout = (target: string, seed: number): Promise<Trajectory> =>
      recorder.rollout(
        async () => {
          await openai.chat.completions.create({
            model: "",
            messages: [{ role: "user", content: `please say ${target}` }],
            max_tokens: 4,
            seed,
          });
        },
        { metadata: { target } },
      );
    const said = (t: Trajectory) => {
      const target = String(t.metadata.target);
      return t.messages().at(-1)?.content?.toString().split(/\s+/).includes(target) ? 1 : 0;
    };
    const gather = async (step: number) => {
      const groups = await gatherTrajectoryGroups(
        TARGETS.map((target, t) =>
          TrajectoryGroup.from(
            Array.from(
              { length: groupSize },
              (_, i) => () => rollout(target, step * 10_000 + t * 100 + i),
            ),
          ),
        ),
        { concurrency: 16 },
      );
      for (const group of groups) await applyReward(group, said);
      const all = groups.flatMap((g) => g.trajectories);
      return { groups, mean: all.reduce((s, t) => s + t.reward, 0) / all.length };
    };

    const rewards: number[] = [];
    for (let step = 0; step < steps; step++) {
      const { groups, mean } = await gather(step);
      rewards.push(mean);
      const result = await model.train(
        groups,
        { learningRate: 5e-5 },
        { pollIntervalMs: emulator ? 20 : 1000 },
      );
      log(
        `step ${step}: reward ${mean.toFixed(3)} -> trained checkpoint ${result.step} (loss ${result.metrics.loss?.toFixed(4) ?? "n/a"})`,
      );
    }
    const { mean } = await gather(steps);
    rewards.push(mean);
    log(`after training: reward ${mean.toFixed(3)}`);
    log(`\nmean reward per step\n${renderTerminalChart(rewards)}`);

    const outDir = options.outDir ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "out");
    const svgPath = path.join(outDir, "reward.svg");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(outDir, { recursive: true });
    await writeFile(svgPath, renderSvgChart(rewards));
    log(`chart written to ${path.relative(process.cwd(), svgPath)}`);
    return { rewards, svgPath };
  } finally {
    await emulator?.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { steps: { type: "string" }, "base-model": { type: "string" } },
  });
  const started = Date.now();
  main({ steps: values.steps ? Number(values.steps) : undefined, baseModel: values["base-model"] })
    .then(() => console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`))
    .catch((error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    });
}
