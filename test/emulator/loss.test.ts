// The RL objective, seen from outside: train one step on hand-made
// trajectories whose recorded logprobs put the importance ratio where we want
// it, then read the trained policy's first-token logprobs back over HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { call, createModel, start, waitForJob } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

/**
 * The untrained policy's logprob of a word: uniform over 24 words and the end
 * token at the first position; after a word the end token weighs as much as
 * the 24 words together (1 in 48 each).
 */
const untrained = (pos: number) => (pos === 0 ? -Math.log(25) : -Math.log(48));
/** A recorded logprob that makes the ratio of an untrained token at `pos` equal `ratio`. */
const oldFor = (ratio: number, pos = 0) => untrained(pos) - Math.log(ratio);

function trajectory(words: string[], ratios: number[], reward: number) {
  return {
    messages_and_choices: [
      { role: "user", content: "say red" },
      {
        index: 0,
        finish_reason: "length",
        message: { role: "assistant", content: words.join(" ") },
        logprobs: {
          content: words.map((w, i) => ({
            token: i ? ` ${w}` : w,
            logprob: oldFor(ratios[i] as number, i),
            top_logprobs: [],
          })),
        },
      },
    ],
    reward,
  };
}

let models = 0;
/** Trains a fresh model one step; returns the gradient step and the first-token logprobs after it. */
async function trainOnce(config: Record<string, unknown>, trajectories: unknown[]) {
  const m = await createModel(emu, `loss-${models++}`);
  const job = await call(emu, "POST", "/preview/training-jobs", {
    model_id: m.id,
    trajectory_groups: [{ trajectories }],
    experimental_config: { learning_rate: 2e-5, ...config },
  });
  expect(job.status).toBe(200);
  const events = await waitForJob(emu, job.json.id);
  if (events.at(-1).type !== "training_ended") throw new Error(JSON.stringify(events.at(-1)));
  const r = await call(emu, "POST", "/chat/completions", {
    model: `wandb-artifact:///${m.entity}/${m.project}/${m.name}`,
    messages: [{ role: "user", content: "say red" }],
    max_tokens: 1,
    temperature: 0,
    logprobs: true,
    top_logprobs: 25,
  });
  const lp: Record<string, number> = {};
  for (const t of r.json.choices[0].logprobs.content[0].top_logprobs) lp[t.token] = t.logprob;
  return { step: events[1].data, lp };
}

/** Logprobs equal up to float rounding. */
function expectSame(a: Record<string, number>, b: Record<string, number>) {
  expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
  for (const k of Object.keys(a)) expect(a[k]).toBeCloseTo(b[k] as number, 10);
}

/** "red" (reward 1) at ratio `r`, "blue" (reward 0) at ratio 1. */
const redAt = (r: number) => [trajectory(["red"], [r], 1), trajectory(["blue"], [1], 0)];

describe("objective", () => {
  it("uses CISPO unless PPO is asked for: no flag, ppo: false and loss_fn cispo train alike", async () => {
    const none = await trainOnce({}, redAt(2));
    const ppoFalse = await trainOnce({ ppo: false }, redAt(2));
    const cispo = await trainOnce({ loss_fn: "cispo" }, redAt(2));
    const ppo = await trainOnce({ ppo: true }, redAt(2));
    const lossPpo = await trainOnce({ loss_fn: "ppo", ppo: false }, redAt(2));
    expectSame(ppoFalse.lp, none.lp);
    expectSame(cispo.lp, none.lp);
    expectSame(lossPpo.lp, ppo.lp);
    // PPO drops the positive token whose ratio 2 is above 1.2; CISPO weighs it by 2.
    expect(ppo.step.clipped_tokens).toBe(1);
    expect(none.step.clipped_tokens).toBe(0);
    expect(none.lp.red!).toBeGreaterThan(ppo.lp.red! + 0.05);
  });

  it("clips CISPO's weight to [1 − epsilon, 1 + epsilon_high], by default [0, 5]", async () => {
    // Default band [0, 5]: ratios 4.5 and 6 are kept and cut.
    expect((await trainOnce({}, redAt(4.5))).step.clipped_tokens).toBe(0);
    const six = await trainOnce({}, redAt(6));
    expect(six.step.clipped_tokens).toBe(1);
    expectSame(six.lp, (await trainOnce({}, redAt(5))).lp);
    // From below: with epsilon 0.5 a ratio of 0.1 still weighs 0.5.
    const low = await trainOnce({ epsilon: 0.5 }, redAt(0.1));
    expect(low.step.clipped_tokens).toBe(1);
    expectSame(low.lp, (await trainOnce({ epsilon: 0.5 }, redAt(0.5))).lp);
    const unclipped = await trainOnce({}, redAt(0.1));
    expect(low.lp.red!).toBeGreaterThan(unclipped.lp.red! + 0.01);
  });

  it("masks ratios outside the band with mask_prob_ratio and caps them with max_negative_advantage_importance_sampling_weight", async () => {
    const masked2 = await trainOnce({ ppo: true, mask_prob_ratio: true }, redAt(2));
    const masked3 = await trainOnce({ ppo: true, mask_prob_ratio: true }, redAt(3));
    expect(masked2.step.clipped_tokens).toBe(1);
    expectSame(masked2.lp, masked3.lp);
    // Under PPO a masked token has no gradient: "red" moves only as "blue" is pushed down.
    expect(masked2.lp.red).toBeCloseTo(masked2.lp.green!, 12);
    // Under CISPO the masked ratio 0 is clipped up to 1 − epsilon, as in ART.
    const cispoMasked = await trainOnce({ epsilon: 0.5, mask_prob_ratio: true }, redAt(9));
    expectSame(cispoMasked.lp, (await trainOnce({ epsilon: 0.5 }, redAt(0.5))).lp);
    const capped2 = await trainOnce(
      { max_negative_advantage_importance_sampling_weight: 1.5 },
      redAt(2),
    );
    const capped3 = await trainOnce(
      { max_negative_advantage_importance_sampling_weight: 1.5 },
      redAt(3),
    );
    expectSame(capped2.lp, capped3.lp);
    expect((await trainOnce({}, redAt(2))).lp).not.toEqual((await trainOnce({}, redAt(3))).lp);
  });

  it("uses one ratio per history with importance_sampling_level sequence", async () => {
    // Token ratios 2 and 0.5 average (in log space) to a sequence ratio of 1.
    const trajs = [trajectory(["red", "cat"], [2, 0.5], 1), trajectory(["blue"], [1], 0)];
    const token = await trainOnce({ ppo: true }, trajs);
    const sequence = await trainOnce({ ppo: true, importance_sampling_level: "sequence" }, trajs);
    expect(token.step.clipped_tokens).toBe(1);
    expect(sequence.step.clipped_tokens).toBe(0);
    expect(sequence.step.mean_importance_ratio).toBeCloseTo(1, 9);
  });

  it("shifts advantages by kimi_k2_tau times the log-ratio", async () => {
    // Ratio e: with tau 2 the winner's advantage 1 becomes 1 − 2 < 0, so "red" is pushed down.
    const plain = await trainOnce({}, redAt(Math.E));
    const kimi = await trainOnce({ kimi_k2_tau: 2 }, redAt(Math.E));
    expect(plain.lp.red!).toBeGreaterThan(plain.lp.green!);
    expect(kimi.lp.red!).toBeLessThan(kimi.lp.green!);
  });
});

describe("advantages", () => {
  it("trains one side only with advantage_balance 1 or -1", async () => {
    const positiveOnly = await trainOnce({ advantage_balance: 1 }, redAt(1));
    expect(positiveOnly.lp.blue).toBeCloseTo(positiveOnly.lp.green!, 12);
    expect(positiveOnly.lp.red!).toBeGreaterThan(positiveOnly.lp.green!);
    const negativeOnly = await trainOnce({ advantage_balance: -1 }, redAt(1));
    expect(negativeOnly.lp.red).toBeCloseTo(negativeOnly.lp.green!, 12);
    expect(negativeOnly.lp.blue!).toBeLessThan(negativeOnly.lp.green!);
    const both = await trainOnce({}, redAt(1));
    expect(both.lp.blue!).toBeLessThan(both.lp.green!);
  });

  it("leaves advantages unscaled with normalize_advantages: false, as with scale_rewards: false", async () => {
    // Rewards 0.2 and 0: unscaled advantages ±0.1, scaled ±1.
    const small = [trajectory(["red"], [1], 0.2), trajectory(["blue"], [1], 0)];
    // A rate small enough that no step reaches the emulator's step bound.
    const lr = { learning_rate: 1e-7 };
    const normalizeOff = await trainOnce({ ...lr, normalize_advantages: false }, small);
    const scaleOff = await trainOnce({ ...lr, scale_rewards: false }, small);
    const scaled = await trainOnce(lr, small);
    expectSame(normalizeOff.lp, scaleOff.lp);
    expect(scaled.lp.red! - scaled.lp.green!).toBeGreaterThan(
      5 * (normalizeOff.lp.red! - normalizeOff.lp.green!),
    );
  });
});
