// What `trainingJobs.create` and `models.log` take, as the root names it: a
// group's JSON written as a user writes it (no `as const`), or a TrajectoryGroup.
// The static types say what the check before sending says: what `tsc` refuses
// below (the typecheck leg of CI fails if it stops refusing it), the client
// refuses too, before anything is sent.
import nock from "nock";
import type { Models, TrainingJobs, Trajectory } from "trajectory-recorder";
import { TrajectoryGroup } from "trajectory-recorder";
import { RequestValidationError } from "trajectory-recorder/errors";
import { afterAll, afterEach, beforeAll, expect, expectTypeOf, it } from "vitest";
import { BASE, makeClient, useNock } from "./helpers.js";

useNock({ beforeAll, afterEach, afterAll });

const MODEL_ID = "3f0b6c1e-8a40-4c55-9d1e-6a1f5c3b2a10";
const JOB_ID = "9a7d2f44-1b2c-4e3f-8a9b-0c1d2e3f4a5b";

// Typed `string`, as a role read from a variable is (not the literal "user").
const userRole: string = "user";

const answer: Trajectory.ChoiceWireInput = {
  finish_reason: "stop",
  index: 0,
  message: { role: "assistant", content: "4" },
};
const groupJson: TrajectoryGroup.TrajectoryGroupWireInput = {
  trajectories: [
    { messages_and_choices: [{ role: userRole, content: "2+2?" }, answer], reward: 1 },
  ],
};

it("takes a group's JSON without its defaults, and a TrajectoryGroup, in one list", async () => {
  const params: TrainingJobs.TrainingJobCreateParams = {
    model_id: MODEL_ID,
    trajectory_groups: [groupJson, TrajectoryGroup.fromJSON(groupJson)],
    experimental_config: { learning_rate: 5e-6, loss_fn: "cispo" },
  };
  let sent: { trajectory_groups: { exceptions: unknown[] }[] } | undefined;
  nock(BASE)
    .post("/v1/preview/training-jobs", (body) => {
      sent = body;
      return true;
    })
    .reply(200, { id: JOB_ID });
  expect(await makeClient().trainingJobs.create(params)).toEqual({ id: JOB_ID });
  expect(sent?.trajectory_groups).toHaveLength(2);
  // The TrajectoryGroup was sent as its JSON, with ART's defaults written out.
  expect(sent?.trajectory_groups[1]?.exceptions).toEqual([]);

  const log: Models.LogParams = { split: "val", trajectory_groups: [groupJson] };
  nock(BASE).post(`/v1/preview/models/${MODEL_ID}/log`).reply(200, {});
  expect(await makeClient().models.log(MODEL_ID, log)).toEqual({});
  expectTypeOf<
    Models.LogParams["trajectory_groups"][number]
  >().toEqualTypeOf<TrajectoryGroup.TrajectoryGroupParam>();
});

it("refuses, in the types and before sending, what the service would refuse", async () => {
  // @ts-expect-error: a Choice needs its `index` (the old input type let this through).
  const noIndex: Trajectory.MessageOrChoiceWireInput = {
    finish_reason: "stop",
    message: { role: "assistant", content: "4" },
  };
  const client = makeClient({ maxRetries: 0 });
  const refused = await client.trainingJobs
    .create({
      model_id: MODEL_ID,
      trajectory_groups: [{ trajectories: [{ messages_and_choices: [noIndex] }] }],
    })
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(RequestValidationError);
  expect(String((refused as Error).message)).toContain(
    "trajectory_groups[0].trajectories[0].messages_and_choices[0]",
  );

  const typo: TrainingJobs.TrainingJobCreateParams = {
    model_id: MODEL_ID,
    trajectory_groups: [groupJson],
    experimental_config: {
      // @ts-expect-error: an unknown knob (a typo of learning_rate).
      learning_rat: 5e-6,
    },
  };
  const refusedTypo = await client.trainingJobs.create(typo).catch((e: unknown) => e);
  expect(refusedTypo).toBeInstanceOf(RequestValidationError);
  expect(String((refusedTypo as Error).message)).toContain("experimental_config");
  // Nothing reached the service (nock would have refused an unexpected request).
  expect(nock.pendingMocks()).toEqual([]);
});
