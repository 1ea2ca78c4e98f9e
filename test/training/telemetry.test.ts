import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { TrainableModel, TrainingClient, TrajectoryShipper } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { trainableGroup } from "../helpers/trainable.js";

const exporter = new InMemorySpanExporter();
let emu: Emulator;
beforeAll(async () => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
});
afterAll(async () => {
  trace.disable();
  await emu.close();
});

const spread = (key: string) => ({
  trajectories: [
    {
      messages_and_choices: [
        { role: "user" as const, content: "say red" },
        { role: "assistant" as const, content: "red" },
      ],
      reward: 1,
    },
    {
      messages_and_choices: [
        { role: "user" as const, content: "say red" },
        { role: "assistant" as const, content: "dog" },
      ],
      reward: 0,
    },
  ],
  metadata: { key },
});

it("traces a training job with one span event per gradient step, and each shipped group", async () => {
  const client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "otel",
    baseModel: "toy",
  });
  const result = await model.train(
    [spread("a"), spread("b")],
    { allowTrainingWithoutLogprobs: true },
    { pollIntervalMs: 10 },
  );
  const shipper = new TrajectoryShipper({ model, flushOnExit: false });
  await shipper.add(spread("c"));
  await shipper.close();

  const spans = exporter.getFinishedSpans();
  const train = spans.find((s) => s.name === "trajectory_recorder.train")!;
  expect(train.attributes["trajectory_recorder.job_id"]).toBe(result.jobId);
  const steps = train.events.filter((e) => e.name === "gradient_step");
  expect(steps).toHaveLength(result.metrics["data/step_num_gradient_steps"]!);
  expect(steps[0]!.attributes?.["trajectory_recorder.gradient_step"]).toBe(1);
  expect(typeof steps[0]!.attributes?.["trajectory_recorder.metric.loss"]).toBe("number");
  const ship = spans.find((s) => s.name === "trajectory_recorder.ship")!;
  expect(ship.attributes).toMatchObject({
    "trajectory_recorder.split": "train",
    "trajectory_recorder.attempts": 1,
  });
  expect(ship.status.code).toBe(1);
});

it("marks the span of a failed job as an error", async () => {
  exporter.reset();
  const client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "otel-fail",
    baseModel: "toy",
  });
  await expect(
    model.train([trainableGroup(1, 1)], {}, { pollIntervalMs: 10, noSignal: "send" }),
  ).rejects.toThrow();
  const train = exporter.getFinishedSpans().find((s) => s.name === "trajectory_recorder.train")!;
  expect(train.status.code).toBe(2);
  expect(train.status.message).toMatch(/rewards that are all equal/);
  expect(train.events.some((e) => e.name === "exception")).toBe(true);
});
