import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BASE, KEY, makeClient, useNock } from "./helpers.js";

useNock({ beforeAll, afterEach, afterAll });

const MODEL_ID = "3f0b6c1e-8a40-4c55-9d1e-6a1f5c3b2a10";
const JOB_ID = "9a7d2f44-1b2c-4e3f-8a9b-0c1d2e3f4a5b";
const group = {
  trajectories: [{ messages_and_choices: [{ role: "user", content: "hi" }], reward: 1 }],
};

function api() {
  return nock(BASE, { reqheaders: { authorization: `Bearer ${KEY}` } });
}

describe("every endpoint speaks the wire contract", () => {
  it("models.create posts the snake_case body and keeps unknown response fields", async () => {
    const body = {
      project: "demo",
      name: "agent-001",
      base_model: "Qwen/Qwen3-4B",
      return_existing: true,
    };
    api()
      .post("/v1/preview/models", body)
      .matchHeader("content-type", "application/json")
      .reply(200, {
        id: MODEL_ID,
        entity: "me",
        project: "demo",
        name: "agent-001",
        base_model: "Qwen/Qwen3-4B",
        run_id: "run-1",
        created_at: "2026-01-01T00:00:00Z",
      });
    const model = await makeClient().models.create(body);
    expect(model.id).toBe(MODEL_ID);
    expect(model.run_id).toBe("run-1");
    expect(model.created_at).toBe("2026-01-01T00:00:00Z");
  });

  it("models.delete sends DELETE to the model path", async () => {
    api()
      .delete(`/v1/preview/models/${MODEL_ID}`)
      .reply(200, { model_id: MODEL_ID, deleted_checkpoints: 3, deleted_run: true });
    const out = await makeClient().models.delete(MODEL_ID);
    expect(out).toEqual({ model_id: MODEL_ID, deleted_checkpoints: 3, deleted_run: true });
  });

  it("models.log posts split and trajectory groups", async () => {
    api()
      .post(`/v1/preview/models/${MODEL_ID}/log`, { split: "val", trajectory_groups: [group] })
      .reply(200, { logged: 1 });
    const out = await makeClient().models.log(MODEL_ID, {
      split: "val",
      trajectory_groups: [group],
    });
    expect(out).toEqual({ logged: 1 });
  });

  it("models.checkpoints.list sends after, limit and order as query", async () => {
    api()
      .get(`/v1/preview/models/${MODEL_ID}/checkpoints`)
      .query({ after: "c0", limit: "1", order: "desc" })
      .reply(200, {
        object: "list",
        data: [{ id: "c1", step: 7, metrics: { reward: 0.5 }, artifact: "x" }],
        first_id: "c1",
        last_id: "c1",
        has_more: true,
      });
    const page = await makeClient().models.checkpoints.list(MODEL_ID, {
      after: "c0",
      limit: 1,
      order: "desc",
    });
    expect(page.data[0]).toEqual({ id: "c1", step: 7, metrics: { reward: 0.5 }, artifact: "x" });
    expect(page.has_more).toBe(true);
    expect(page.first_id).toBe("c1");
    expect(page.last_id).toBe("c1");
    expect(page.object).toBe("list");
  });

  it("models.checkpoints.delete sends a JSON body on DELETE", async () => {
    api()
      .delete(`/v1/preview/models/${MODEL_ID}/checkpoints`, { steps: [1, 2, 9] })
      .reply(200, { deleted_count: 2, not_found_steps: [9] });
    const out = await makeClient().models.checkpoints.delete(MODEL_ID, { steps: [1, 2, 9] });
    expect(out).toEqual({ deleted_count: 2, not_found_steps: [9] });
  });

  it("trainingJobs.create posts model_id, groups and experimental_config", async () => {
    const body = {
      model_id: MODEL_ID,
      trajectory_groups: [group],
      experimental_config: {
        learning_rate: 5e-6,
        importance_sampling_level: "token" as const,
        ppo: null,
      },
    };
    api().post("/v1/preview/training-jobs", body).reply(200, { id: JOB_ID });
    expect(await makeClient().trainingJobs.create(body)).toEqual({ id: JOB_ID });
  });

  it("trainingJobs.retrieve keeps status fields the spec does not list", async () => {
    api()
      .get(`/v1/preview/training-jobs/${JOB_ID}`)
      .reply(200, { id: JOB_ID, status: "COMPLETED", extra: { a: 1 } });
    const job = await makeClient().trainingJobs.retrieve(JOB_ID);
    expect(job).toEqual({ id: JOB_ID, status: "COMPLETED", extra: { a: 1 } });
  });

  it("trainingJobs.events.list sends after and limit", async () => {
    api()
      .get(`/v1/preview/training-jobs/${JOB_ID}/events`)
      .query({ after: "e1", limit: "50" })
      .reply(200, {
        object: "list",
        data: [{ id: "e2", type: "gradient_step", data: { loss: 0.25 } }],
        has_more: false,
      });
    const page = await makeClient().trainingJobs.events.list(JOB_ID, { after: "e1", limit: 50 });
    expect(page.data).toEqual([{ id: "e2", type: "gradient_step", data: { loss: 0.25 } }]);
  });

  it("sftTrainingJobs.create posts the data URL and config", async () => {
    const body = {
      model_id: MODEL_ID,
      training_data_url: "wandb-artifact:///me/demo/data:v0",
      config: { batch_size: "auto" as const, learning_rate: 5e-5 },
    };
    api().post("/v1/preview/sft-training-jobs", body).reply(200, { id: JOB_ID });
    expect(await makeClient().sftTrainingJobs.create(body)).toEqual({ id: JOB_ID });
  });

  it("health and systemCheck GET their paths", async () => {
    api().get("/v1/health").reply(200, { status: "ok", version: "1" });
    api().get("/v1/system-check").reply(200, { status: "ok", checks: {} });
    const client = makeClient();
    expect(await client.health()).toEqual({ status: "ok", version: "1" });
    expect(await client.systemCheck()).toEqual({ status: "ok", checks: {} });
  });

  it("withResponse() and asResponse() expose the HTTP response", async () => {
    api().get("/v1/health").twice().reply(200, { status: "ok" }, { "x-request-id": "req-42" });
    const client = makeClient();
    const { data, response } = await client.health().withResponse();
    expect(data.status).toBe("ok");
    expect(response.headers.get("x-request-id")).toBe("req-42");
    const promise = client.health();
    expect(promise).toBeInstanceOf(Promise);
    const raw = await promise.asResponse();
    expect(raw.status).toBe(200);
  });

  it("refuses an id that is not a UUID before anything is sent", async () => {
    // No interceptor: a request that went out would fail with a connection error instead.
    await expect(makeClient().trainingJobs.retrieve("a/b")).rejects.toThrow(
      /trainingJobs\.retrieve.*job_id: expected a UUID string/,
    );
    await expect(
      makeClient().trainingJobs.create({ model_id: "agent-001", trajectory_groups: [] }),
    ).rejects.toThrow(/model_id: expected a UUID string/);
  });
});

describe("pagination follows the after cursor", () => {
  function pages(path: string) {
    api()
      .get(path)
      .query({ limit: "2" })
      .reply(200, {
        object: "list",
        data: [
          { id: "c1", step: 1, metrics: {} },
          { id: "c2", step: 2, metrics: {} },
        ],
        has_more: true,
      });
    api()
      .get(path)
      .query({ limit: "2", after: "c2" })
      .reply(200, {
        object: "list",
        data: [
          { id: "c3", step: 3, metrics: {} },
          { id: "c4", step: 4, metrics: {} },
        ],
        has_more: true,
      });
    api()
      .get(path)
      .query({ limit: "2", after: "c4" })
      .reply(200, {
        object: "list",
        data: [{ id: "c5", step: 5, metrics: {} }],
        has_more: false,
      });
  }
  const path = `/v1/preview/models/${MODEL_ID}/checkpoints`;

  it("for await over the list call yields every item of every page", async () => {
    pages(path);
    const steps: number[] = [];
    for await (const cp of makeClient().models.checkpoints.list(MODEL_ID, { limit: 2 })) {
      steps.push(cp.step);
    }
    expect(steps).toEqual([1, 2, 3, 4, 5]);
  });

  it("getNextPage() walks page by page until has_more is false", async () => {
    pages(path);
    let page = await makeClient().models.checkpoints.list(MODEL_ID, { limit: 2 });
    const sizes = [page.data.length];
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      sizes.push(page.data.length);
    }
    expect(sizes).toEqual([2, 2, 1]);
    await expect(page.getNextPage()).rejects.toThrow(/no next page/);
  });

  it("events pages iterate the same way", async () => {
    const epath = `/v1/preview/training-jobs/${JOB_ID}/events`;
    api()
      .get(epath)
      .reply(200, {
        data: [{ id: "e1", type: "training_started", data: { num_sequences: 2 } }],
        has_more: true,
      });
    api()
      .get(epath)
      .query({ after: "e1" })
      .reply(200, {
        data: [{ id: "e2", type: "training_ended", data: {} }],
        has_more: false,
      });
    const types: string[] = [];
    for await (const ev of makeClient().trainingJobs.events.list(JOB_ID)) types.push(ev.type);
    expect(types).toEqual(["training_started", "training_ended"]);
  });

  it("keeps an event type it does not know instead of failing the page", async () => {
    api()
      .get(`/v1/preview/training-jobs/${JOB_ID}/events`)
      .reply(200, {
        data: [{ id: "e1", type: "checkpoint_uploaded", data: { step: 3 } }],
        has_more: false,
      });
    const page = await makeClient().trainingJobs.events.list(JOB_ID);
    expect(page.data).toEqual([{ id: "e1", type: "checkpoint_uploaded", data: { step: 3 } }]);
  });

  it('an empty page has first_id and last_id "", as the service\'s schema says, even when sent null', async () => {
    api()
      .get(`/v1/preview/models/${MODEL_ID}/checkpoints`)
      .reply(200, { data: [], has_more: false, first_id: null, last_id: null });
    const page = await makeClient().models.checkpoints.list(MODEL_ID);
    expect([page.first_id, page.last_id, page.hasNextPage()]).toEqual(["", "", false]);
  });
});

describe("bad arguments are refused before anything is sent", () => {
  it("names the zod path and what was expected", async () => {
    const client = makeClient();
    const err = await client.trainingJobs
      .create({ model_id: MODEL_ID, trajectory_groups: [{ trajectories: "nope" as never }] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "RequestValidationError" });
    expect((err as Error).message).toMatch(/trainingJobs\.create/);
    expect((err as Error).message).toMatch(
      /trajectory_groups\[0\]\.trajectories: .*expected array/,
    );
  });

  it("rejects a limit outside 1..100 and an unknown experimental key", async () => {
    const client = makeClient();
    await expect(client.models.checkpoints.list(MODEL_ID, { limit: 101 })).rejects.toThrow(
      /limit: .*<=100/,
    );
    await expect(
      client.trainingJobs.create({
        model_id: MODEL_ID,
        trajectory_groups: [group],
        experimental_config: { learning_rat: 1 } as never,
      }),
    ).rejects.toThrow(/experimental_config.*learning_rat/);
  });

  it("rejects an empty id", async () => {
    await expect(makeClient().models.delete("")).rejects.toThrow(
      /model_id: expected a UUID string/,
    );
  });
});
