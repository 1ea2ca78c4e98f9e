import { afterAll, beforeAll, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { call, createModel, reward, start, TARGETS, waitForJob } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

async function rollouts(model: string, target: string, n: number, seed: number) {
  const r = await call(emu, "POST", "/chat/completions", {
    model,
    messages: [{ role: "user", content: `please say ${target}` }],
    n,
    max_tokens: 4,
    logprobs: true,
    seed,
  });
  expect(r.status).toBe(200);
  return r.json.choices as any[];
}

async function meanReward(model: string, seed: number): Promise<number> {
  let total = 0;
  let count = 0;
  for (const target of TARGETS) {
    for (const c of await rollouts(model, target, 100, seed)) {
      total += reward(target, c.message.content);
      count++;
    }
  }
  return total / count;
}

it("raises the expected reward of the toy task over a few RL steps driven through the HTTP API", async () => {
  const m = await createModel(emu, "rl-agent");
  const name = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
  const curve = [await meanReward(name, 1)];
  for (let step = 0; step < 4; step++) {
    const groups = [];
    for (const [i, target] of TARGETS.entries()) {
      const choices = await rollouts(name, target, 16, 100 + step * 10 + i);
      groups.push({
        trajectories: choices.map((c) => ({
          messages_and_choices: [{ role: "user", content: `please say ${target}` }, c],
          reward: reward(target, c.message.content),
        })),
      });
    }
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: groups,
      experimental_config: { learning_rate: 5e-5 },
    });
    expect(job.status).toBe(200);
    const events = await waitForJob(emu, job.json.id);
    if (events.at(-1).type !== "training_ended") throw new Error(JSON.stringify(events.at(-1)));
    expect(events.at(-1)).toMatchObject({ type: "training_ended" });
    curve.push(await meanReward(name, 1));
  }
  console.log(
    `emulator RL toy task, expected reward per step: ${curve.map((x) => x.toFixed(3)).join(" -> ")}`,
  );
  expect(curve.at(-1)!).toBeGreaterThan(curve[0]! + 0.3);
  expect(curve[2]!).toBeGreaterThan(curve[0]!);
  const cps = await call(emu, "GET", `/preview/models/${m.id}/checkpoints?order=desc&limit=1`);
  expect(cps.json.data[0].step).toBe(4);
  expect(cps.json.data[0].metrics.reward).toBeGreaterThan(0);
});
