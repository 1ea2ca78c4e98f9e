// End to end through the package's own TrainingClient, as a user would drive the emulator.
import { TrainingClient } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: { k: "me" } });
});
afterAll(async () => {
  await emu.close();
});

it("creates a model, trains it and lists its checkpoints through TrainingClient", async () => {
  const client = new TrainingClient({ baseURL: emu.url, apiKey: "k", maxRetries: 0 });
  const model = await client.models.create({
    project: "demo",
    name: "via-client",
    base_model: "emulator/tiny",
  });
  expect(model.entity).toBe("me");
  const openai = client.createOpenAI();
  const groups = [];
  for (const target of ["red", "cat"]) {
    const r = await openai.chat.completions.create({
      model: `wandb-artifact:///me/demo/via-client`,
      messages: [{ role: "user", content: `say ${target}` }],
      n: 8,
      max_tokens: 4,
      logprobs: true,
      seed: 1,
    });
    groups.push({
      trajectories: r.choices.map((c) => ({
        messages_and_choices: [{ role: "user", content: `say ${target}` }, c],
        reward: (c.message.content ?? "").includes(target)
          ? 1
          : 0.1 * (c.message.content ?? "").length,
      })),
    });
  }
  const job = await client.trainingJobs.create({
    model_id: model.id,
    trajectory_groups: groups as never,
  });
  const types: string[] = [];
  for (
    let i = 0;
    i < 200 && !types.some((t) => t.startsWith("training_e") || t === "training_failed");
    i++
  ) {
    types.length = 0;
    for await (const ev of client.trainingJobs.events.list(job.id)) types.push(ev.type);
    await new Promise((r) => setTimeout(r, 5));
  }
  expect(types[0]).toBe("training_started");
  expect(types.at(-1)).toBe("training_ended");
  const page = await client.models.checkpoints.list(model.id, { order: "desc", limit: 1 });
  expect(page.data[0]?.step).toBe(1);
});
