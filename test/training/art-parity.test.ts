// Training results and options as ART has them: its metric names
// (OpenPipe/ART serverless backend, `_canonicalize_upstream_metrics`), its
// SFT `metric_logging`, and `learning_rate=0`.
import {
  InvalidTrainingOptionsError,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryCheckError,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  ART_GRADIENT_STEPS_KEY,
  artMetricName,
  toExperimentalConfig,
  toSftConfig,
} from "../../src/training/index.js";
import { trainableGroup } from "../helpers/trainable.js";

let emu: Emulator;
let client: TrainingClient;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
});
afterAll(async () => {
  await emu.close();
});

it("renames each raw gradient_step key as ART's serverless backend does", () => {
  const table: [string, string | undefined][] = [
    ["loss", "loss/train"],
    ["policy_loss", "loss/train"],
    ["entropy", "loss/entropy"],
    ["kl_div", "loss/kl_div"],
    ["kl_policy_ref", "loss/kl_policy_ref"],
    ["grad_norm", "loss/grad_norm"],
    ["learning_rate", "loss/learning_rate"],
    ["num_groups_submitted", "data/step_num_groups_submitted"],
    ["num_groups_trainable", "data/step_num_groups_trainable"],
    ["num_trajectories", "data/step_num_trajectories"],
    ["num_trainable_tokens", "data/step_trainer_tokens"],
    ["train_tokens", "data/step_trainer_tokens"],
    ["num_datums", "data/step_num_datums"],
    ["reward", "reward"],
    ["reward_std_dev", "reward_std_dev"],
    ["exception_rate", "exception_rate"],
    ["tokens_per_second", undefined],
    ["group_metric_accuracy", "group_accuracy"],
    ["time/step_s", "time/step_s"],
    ["clipped_tokens", "clipped_tokens"],
    ["constructor", "constructor"],
  ];
  for (const [raw, art] of table) expect(artMetricName(raw), raw).toBe(art);
  expect(ART_GRADIENT_STEPS_KEY).toBe("data/step_num_gradient_steps");
});

it("reports train() results under ART's names, with the raw keys kept in rawMetrics", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "names",
    baseModel: "t",
  });
  const result = await model.train([trainableGroup(0, 1)], {}, { pollIntervalMs: 10 });
  for (const key of ["loss/train", "loss/grad_norm", "loss/learning_rate", "loss/entropy"])
    expect(result.metrics, key).toHaveProperty([key]);
  expect(result.metrics).toHaveProperty(["data/step_trainer_tokens"]);
  expect(result.metrics).toHaveProperty(["data/step_num_trajectories"]);
  expect(result.metrics["loss/train"]).toBe(result.rawMetrics.loss);
  expect(result.metrics["loss/grad_norm"]).toBe(result.rawMetrics.grad_norm);
  expect(result.metrics["data/step_num_gradient_steps"]).toBe(result.rawMetrics.num_gradient_steps);
  expect(result.metrics).not.toHaveProperty("loss");
  expect(result.metrics).not.toHaveProperty("num_gradient_steps");
});

it("reports ART's 15 train-result keys: the trainer's means, the batch summary and the call's time", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "fifteen",
    baseModel: "t",
  });
  const flat = trainableGroup(1, 1);
  const failed = trainableGroup(0, 1);
  (failed as any).exceptions = [{ type: "TimeoutError", message: "slow tool", traceback: "" }];
  const before = performance.now();
  const result = await model.train(
    [trainableGroup(0, 1), failed, flat],
    {},
    { pollIntervalMs: 10, noSignal: "send" },
  );
  const seconds = (performance.now() - before) / 1000;
  expect(Object.keys(result.metrics).sort()).toEqual(
    [
      "data/step_num_gradient_steps",
      "data/step_num_groups_submitted",
      "data/step_num_groups_trainable",
      "data/step_num_scenarios",
      "data/step_num_trajectories",
      "data/step_trainer_tokens",
      "loss/entropy",
      "loss/grad_norm",
      "loss/learning_rate",
      "loss/train",
      "reward",
      "reward_std_dev",
      "time/step_backend_train_s",
      // The emulator's trainer reports these two too; ART passes unknown keys through.
      "clipped_tokens",
      "mean_importance_ratio",
    ].sort(),
  );
  expect(result.metrics).toMatchObject({
    "data/step_num_scenarios": 3,
    "data/step_num_groups_submitted": 3,
    "data/step_num_groups_trainable": 2,
  });
  // The service counted the trajectories it trained on: its count wins, as in ART.
  expect(result.metrics["data/step_num_trajectories"]).toBe(result.rawMetrics.num_trajectories);
  const time = result.metrics["time/step_backend_train_s"]!;
  expect(time).toBeGreaterThan(0);
  expect(time).toBeLessThanOrEqual(seconds);
});

it("reports trainSft() results under ART's names, with data/step_num_trajectories on every step", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "sftnames",
    baseModel: "t",
  });
  const examples = ["red", "cat", "two"].map(
    (w) =>
      new Trajectory({
        messages_and_choices: [
          { role: "user", content: `say ${w}` },
          { role: "assistant", content: w },
        ],
      }),
  );
  const result = await model.trainSft(examples, { batchSize: 1 }, { pollIntervalMs: 10 });
  expect(result.metrics).toMatchObject({
    "data/step_num_trajectories": 3,
    "data/step_num_gradient_steps": 3,
    "loss/train": result.rawMetrics.loss,
    "loss/learning_rate": result.rawMetrics.learning_rate,
    "data/step_trainer_tokens": result.rawMetrics.num_trainable_tokens,
  });
});

it("sends SFT metric_logging as ART does: only when enabled", () => {
  expect(toSftConfig({ metricLogging: { enabled: true, targetTrainingStep: 7 } })).toEqual({
    learning_rate: 5e-5,
    metric_logging: { enabled: true, target_training_step: 7 },
  });
  expect(toSftConfig({ metricLogging: { enabled: false, targetTrainingStep: 7 } })).toEqual({
    learning_rate: 5e-5,
  });
  expect(() => toSftConfig({ metricLogging: { enabled: "yes" } as never })).toThrow(
    InvalidTrainingOptionsError,
  );
  expect(() => toSftConfig({ metricLogging: { targetTrainingStep: 1.5 } })).toThrow(
    /metricLogging\.targetTrainingStep/,
  );
});

it("accepts learning_rate 0 as ART does (a step that moves nothing), and still refuses negative or non-finite rates", async () => {
  expect(toExperimentalConfig({ learningRate: 0 }).learning_rate).toBe(0);
  expect(toSftConfig({ learningRate: 0 }).learning_rate).toBe(0);
  expect(toSftConfig({ learningRate: [1e-4, 0] }).learning_rate).toEqual([1e-4, 0]);
  expect(() => toExperimentalConfig({ learningRate: -1e-5 })).toThrow(/learningRate/);
  expect(() => toSftConfig({ learningRate: Number.NaN })).toThrow(/learningRate/);
  // The emulator trains a step at rate 0 like any other, and the step is counted.
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "lr0",
    baseModel: "t",
  });
  const result = await model.train(
    [trainableGroup(0, 1)],
    { learningRate: 0 },
    { pollIntervalMs: 10 },
  );
  expect(result.step).toBe(1);
  expect(result.metrics["loss/learning_rate"]).toBe(0);
});

it("refuses nested metadata before anything is sent, by default, naming its path (ART's Trajectory refuses it too)", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "meta",
    baseModel: "t",
  });
  const group = trainableGroup(0, 1);
  (group.trajectories[1] as { metadata?: unknown }).metadata = {
    scenario: "s1",
    info: { nested: true },
  };
  for (const send of [
    () => model.train([group], {}, { pollIntervalMs: 10 }),
    () => model.log([group], { split: "val" }),
  ]) {
    const error = await send().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrajectoryCheckError);
    expect((error as TrajectoryCheckError).problems.map((p) => p.path)).toEqual([
      "groups[0].trajectories[1].metadata.info",
    ]);
    expect((error as Error).message).toContain("refused before sending");
  }
  expect(await model.getStep()).toBe(0);
  // Chosen drop mode leaves the trajectory out and trains on the rest.
  const flat = trainableGroup(0, 1, 1);
  (flat.trajectories[2] as { metadata?: unknown }).metadata = { info: [1, 2] };
  const warnings: string[] = [];
  const result = await model.train(
    [flat],
    {},
    {
      pollIntervalMs: 10,
      validate: { mode: "drop", logger: { warn: (m: string) => warnings.push(m) } },
    },
  );
  expect(result.step).toBe(1);
  expect(warnings.join("\n")).toContain("metadata.info");
});

it("summarises a batch as ART does where the service is silent: failed rollouts count as trajectories", async () => {
  const { withSummary } = await import("../../src/training/batch-summary.js");
  const { prepareGroup } = await import("../../src/trajectory/index.js");
  const failed = trainableGroup(0, 1);
  (failed as any).exceptions = [{ type: "TimeoutError", message: "slow", traceback: "" }];
  const prepared = await prepareGroup(trainableGroup(1, 1, 1), "train");
  const out = withSummary({ "loss/train": 0.5 }, [failed, prepared], performance.now() - 1500);
  expect(out).toMatchObject({
    "loss/train": 0.5,
    "data/step_num_scenarios": 2,
    "data/step_num_trajectories": 6,
    "data/step_num_groups_submitted": 2,
    "data/step_num_groups_trainable": 1,
  });
  expect(out["time/step_backend_train_s"]).toBeGreaterThanOrEqual(1.5);
  // What the service reported is kept.
  const reported = withSummary(
    { "data/step_num_groups_trainable": 9, "time/step_backend_train_s": 2 },
    [failed],
    performance.now(),
  );
  expect(reported["data/step_num_groups_trainable"]).toBe(9);
  expect(reported["time/step_backend_train_s"]).toBe(2);
});

it("trainSft refuses unknown options by name, and takes assistantTurns as ART's serverless backend does", async () => {
  expect(() => toSftConfig({ batch_size: 4 } as never)).toThrow(
    /unknown option batch_size: did you mean batchSize\? \(expected one of batchSize, learningRate, metricLogging, assistantTurns\)/,
  );
  expect(() => toSftConfig({ learningRate: 1e-5, epochs: 3 } as never)).toThrow(
    /unknown option epochs: \(expected one of batchSize, learningRate, metricLogging, assistantTurns\)/,
  );
  expect(() => toSftConfig({ metricLogging: { enabled: true, target: 2 } } as never)).toThrow(
    /unknown option metricLogging\.target: \(expected one of enabled, targetTrainingStep\)/,
  );
  // "all" is what the service does: accepted, and not sent (ART never sends it).
  expect(toSftConfig({ assistantTurns: "all" })).toEqual({ learning_rate: 5e-5 });
  expect(() => toSftConfig({ assistantTurns: "first" as never })).toThrow(
    /assistantTurns: expected "all" or "last", got "first"/,
  );
  // Refused before anything is uploaded or sent.
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "turns",
    baseModel: "t",
  });
  let uploads = 0;
  const uploader = {
    upload: async () => {
      uploads++;
      return "wandb-artifact:///x/y/z:v0";
    },
  };
  const example = new Trajectory({
    messages_and_choices: [
      { role: "user", content: "hi" },
      { role: "assistant", content: "red" },
    ],
  });
  const err = await model
    .trainSft([example], { assistantTurns: "last" }, { uploader })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidTrainingOptionsError);
  expect((err as Error).message).toMatch(/assistantTurns: "last" is not offered by the service/);
  const err2 = await model
    .trainSft([example], { learningrate: 1e-5 } as never, { uploader })
    .catch((e: unknown) => e);
  expect((err2 as Error).message).toMatch(
    /unknown option learningrate: did you mean learningRate\?/,
  );
  expect(uploads).toBe(0);
});
