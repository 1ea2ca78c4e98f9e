// Every recorded trajectory says which checkpoint sampled its turns, as ART's
// `initial_policy_version` (its first policy turn) and `final_policy_version`
// (its last), in training steps; the versions travel to the service as ART
// sends them.
import {
  Recorder,
  TrainableModel,
  TrainingClient,
  type Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type FaultProxy, startFaultProxy } from "../e2e/fault-proxy.js";

let emu: Emulator;
let proxy: FaultProxy;
beforeEach(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  proxy = await startFaultProxy(emu.url, () => undefined);
});
afterEach(async () => {
  await proxy.close();
  await emu.close();
});

const register = (name: string) =>
  TrainableModel.register(new TrainingClient({ apiKey: "k", baseURL: proxy.url, maxRetries: 0 }), {
    project: "p",
    name,
    baseModel: "toy",
  });
const quiet = { info: () => {} };
const versions = (t: Trajectory) => [t.initial_policy_version, t.final_policy_version];

/** A group of `n` one-call rollouts whose rewards differ, so that `train` makes a job of it. */
async function rollouts(recorder: Recorder, openai: ReturnType<TrainableModel["openai"]>, n = 2) {
  return new TrajectoryGroup(
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        recorder.rollout(async (t) => {
          await openai.chat.completions.create({
            model: "",
            messages: [{ role: "user", content: `say ${i}` }],
          });
          t.reward = i;
        }),
      ),
    ),
  );
}

it("a rollout before model.train records the old step, one after it the new step", async () => {
  const model = await register("before-after");
  const recorder = new Recorder();
  const openai = model.openai({ recorder });
  await model.getStep();
  const before = await rollouts(recorder, openai);
  expect(before.trajectories.map(versions)).toEqual([
    [0, 0],
    [0, 0],
  ]);
  const { step } = await model.train([before], {}, { pollIntervalMs: 10, logger: quiet });
  expect(step).toBe(1);
  const after = await rollouts(recorder, openai);
  expect(after.trajectories.map(versions)).toEqual([
    [1, 1],
    [1, 1],
  ]);
});

it("a rollout whose turns straddle a new checkpoint records initial < final", async () => {
  const model = await register("straddle");
  const recorder = new Recorder();
  const openai = model.openai({ recorder });
  await model.getStep();
  const first = await rollouts(recorder, openai);
  const t = await recorder.rollout(async () => {
    const messages = [{ role: "user" as const, content: "first turn" }];
    const a = await openai.chat.completions.create({ model: "", messages });
    // The checkpoint changes between two turns of the same rollout.
    await model.train([first], {}, { pollIntervalMs: 10, logger: quiet });
    await openai.chat.completions.create({
      model: "",
      messages: [...messages, a.choices[0]?.message as never, { role: "user", content: "again" }],
    });
  });
  expect(versions(t)).toEqual([0, 1]);
});

it("a pinned step is the version; the latest name is the newest step the model has seen", async () => {
  const model = await register("pinned");
  await model.train(
    [await rollouts(new Recorder(), model.openai({ recorder: new Recorder() }))],
    {},
    { pollIntervalMs: 10, logger: quiet },
  );
  const recorder = new Recorder();
  const pinned = model.openai({ recorder, step: 0 });
  const t = await recorder.rollout(async () => {
    await pinned.chat.completions.create({
      model: "",
      messages: [{ role: "user", content: "hi" }],
    });
  });
  expect(versions(t)).toEqual([0, 0]);
  expect(recorder.policyVersion(model.inferenceName(7))).toBe(7);
  // The latest name: the newest step this model object has seen (train read it).
  expect(model.policyVersion(model.inferenceName())).toBe(1);
  expect(model.policyVersion("wandb-artifact:///local/p/other:step3")).toBeUndefined();
});

it("the caller's own versions win; a name no source knows leaves them unset", async () => {
  const model = await register("own");
  const recorder = new Recorder({ policyVersion: (m) => (m.endsWith("/own") ? 9 : undefined) });
  const openai = model.openai({ recorder });
  // The model has seen no step yet: the recorder's own source answers.
  const t = await recorder.rollout(async (t) => {
    await openai.chat.completions.create({ model: "", messages: [{ role: "user", content: "a" }] });
    t.final_policy_version = 42;
    await openai.chat.completions.create({ model: "", messages: [{ role: "user", content: "b" }] });
  });
  expect(versions(t)).toEqual([9, 42]);
  const unknown = new Recorder();
  const plain = model.openai({ recorder: unknown });
  const u = await unknown.rollout(async () => {
    await plain.chat.completions.create({ model: "", messages: [{ role: "user", content: "a" }] });
  });
  expect(versions(u)).toEqual([null, null]);
  expect(() => new Recorder({ policyVersion: 3 as never })).toThrow(/options\.policyVersion/);
});

it("a session through the recording endpoint records the versions too", async () => {
  const model = await register("endpoint");
  await model.getStep();
  const recorder = new Recorder({ upstream: model });
  try {
    const t = await recorder.rollout(async (t) => {
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${t.apiKey}` },
        body: JSON.stringify({ model: "", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(200);
    });
    expect(versions(t)).toEqual([0, 0]);
  } finally {
    await recorder.close();
  }
});

it("the versions are sent to the service as ART sends them", async () => {
  const model = await register("wire");
  const recorder = new Recorder();
  const openai = model.openai({ recorder });
  await model.getStep();
  const group = await rollouts(recorder, openai);
  await model.log([group], { split: "train" });
  expect(
    proxy.loggedGroups[0]?.trajectories.map((t) => {
      const w = t as unknown as Record<string, unknown>;
      return [w.initial_policy_version, w.final_policy_version];
    }),
  ).toEqual([
    [0, 0],
    [0, 0],
  ]);
});
