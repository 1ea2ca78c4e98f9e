// A support-ticket router moved off OpenAI fine-tuning, end to end, offline:
//
//   npx tsx examples/openai-migration/main.ts [--steps 8]
//
// tickets-train.jsonl and tickets-valid.jsonl are an OpenAI reinforcement
// fine-tuning dataset (each item: the prompt's messages, the ticket's label
// and its queue), grader.json the string_check grader the job used. The
// script runs the same job with runRft on the embedded emulator: the grader's
// score on the training items before, per step, and after, then the held-out
// items scored on the first and last checkpoints with evaluateCheckpoints.
//
// The emulator's toy policy speaks 24 English words (src/emulator/MODEL.md),
// so the queues are named by colour (red billing, blue bug, green account,
// yellow other); against a real model, grade `{{ item.label }}` directly.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { evaluateCheckpoints, Recorder, TrainableModel, TrainingClient } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import {
  graderReward,
  readOpenAiScenarios,
  runRft,
  scenarioRollout,
} from "trajectory-recorder/openai-ft";

const here = import.meta.dirname;
const file = (name: string) => path.join(here, name);
// Answers are one queue colour: two tokens leave room for the word and the end.
const requestOptions = { max_tokens: 2 };

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { steps: { type: "string", default: "8" }, seed: { type: "string", default: "1" } },
  });
  const grader = JSON.parse(readFileSync(file("grader.json"), "utf8"));
  const heldOut = await readOpenAiScenarios(file("tickets-valid.jsonl"));

  const emulator = await startEmulator({ port: 0, apiKeys: { "example-key": "me" } });
  try {
    const client = new TrainingClient({ apiKey: "example-key", baseURL: emulator.url });
    const model = await TrainableModel.register(client, {
      project: "support",
      name: "ticket-router",
      baseModel: "emulator/toy",
    });
    const result = await runRft({
      model,
      dataset: file("tickets-train.jsonl"),
      grader,
      steps: Number(values.steps),
      groupSize: 8,
      learningRate: 2e-5,
      seed: Number(values.seed),
      requestOptions,
      out: process.stdout,
      // Each step's line already counts the groups left out for scoring alike.
      logger: { info: () => {} },
    });

    // The held-out tickets, never trained on, on the first and the last checkpoint.
    const recorder = new Recorder();
    const last = result.after?.step ?? (await model.getStep());
    const evaluated = await evaluateCheckpoints(model, {
      scenarios: heldOut,
      steps: [0, last],
      recorder,
      rolloutsPerScenario: 4,
      rollout: scenarioRollout({
        recorder,
        reward: graderReward(grader),
        requestOptions,
        seed: (s, attempt) => s.line * 100 + attempt,
      }),
    });
    const [first, final] = evaluated.map((e) => e.meanReward.toFixed(3));
    console.log(
      `\ntraining items (${result.steps.length} steps): grader ${result.before?.score.toFixed(3)} before -> ${result.after?.score.toFixed(3)} after`,
    );
    console.log(
      `held-out items (${heldOut.length}): grader ${first} on checkpoint 0 -> ${final} on checkpoint ${last}`,
    );
  } finally {
    await emulator.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
