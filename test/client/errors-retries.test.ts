import nock from "nock";
import { APIError, isRetryableError } from "trajectory-recorder";
import { retryDelay } from "trajectory-recorder/core";
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from "trajectory-recorder/errors";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { abortableSleep } from "../../src/client/index.js";
import { BASE, KEY, makeClient, useNock } from "./helpers.js";

const JOB_ID = "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6";

useNock({ beforeAll, afterEach, afterAll });

const MODEL_ID = "3f0b6c1e-8a40-4c55-9d1e-6a1f5c3b2a10";
const group = { trajectories: [{ messages_and_choices: [], reward: 0 }] };
const fast = { "retry-after-ms": "1" };

describe("each error status has its class and a sentence", () => {
  const cases = [
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [429, RateLimitError],
    [500, InternalServerError],
    [503, InternalServerError],
    [418, APIError],
  ] as const;
  for (const [status, Class] of cases) {
    it(`${status} -> ${Class.name}`, async () => {
      nock(BASE)
        .get(`/v1/preview/training-jobs/${JOB_ID}`)
        .reply(status, { detail: `server says ${status}` }, { "x-request-id": "rq-1" });
      const err = await makeClient()
        .trainingJobs.retrieve(JOB_ID)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Class);
      expect(err).toBeInstanceOf(APIError);
      const e = err as APIError;
      expect(e.status).toBe(status);
      expect(e.requestID).toBe("rq-1");
      expect(e.body).toEqual({ detail: `server says ${status}` });
      expect(e.message).toBe(
        `GET /v1/preview/training-jobs/${JOB_ID} failed with status ${status}: server says ${status}.`,
      );
    });
  }

  it("422 exposes the validation detail items and lists them in the message", async () => {
    const detail = [
      { loc: ["body", "split"], msg: "Field required", type: "missing" },
      {
        loc: ["body", "trajectory_groups", 0],
        msg: "Input should be a valid dict",
        type: "dict_type",
      },
    ];
    nock(BASE).post(`/v1/preview/models/${MODEL_ID}/log`).reply(422, { detail });
    const err = (await makeClient()
      .models.log(MODEL_ID, { split: "val", trajectory_groups: [group] })
      .catch((e: unknown) => e)) as UnprocessableEntityError;
    expect(err).toBeInstanceOf(UnprocessableEntityError);
    expect(err.detail).toEqual(detail);
    expect(err.message).toBe(
      `POST /v1/preview/models/${MODEL_ID}/log failed with status 422: body.split: Field required; body.trajectory_groups.0: Input should be a valid dict.`,
    );
  });

  it("masks the API key when the service echoes it, and does not double a full stop", async () => {
    nock(BASE)
      .get("/v1/health")
      .reply(401, { detail: `Invalid API key ${KEY}.` });
    const err = (await makeClient()
      .health()
      .catch((e: unknown) => e)) as APIError;
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.message).toBe("GET /v1/health failed with status 401: Invalid API key [redacted].");
    expect(JSON.stringify(err.body)).not.toContain(KEY);
  });

  it("an OpenAI-style error body and an empty body both read well", async () => {
    nock(BASE)
      .get("/v1/health")
      .reply(400, { error: { message: "bad thing" } });
    nock(BASE).get("/v1/system-check").reply(404, "");
    const client = makeClient();
    await expect(client.health()).rejects.toThrow(
      "GET /v1/health failed with status 400: bad thing.",
    );
    await expect(client.systemCheck()).rejects.toThrow(
      "GET /v1/system-check failed with status 404 and no error body.",
    );
  });
});

describe("retries", () => {
  it("retries 5xx, 408, 409 and 429 on GET, then succeeds", async () => {
    nock(BASE)
      .get("/v1/health")
      .reply(503, {}, fast)
      .get("/v1/health")
      .reply(408, {}, fast)
      .get("/v1/health")
      .reply(409, {}, fast)
      .get("/v1/health")
      .reply(429, {}, fast)
      .get("/v1/health")
      .reply(200, { status: "ok" });
    expect(await makeClient({ maxRetries: 4 }).health()).toEqual({ status: "ok" });
  });

  it("gives up after maxRetries and throws the last error", async () => {
    let calls = 0;
    nock(BASE)
      .get("/v1/health")
      .times(3)
      .reply(() => {
        calls++;
        return [500, { detail: "down" }, fast];
      });
    await expect(makeClient({ maxRetries: 2 }).health()).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(calls).toBe(3);
  });

  it("does not retry 400-class errors other than 408/409/429", async () => {
    nock(BASE).get("/v1/health").once().reply(404, {});
    await expect(makeClient({ maxRetries: 3 }).health()).rejects.toBeInstanceOf(NotFoundError);
  });

  it("retries connection errors on DELETE", async () => {
    nock(BASE)
      .delete(`/v1/preview/models/${MODEL_ID}`)
      .replyWithError({ code: "ECONNRESET", message: "socket hang up" })
      .delete(`/v1/preview/models/${MODEL_ID}`)
      .reply(200, { model_id: MODEL_ID, deleted_checkpoints: 0, deleted_run: false });
    const client = makeClient({ maxRetries: 1 });
    expect((await client.models.delete(MODEL_ID)).model_id).toBe(MODEL_ID);
  });

  it("never sends trainingJobs.create twice on its own", async () => {
    let calls = 0;
    nock(BASE)
      .post("/v1/preview/training-jobs")
      .reply(() => {
        calls++;
        return [503, { detail: "busy" }, fast];
      });
    const client = makeClient({ maxRetries: 5 });
    await expect(
      client.trainingJobs.create({ model_id: MODEL_ID, trajectory_groups: [group] }),
    ).rejects.toBeInstanceOf(InternalServerError);
    expect(calls).toBe(1);
  });

  it("never sends sftTrainingJobs.create twice on its own", async () => {
    nock(BASE)
      .post("/v1/preview/sft-training-jobs")
      .replyWithError({ code: "ECONNRESET", message: "reset" });
    const client = makeClient({ maxRetries: 5 });
    await expect(
      client.sftTrainingJobs.create({
        model_id: MODEL_ID,
        training_data_url: "wandb-artifact:///a/b/c:v0",
      }),
    ).rejects.toBeInstanceOf(APIConnectionError);
  });

  it("retries models.create only when return_existing makes it safe", async () => {
    const params = { project: "p", name: "n", base_model: "b" };
    const model = { id: MODEL_ID, entity: "e", ...params };
    let plain = 0;
    nock(BASE)
      .post("/v1/preview/models", params)
      .reply(() => {
        plain++;
        return [503, {}, fast];
      })
      .post("/v1/preview/models", { ...params, return_existing: true })
      .reply(503, {}, fast)
      .post("/v1/preview/models", { ...params, return_existing: true })
      .reply(200, model);
    const client = makeClient({ maxRetries: 3 });
    await expect(client.models.create(params)).rejects.toBeInstanceOf(InternalServerError);
    expect(plain).toBe(1);
    expect((await client.models.create({ ...params, return_existing: true })).id).toBe(MODEL_ID);
  });

  it("retries a training job creation when the caller marks it idempotent", async () => {
    nock(BASE)
      .post("/v1/preview/training-jobs")
      .reply(503, {}, fast)
      .post("/v1/preview/training-jobs")
      .reply(200, { id: JOB_ID });
    const client = makeClient({ maxRetries: 2 });
    const job = await client.trainingJobs.create(
      { model_id: MODEL_ID, trajectory_groups: [group] },
      { idempotent: true },
    );
    expect(job.id).toBe(JOB_ID);
  });

  it("honours Retry-After in seconds", async () => {
    nock(BASE)
      .get("/v1/health")
      .reply(429, {}, { "retry-after": "1" })
      .get("/v1/health")
      .reply(200, { status: "ok" });
    const start = Date.now();
    await makeClient({ maxRetries: 1 }).health();
    expect(Date.now() - start).toBeGreaterThanOrEqual(950);
  });

  it("retryDelay prefers the server's header and otherwise backs off exponentially with jitter", () => {
    expect(retryDelay(0, { headers: new Headers({ "retry-after-ms": "120" }) })).toBe(120);
    expect(retryDelay(0, { headers: new Headers({ "retry-after": "2" }) })).toBe(2000);
    const date = new Date(Date.now() + 3000).toUTCString();
    const fromDate = retryDelay(0, { headers: new Headers({ "retry-after": date }) });
    expect(fromDate).toBeGreaterThan(1000);
    expect(fromDate).toBeLessThanOrEqual(3000);
    expect(retryDelay(0, { random: () => 0 })).toBe(500);
    expect(retryDelay(2, { random: () => 0 })).toBe(2000);
    expect(retryDelay(2, { random: () => 0.999 })).toBeGreaterThan(1500);
    expect(retryDelay(10, { random: () => 0 })).toBe(8000);
    // An absurd Retry-After falls back to the backoff.
    expect(
      retryDelay(0, { headers: new Headers({ "retry-after": "86400" }), random: () => 0 }),
    ).toBe(500);
  });

  it("isRetryableError tells transient failures from permanent ones", () => {
    const t = { method: "GET", path: "/v1/health" };
    expect(isRetryableError(APIError.generate(t, 503, {}, new Headers()))).toBe(true);
    expect(isRetryableError(APIError.generate(t, 429, {}, new Headers()))).toBe(true);
    expect(isRetryableError(APIError.generate(t, 422, {}, new Headers()))).toBe(false);
    expect(
      isRetryableError(APIError.generate(t, 500, {}, new Headers({ "x-should-retry": "false" }))),
    ).toBe(false);
    expect(isRetryableError(new APIConnectionError(t, new Error("reset")))).toBe(true);
    expect(isRetryableError(new APIConnectionTimeoutError(t, 10))).toBe(true);
    expect(isRetryableError(new APIUserAbortError(t))).toBe(false);
    expect(isRetryableError(new Error("boom"))).toBe(false);
    expect(isRetryableError({ status: 502 })).toBe(true);
  });
});

describe("timeouts and aborts", () => {
  it("abortableSleep waits, and ends early with the signal's reason", async () => {
    const start = Date.now();
    await abortableSleep(30);
    expect(Date.now() - start).toBeGreaterThanOrEqual(25);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 10);
    await expect(abortableSleep(5_000, controller.signal)).rejects.toThrow("stop");
  });

  it("a slow answer becomes APIConnectionTimeoutError naming the limit", async () => {
    nock(BASE).get("/v1/health").delay(500).reply(200, { status: "ok" });
    const err = await makeClient({ timeout: 50 })
      .health()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionTimeoutError);
    expect((err as Error).message).toBe("GET /v1/health timed out after 50 ms.");
  });

  it("a timeout is retried for a safe request", async () => {
    nock(BASE)
      .get("/v1/health")
      .delay(500)
      .reply(200, { status: "late" })
      .get("/v1/health")
      .reply(200, { status: "ok" });
    expect(await makeClient({ timeout: 100, maxRetries: 1 }).health()).toEqual({ status: "ok" });
  });

  it("the caller's signal aborts with APIUserAbortError", async () => {
    nock(BASE).get("/v1/health").delay(500).reply(200, {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    await expect(
      makeClient({ maxRetries: 3 }).health({ signal: controller.signal }),
    ).rejects.toBeInstanceOf(APIUserAbortError);
  });
});
