// A BullMQ worker hands its rollout's endpoint (t.baseURL, t.apiKey) to a
// Python agent in a subprocess: the coordinator trains on what it recorded.
import { Recorder } from "trajectory-recorder";
import { RolloutProducer, RolloutWorker, TrainingCoordinator } from "trajectory-recorder/bullmq";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runPythonAgent } from "../proxy/helpers.js";
import { type Harness, memoryLogger, startHarness } from "./harness.js";

let h: Harness;
const closers: (() => Promise<void>)[] = [];
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await h.close();
});

it("records a subprocess agent through the worker's rollout endpoint, and trains on it", async () => {
  const recorder = new Recorder({ upstream: h.model });
  closers.push(() => recorder.close());
  const fast = { lockDurationMs: 30_000, stalledIntervalMs: 15_000 };
  const worker = await RolloutWorker.start<{ fruit: string }>({
    connection: h.redis.connection,
    recorder,
    logger: memoryLogger(),
    concurrency: 3,
    ...fast,
    rollout: async ({ payload, trajectory, index }) => {
      const { answer } = await runPythonAgent(
        {
          question: `how many ${payload.fruit} are left`,
          stock: { [payload.fruit]: "two" },
          stream: index % 2 === 1,
          max_tokens: 3,
          model: "",
        },
        { OPENAI_BASE_URL: trajectory.baseURL, OPENAI_API_KEY: trajectory.apiKey },
      );
      // The index keeps a group's rewards apart (the service refuses all-equal groups).
      trajectory.reward = (answer?.includes("two") ? 1 : 0) + index / 10;
    },
  });
  closers.push(() => worker.close());
  const producer = new RolloutProducer({ connection: h.redis.connection });
  closers.push(() => producer.close());
  await producer.enqueue(
    ["apple", "grape"].map((fruit) => ({ id: `g-${fruit}`, payload: { fruit }, rollouts: 3 })),
  );
  let resolve!: () => void;
  const trained = new Promise<void>((r) => (resolve = r));
  const coordinator = await TrainingCoordinator.start({
    connection: h.redis.connection,
    model: h.model,
    trainEvery: 2,
    pollIntervalMs: 100,
    logger: memoryLogger(),
    ...fast,
    onTrained: () => resolve(),
  });
  closers.push(() => coordinator.close());
  await trained;
  const sent = h.tap.jobs.flat();
  expect(sent).toHaveLength(2);
  for (const g of sent)
    for (const t of g.trajectories) {
      const choices = (
        t as unknown as { messages_and_choices: object[] }
      ).messages_and_choices.filter((m) => "finish_reason" in m);
      expect(choices.length).toBeGreaterThan(0);
      expect((choices[0] as any).logprobs.content.length).toBeGreaterThan(0);
      expect(JSON.stringify(t)).not.toMatch(/trr-[A-Za-z0-9_-]{20}/);
    }
}, 120_000);
