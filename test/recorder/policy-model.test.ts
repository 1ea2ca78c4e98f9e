// model.openai({ recorder }) marks the trained model as the policy: another
// model called in the same rollout (a judge, a teacher) is context only.
import OpenAI from "openai";
import { Recorder, TrainableModel, TrainingClient } from "trajectory-recorder";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { KEY, start } from "../emulator/helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(() => emu.close());

it("trains only on the model's own completions once model.openai({ recorder }) wrapped its client", async () => {
  const client = new TrainingClient({ apiKey: KEY, baseURL: emu.url, maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "pol",
    baseModel: "toy",
  });
  const recorder = new Recorder();
  const policy = model.openai({ recorder });
  const judge = recorder.wrap(new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 }));
  const t = await recorder.rollout(async () => {
    const messages = [{ role: "user" as const, content: "say red" }];
    // A fixed seed: an unseeded sample may end at once, with no token to train.
    const answer = await policy.chat.completions.create({
      model: "",
      messages,
      max_tokens: 3,
      seed: 7,
    });
    await judge.chat.completions.create({
      model: "emulator/tiny",
      messages: [{ role: "user", content: `grade: ${answer.choices[0]!.message.content}` }],
      max_tokens: 3,
    });
  });
  const main = t.messages_and_choices as Record<string, any>[];
  expect(main[1]!.message).toBeDefined();
  expect(main[1]!.logprobs.content.length).toBeGreaterThan(0);
  // The judge's turn is recorded as context, not as a Choice to train on.
  const judged = t.additional_histories[0]!.messages_and_choices as Record<string, any>[];
  expect(judged[1]).toEqual({ role: "assistant", content: expect.any(String) });
  expect(t.logs).toEqual([
    'model "emulator/tiny" is not the policy: its completions are kept as plain assistant messages, not trained on',
  ]);
  expect(recorder.isPolicy(model.inferenceName(3))).toBe(true);
  expect(recorder.isPolicy("emulator/tiny")).toBe(false);
});
