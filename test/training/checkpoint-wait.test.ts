import {
  CheckpointTimeoutError,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { APIUserAbortError } from "trajectory-recorder/errors";
import { afterEach, beforeEach, expect, it } from "vitest";
import { waitForCheckpoint } from "../../src/training/checkpoint-wait.js";
import { type FaultProxy, startFaultProxy } from "../e2e/fault-proxy.js";

let emu: Emulator;
let proxy: FaultProxy;
// How many checkpoint lists after job creation answer an empty page.
let emptyLists = 0;
beforeEach(async () => {
  emptyLists = 0;
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  let jobCreated = false;
  proxy = await startFaultProxy(emu.url, ({ method, path }) => {
    if (method === "POST" && path.endsWith("/training-jobs")) jobCreated = true;
    if (jobCreated && path.includes("/checkpoints") && emptyLists > 0) {
      emptyLists -= 1;
      return { kind: "status", status: 200, body: { object: "list", data: [], has_more: false } };
    }
    return undefined;
  });
});
afterEach(async () => {
  await proxy.close();
  await emu.close();
});

async function model(name: string) {
  const client = new TrainingClient({ apiKey: "k", baseURL: proxy.url });
  return TrainableModel.register(client, { project: "p", name, baseModel: "toy" });
}
const group = () =>
  new TrajectoryGroup([
    new Trajectory({ messages_and_choices: [{ role: "assistant", content: "a" }], reward: 1 }),
    new Trajectory({ messages_and_choices: [{ role: "assistant", content: "b" }], reward: 0 }),
  ]);
const config = { allowTrainingWithoutLogprobs: true };

it("returns the job's step even when its checkpoint is listed only after training_ended", async () => {
  emptyLists = 1;
  const m = await model("late-checkpoint");
  const result = await m.train([group()], config, { pollIntervalMs: 10 });
  expect(result.step).toBe(1);
  const lists = proxy.seen.filter((r) => r.path.includes("/checkpoints"));
  // One before the job, one answered empty, one that saw step 1.
  expect(lists).toHaveLength(3);
  expect(await m.getStep()).toBe(1);
});

it("throws CheckpointTimeoutError when no newer checkpoint is listed within checkpointTimeoutMs", async () => {
  emptyLists = Number.POSITIVE_INFINITY;
  const m = await model("no-checkpoint");
  const error = await m
    .train([group()], config, { pollIntervalMs: 10, checkpointTimeoutMs: 150 })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(CheckpointTimeoutError);
  expect((error as Error).message).toMatch(
    /^Training job [0-9a-f-]+ ended, but no checkpoint newer than step 0 was listed within 150 ms/,
  );
  expect((error as CheckpointTimeoutError).stepBefore).toBe(0);
});

it("follows a job by id with followJob, as train does, after the caller saved it from onJobCreated", async () => {
  const m = await model("follow-by-id");
  const saved: { jobId: string; stepBefore: number }[] = [];
  const stop = new AbortController();
  const first = await m
    .train([group()], config, {
      pollIntervalMs: 10,
      signal: stop.signal,
      onJobCreated: (job) => {
        saved.push(job);
        stop.abort(new Error("the process died"));
      },
    })
    .catch((e: unknown) => e);
  expect((first as Error).message).toBe("the process died");
  expect(saved).toEqual([{ jobId: expect.any(String), stepBefore: 0 }]);
  const types: string[] = [];
  const result = await m.followJob(saved[0]!.jobId, {
    stepBefore: saved[0]!.stepBefore,
    pollIntervalMs: 10,
    onEvent: (e) => types.push(e.type),
  });
  expect(result).toMatchObject({ jobId: saved[0]!.jobId, step: 1 });
  expect(types.at(-1)).toBe("training_ended");
  const posts = proxy.seen.filter((r) => r.method === "POST" && r.path.endsWith("/training-jobs"));
  expect(posts).toHaveLength(1);
});

it("ends the wait with the signal's reason when an abort cuts a checkpoint poll short", async () => {
  const controller = new AbortController();
  const wait = waitForCheckpoint(
    async () => {
      controller.abort(new Error("user stopped"));
      // What the client throws for a request the caller's signal cut short.
      throw new APIUserAbortError({ method: "GET", path: "/v1/preview/models/x/checkpoints" });
    },
    { jobId: "j", stepBefore: 0, timeoutMs: 1_000, pollIntervalMs: 1, signal: controller.signal },
  );
  await expect(wait).rejects.toThrow("user stopped");
});
