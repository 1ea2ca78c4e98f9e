// The exact `experimental_config` `train()` sends: the body ART's serverless
// backend sends for the same call (every key, its defaults, explicit nulls,
// and what one option implies for another), and the same refusals.
import nock from "nock";
import { InvalidTrainingOptionsError, TrainableModel, type TrainConfig } from "trajectory-recorder";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BASE, makeClient, useNock } from "../client/helpers.js";
import { trainableGroup } from "../helpers/trainable.js";

useNock({ beforeAll, afterEach, afterAll });

const MODEL_ID = "3f0b6c1e-8a40-4c55-9d1e-6a1f5c3b2a10";
const JOB_ID = "7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const GROUP = trainableGroup(1, 0);

// What ART's `ServerlessBackend.train(model, groups)` sends with no options.
const ART_BODY = {
  advantage_balance: 0,
  allow_training_without_logprobs: false,
  epsilon: null,
  epsilon_high: null,
  importance_sampling_level: "token",
  kimi_k2_tau: null,
  kl_penalty_coef: 0,
  kl_penalty_reference_step: null,
  kl_penalty_source: "current_learner",
  kl_penalty_step_lag: null,
  kl_ref_adapter_path: null,
  learning_rate: 5e-6,
  logprob_calculation_chunk_size: 1024,
  loss_fn: "cispo",
  mask_prob_ratio: false,
  max_negative_advantage_importance_sampling_weight: null,
  normalize_advantages: true,
  num_trajectories_learning_rate_multiplier_power: 0,
  packed_sequence_length: null,
  plot_tensors: false,
  ppo: false,
  precalculate_logprobs: false,
  scale_learning_rate_by_reward_std_dev: false,
  scale_rewards: true,
  truncated_importance_sampling: null,
};

async function register(): Promise<TrainableModel> {
  nock(BASE).post("/v1/preview/models").reply(200, {
    id: MODEL_ID,
    entity: "me",
    project: "p",
    name: "m",
    base_model: "b",
    run_id: "r1",
  });
  return TrainableModel.register(makeClient(), { project: "p", name: "m", baseModel: "b" });
}

/** Runs `train` against a scripted service and returns the job body it sent. */
async function sentBody(config?: TrainConfig): Promise<Record<string, unknown>> {
  const model = await register();
  const checkpoints = (step: number) => ({
    object: "list",
    data: [{ id: `c${step}`, step, metrics: {} }],
    first_id: `c${step}`,
    last_id: `c${step}`,
    has_more: false,
  });
  let body: Record<string, unknown> = {};
  nock(BASE)
    .get(`/v1/preview/models/${MODEL_ID}/checkpoints`)
    .query(true)
    .reply(200, checkpoints(0))
    .post("/v1/preview/training-jobs", (b) => {
      body = b;
      return true;
    })
    .reply(200, { id: JOB_ID })
    .get(`/v1/preview/training-jobs/${JOB_ID}/events`)
    .query(true)
    .reply(200, {
      object: "list",
      data: [{ id: "e1", type: "training_ended", data: {} }],
      first_id: "e1",
      last_id: "e1",
      has_more: false,
    })
    .get(`/v1/preview/models/${MODEL_ID}/checkpoints`)
    .query(true)
    .reply(200, checkpoints(1));
  await model.train([GROUP], config, { pollIntervalMs: 0 });
  expect(body.model_id).toBe(MODEL_ID);
  return body.experimental_config as Record<string, unknown>;
}

describe("train(groups) with no options", () => {
  it("sends exactly the experimental_config ART's serverless backend sends", async () => {
    expect(await sentBody()).toStrictEqual(ART_BODY);
  });

  it("sends the same for an empty config and for options set to null", async () => {
    expect(await sentBody({})).toStrictEqual(ART_BODY);
    expect(await sentBody({ learningRate: null, lossFn: null, klPenaltyCoef: null })).toStrictEqual(
      ART_BODY,
    );
  });
});

describe("each option", () => {
  // [option, value, what changes in ART's body]
  const cases: [keyof TrainConfig, unknown, Record<string, unknown>][] = [
    ["advantageBalance", 0.5, { advantage_balance: 0.5 }],
    ["allowTrainingWithoutLogprobs", true, { allow_training_without_logprobs: true }],
    ["epsilon", 0.3, { epsilon: 0.3 }],
    ["epsilonHigh", 5, { epsilon_high: 5 }],
    ["importanceSamplingLevel", "sequence", { importance_sampling_level: "sequence" }],
    ["kimiK2Tau", 0.7, { kimi_k2_tau: 0.7 }],
    // A positive KL coefficient switches the default source to "sample".
    ["klPenaltyCoef", 0.1, { kl_penalty_coef: 0.1, kl_penalty_source: "sample" }],
    ["klPenaltyReferenceStep", 3, { kl_penalty_reference_step: 3 }],
    ["klPenaltySource", "sample", { kl_penalty_source: "sample" }],
    ["klPenaltyStepLag", 2, { kl_penalty_step_lag: 2 }],
    ["klRefAdapterPath", "/refs/a", { kl_ref_adapter_path: "/refs/a" }],
    ["learningRate", 1e-5, { learning_rate: 1e-5 }],
    ["logprobCalculationChunkSize", 512, { logprob_calculation_chunk_size: 512 }],
    ["lossFn", "ppo", { loss_fn: "ppo", ppo: true }],
    ["maskProbRatio", true, { mask_prob_ratio: true }],
    [
      "maxNegativeAdvantageImportanceSamplingWeight",
      2,
      { max_negative_advantage_importance_sampling_weight: 2 },
    ],
    // ART sends normalize_advantages as the resolved scale_rewards: off turns both off.
    ["normalizeAdvantages", false, { normalize_advantages: false, scale_rewards: false }],
    [
      "numTrajectoriesLearningRateMultiplierPower",
      0.5,
      { num_trajectories_learning_rate_multiplier_power: 0.5 },
    ],
    ["packedSequenceLength", 4096, { packed_sequence_length: 4096 }],
    ["plotTensors", true, { plot_tensors: true }],
    ["ppo", true, { ppo: true, loss_fn: "ppo" }],
    ["precalculateLogprobs", true, { precalculate_logprobs: true }],
    ["scaleLearningRateByRewardStdDev", true, { scale_learning_rate_by_reward_std_dev: true }],
    ["scaleRewards", false, { scale_rewards: false, normalize_advantages: false }],
    ["truncatedImportanceSampling", 2, { truncated_importance_sampling: 2 }],
  ];

  it("covers every option of the wire schema", () => {
    const wire = Object.keys(ART_BODY).map((k) =>
      k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
    );
    expect(cases.map(([option]) => option).sort()).toEqual(wire.sort());
  });

  it.each(cases)("%s = %j changes only what ART changes", async (option, value, changes) => {
    expect(await sentBody({ [option]: value } as TrainConfig)).toStrictEqual({
      ...ART_BODY,
      ...changes,
    });
  });

  it("keeps an explicit KL source over the one the coefficient implies", async () => {
    expect(
      await sentBody({ klPenaltyCoef: 0.2, klPenaltySource: "current_learner" }),
    ).toStrictEqual({ ...ART_BODY, kl_penalty_coef: 0.2, kl_penalty_source: "current_learner" });
  });

  it("accepts lossFn and ppo when they agree", async () => {
    expect(await sentBody({ lossFn: "cispo", ppo: false })).toStrictEqual(ART_BODY);
    expect(await sentBody({ lossFn: "ppo", ppo: true })).toStrictEqual({
      ...ART_BODY,
      loss_fn: "ppo",
      ppo: true,
    });
  });
});

describe("refused combinations, before anything is sent", () => {
  const refused: [string, TrainConfig, RegExp][] = [
    ["lossFn against ppo", { lossFn: "ppo", ppo: false }, /lossFn: "ppo" conflicts with ppo/],
    ["cispo against ppo", { lossFn: "cispo", ppo: true }, /lossFn: "cispo" conflicts with ppo/],
    [
      "both KL references",
      { klPenaltyReferenceStep: 0, klPenaltyStepLag: 1 },
      /klPenaltyReferenceStep: only one of klPenaltyReferenceStep and klPenaltyStepLag/,
    ],
    ["a step lag below 1", { klPenaltyStepLag: 0 }, /klPenaltyStepLag: expected an integer >= 1/],
    [
      "a negative reference step",
      { klPenaltyReferenceStep: -1 },
      /klPenaltyReferenceStep: expected an integer >= 0/,
    ],
  ];

  it.each(refused)("refuses %s", async (_, config, message) => {
    const model = await register();
    // No interceptor is left: a request would fail with a connection error instead.
    const error = await model.train([GROUP], config, { pollIntervalMs: 0 }).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidTrainingOptionsError);
    expect(error.message).toMatch(message);
  });
});

it("refuses an SFT uploader that has no upload method, before anything is sent", async () => {
  const model = await register();
  const error = await model
    .trainSft(
      [{ messages: [{ role: "user" }, { role: "assistant" }] }],
      {},
      {
        uploader: {} as never,
      },
    )
    .catch((e) => e);
  expect(error).toBeInstanceOf(InvalidTrainingOptionsError);
  expect(error.message).toMatch(/uploader: expected an ArtifactUploader/);
});
