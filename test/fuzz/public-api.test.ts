// Property-based checks of the public API with arbitrary arguments: every
// call either succeeds or fails with one of our errors naming the bad field,
// async methods reject rather than throw, nothing is left unhandled, and the
// key never shows.
import fc from "fast-check";
import {
  APIError,
  gatherTrajectoryGroups,
  InvalidArgumentError,
  InvalidTrainingOptionsError,
  inferenceModelName,
  TooManyExceptionsError,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
  TrajectoryValidationError,
} from "trajectory-recorder";
import { retryDelay, wrapClient } from "trajectory-recorder/core";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { MissingAPIKeyError, RequestValidationError } from "trajectory-recorder/errors";
import { afterAll, beforeAll, expect, it } from "vitest";
import { abortableSleep } from "../../src/client/index.js";
import { toSftConfig, toSftJsonl } from "../../src/training/index.js";
import {
  anything,
  call,
  check,
  expectNamesField,
  expectNoSecret,
  SECRET,
  weird,
} from "./helpers.js";

/** What the engine says when code trips over a bad value instead of checking it. */
const ENGINE_ERROR =
  /Cannot read prop|is not a function|is not iterable|Cannot convert|Do not know how to serialize/;

let emu: Emulator;
let client: TrainingClient;
let modelId: string;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on("unhandledRejection", onUnhandled);
  emu = await startEmulator({ port: 0, apiKeys: { [SECRET]: "fuzz" } });
  client = new TrainingClient({ apiKey: SECRET, baseURL: emu.url, maxRetries: 0, timeout: 5_000 });
  modelId = (
    await client.models.create({
      project: "fuzz",
      name: "m",
      base_model: "b",
      return_existing: true,
    })
  ).id;
});
afterAll(async () => {
  await emu.close();
  process.off("unhandledRejection", onUnhandled);
  expect(unhandled).toEqual([]);
});

/** What an async entry point may fail with: bad input, or the service's 4xx answer. */
function expectCleanRejection(error: unknown) {
  expectNoSecret(error);
  if (error instanceof RequestValidationError) {
    expectNamesField(error);
    return;
  }
  // Rollouts that are not rollouts fail as rollouts do, counted against maxExceptions.
  if (error instanceof TooManyExceptionsError) {
    expect(error.message).toMatch(/must resolve to a Trajectory|rollouts failed/);
    return;
  }
  if (!(error instanceof APIError)) {
    // A plain-argument check of ours: names the argument and what it expected.
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain(`: ${(error as InvalidArgumentError).argument}: `);
    expect((error as Error).message).toMatch(/[\w\]]: expected/);
    expect((error as Error).message).not.toMatch(ENGINE_ERROR);
    return;
  }
  const status = (error as APIError).status;
  expect(status, (error as Error).message).toBeGreaterThanOrEqual(400);
  expect(status, (error as Error).message).toBeLessThan(500);
}

async function settles(call: () => unknown) {
  let promise: unknown;
  expect(() => {
    promise = call();
  }).not.toThrow();
  try {
    await promise;
  } catch (error) {
    expectCleanRejection(error);
  }
}

const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom("user", "assistant", "system"), weird),
    content: fc.oneof(fc.string(), weird),
  },
  { requiredKeys: [] },
);
const trajectory = fc.record(
  {
    messages_and_choices: fc.oneof(fc.array(message, { maxLength: 3 }), weird),
    reward: fc.oneof(fc.double(), weird),
    metadata: fc.oneof(fc.dictionary(fc.string(), anything), weird),
    tools: fc.oneof(fc.constant(null), weird),
  },
  { requiredKeys: [] },
);
const group = fc.record(
  { trajectories: fc.oneof(fc.array(trajectory, { maxLength: 3 }), weird), metadata: weird },
  { requiredKeys: [] },
);
const groups = fc.oneof(fc.array(group, { maxLength: 2 }), weird);
const id = fc.oneof(fc.uuid(), fc.string(), weird);

it("answers arbitrary arguments to every client method by resolving or rejecting cleanly", async () => {
  const model = fc.oneof(fc.constant(undefined), id);
  const calls = [
    call("models.create", fc.tuple(weird, weird), (p, o) =>
      client.models.create(p as never, o as never),
    ),
    call(
      "models.create",
      fc.tuple(
        fc.record({
          project: fc.oneof(fc.string(), weird),
          name: fc.oneof(fc.string(), weird),
          base_model: fc.string(),
        }),
      ),
      (p) => client.models.create(p as never),
    ),
    call("models.delete", fc.tuple(id, weird), (i, o) =>
      client.models.delete(i as never, o as never),
    ),
    call("models.log", fc.tuple(model, fc.oneof(fc.string(), weird), groups), (i, split, g) =>
      client.models.log((i ?? modelId) as never, { split, trajectory_groups: g } as never),
    ),
    call("models.checkpoints.list", fc.tuple(id, weird), (i, q) =>
      client.models.checkpoints.list(i as never, q as never),
    ),
    call("models.checkpoints.delete", fc.tuple(id, weird), (i, p) =>
      client.models.checkpoints.delete(i as never, p as never),
    ),
    call("trainingJobs.create", fc.tuple(groups, weird), (g, cfg) =>
      client.trainingJobs.create({
        model_id: modelId,
        trajectory_groups: g,
        experimental_config: cfg,
      } as never),
    ),
    call("trainingJobs.retrieve", fc.tuple(id, weird), (i, o) =>
      client.trainingJobs.retrieve(i as never, o as never),
    ),
    call("trainingJobs.events.list", fc.tuple(id, weird), (i, q) =>
      client.trainingJobs.events.list(i as never, q as never),
    ),
    call("sftTrainingJobs.create", fc.tuple(fc.oneof(fc.string(), weird), weird), (url, cfg) =>
      client.sftTrainingJobs.create({
        model_id: modelId,
        training_data_url: url,
        config: cfg,
      } as never),
    ),
    call(
      "chat.completions.create",
      fc.tuple(
        fc.record(
          {
            model: fc.oneof(fc.string(), weird),
            messages: fc.oneof(fc.array(message, { maxLength: 2 }), weird),
            n: fc.oneof(fc.integer(), weird),
            max_tokens: fc.oneof(fc.integer(), weird),
            logprobs: fc.oneof(fc.boolean(), weird),
            top_logprobs: fc.oneof(fc.integer(), weird),
          },
          { requiredKeys: [] },
        ),
      ),
      (body) => client.chat.completions.create(body as never),
    ),
    call("health", fc.tuple(weird), (o) => client.health(o as never)),
    call("gatherTrajectoryGroups", fc.tuple(weird, weird), (groups, options) =>
      gatherTrajectoryGroups(groups as never, options as never),
    ),
    call("abortableSleep", fc.tuple(weird, weird), (ms, signal) =>
      abortableSleep(
        (typeof ms === "number" ? Math.min(Math.abs(ms), 5) : ms) as never,
        signal as never,
      ),
    ),
  ];
  await check(fc.oneof(...calls), settles, 300);
});

it("answers arbitrary constructor and builder arguments with one of our errors naming them", async () => {
  const entries = [
    call(
      "new TrainingClient",
      fc.tuple(
        fc.record(
          {
            apiKey: fc.oneof(fc.string(), weird),
            baseURL: fc.oneof(fc.webUrl(), fc.string(), weird),
            timeout: weird,
            maxRetries: weird,
            fetch: weird,
            defaultHeaders: weird,
          },
          { requiredKeys: [] },
        ),
      ),
      (o) => new TrainingClient(o as never),
    ),
    call("new TrainingClient", fc.tuple(weird), (o) => new TrainingClient(o as never)),
    call("new Trajectory", fc.tuple(weird), (init) => new Trajectory(init as never)),
    call("Trajectory.fromJSON", fc.tuple(fc.oneof(weird, trajectory)), (json) =>
      Trajectory.fromJSON(json),
    ),
    call(
      "new TrajectoryGroup",
      fc.tuple(fc.oneof(weird, fc.array(weird, { maxLength: 3 })), weird),
      (items, options) => new TrajectoryGroup(items as never, options as never),
    ),
    call("TrajectoryGroup.fromJSON", fc.tuple(fc.oneof(weird, group)), (json) =>
      TrajectoryGroup.fromJSON(json),
    ),
    call("toSftJsonl", fc.tuple(fc.oneof(fc.array(weird, { maxLength: 3 }), weird)), (data) =>
      toSftJsonl(data as never),
    ),
    call("toSftConfig", fc.tuple(weird), (config) => toSftConfig(config as never)),
    call("inferenceModelName", fc.tuple(weird), (ref) => inferenceModelName(ref as never)),
    call("wrapClient", fc.tuple(weird), (client) => wrapClient(client as never)),
    call("retryDelay", fc.tuple(weird, weird), (attempt, options) =>
      retryDelay(attempt as never, options as never),
    ),
  ];
  await check(
    fc.oneof(...entries),
    async (make) => {
      try {
        make();
      } catch (error) {
        expectNoSecret(error);
        expect(error).toBeInstanceOf(Error);
        const e = error as Error;
        // Our own errors only: never the engine's "Cannot read properties of ...".
        expect(e.message).not.toMatch(ENGINE_ERROR);
        if (e instanceof RequestValidationError || e instanceof TrajectoryValidationError) {
          expectNamesField(e);
        } else if (e instanceof InvalidArgumentError) {
          expect(e.message).toContain(`: ${e.argument}: expected `);
        } else {
          // The key missing, or an option of a training method: each its own class.
          expect([MissingAPIKeyError, InvalidTrainingOptionsError]).toContain(e.constructor);
          expect(e.message).toMatch(/expect|No API key/);
        }
      }
    },
    300,
  );
});
