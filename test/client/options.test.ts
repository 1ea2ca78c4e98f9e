import { inspect } from "node:util";
import nock from "nock";
import { inferenceModelName, TrainingClient } from "trajectory-recorder";
import { MissingAPIKeyError } from "trajectory-recorder/errors";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_BASE_URL } from "../../src/client/index.js";
import { BASE, KEY, makeClient, useNock } from "./helpers.js";

useNock({ beforeAll, afterEach, afterAll });

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("construction and environment fallbacks", () => {
  it("reads WANDB_API_KEY and TRAINING_SERVICE_BASE_URL when options are absent", async () => {
    vi.stubEnv("WANDB_API_KEY", "env-key-123");
    vi.stubEnv("TRAINING_SERVICE_BASE_URL", "http://env.test/v1/");
    nock("http://env.test", { reqheaders: { authorization: "Bearer env-key-123" } })
      .get("/v1/health")
      .reply(200, { status: "ok" });
    const client = new TrainingClient();
    expect(client.baseURL).toBe("http://env.test/v1");
    expect(await client.health()).toEqual({ status: "ok" });
  });

  it("defaults to the public base URL", () => {
    vi.stubEnv("TRAINING_SERVICE_BASE_URL", "");
    expect(new TrainingClient({ apiKey: "k" }).baseURL).toBe(DEFAULT_BASE_URL);
    expect(DEFAULT_BASE_URL).toBe("https://api.training.wandb.ai/v1");
  });

  it("options win over the environment", () => {
    vi.stubEnv("TRAINING_SERVICE_BASE_URL", "http://env.test/v1");
    expect(new TrainingClient({ apiKey: "k", baseURL: "http://opt.test/v1" }).baseURL).toBe(
      "http://opt.test/v1",
    );
  });

  it("a missing key is a clear error at construction", () => {
    vi.stubEnv("WANDB_API_KEY", "");
    expect(() => new TrainingClient()).toThrow(MissingAPIKeyError);
    expect(() => new TrainingClient()).toThrow(/pass \{ apiKey \} or set the WANDB_API_KEY/);
  });

  it("sends defaultHeaders, per-call headers and a custom fetch", async () => {
    const seen: string[] = [];
    const fetchSpy: typeof fetch = (input, init) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    nock(BASE, { reqheaders: { "x-team": "a", "x-call": "b", authorization: `Bearer ${KEY}` } })
      .get("/v1/health")
      .reply(200, {});
    const client = makeClient({ defaultHeaders: { "x-team": "a" }, fetch: fetchSpy });
    await client.health({ headers: { "x-call": "b" } });
    expect(seen).toEqual([`${BASE}/v1/health`]);
  });
});

describe("the API key never leaks", () => {
  it("is absent from JSON.stringify, util.inspect and every error message", async () => {
    const client = makeClient({ maxRetries: 0 });
    client.chat.completions; // touch the lazy openai client path
    expect(JSON.stringify(client)).not.toContain(KEY);
    expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(KEY);

    nock(BASE)
      .get("/v1/health")
      .reply(401, (_uri, _body) => ({ detail: "Invalid token" }))
      .get("/v1/system-check")
      .replyWithError("connection refused");
    nock(BASE).post("/v1/chat/completions").reply(401, { detail: "Invalid token" });
    const errors = await Promise.all([
      client.health().catch((e: unknown) => e),
      client.systemCheck().catch((e: unknown) => e),
      client.chat.completions
        .create({ model: "m", messages: [{ role: "user", content: "x" }] }, { maxRetries: 0 })
        .catch((e: unknown) => e),
      client.models.create({ project: "", name: "", base_model: "" }).catch((e: unknown) => e),
    ]);
    for (const err of errors) {
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).not.toContain(KEY);
      expect(inspect(err, { depth: 10 })).not.toContain(KEY);
      expect(JSON.stringify(err)).not.toContain(KEY);
    }
    expect(inspect(client, { depth: 10, showHidden: true })).not.toContain(KEY);
  });
});

describe("inferenceModelName", () => {
  it("names the latest checkpoint or a pinned step", () => {
    expect(inferenceModelName({ entity: "me", project: "demo", name: "agent" })).toBe(
      "wandb-artifact:///me/demo/agent",
    );
    expect(inferenceModelName({ entity: "me", project: "demo", name: "agent", step: 0 })).toBe(
      "wandb-artifact:///me/demo/agent:step0",
    );
    expect(inferenceModelName({ entity: "me", project: "demo", name: "agent", step: 5 })).toBe(
      "wandb-artifact:///me/demo/agent:step5",
    );
  });

  it("refuses parts that would make a wrong path", () => {
    expect(() => inferenceModelName({ entity: "", project: "p", name: "n" })).toThrow(/entity/);
    expect(() => inferenceModelName({ entity: "e", project: "a/b", name: "n" })).toThrow(/project/);
    expect(() => inferenceModelName({ entity: "e", project: "p", name: "n", step: -1 })).toThrow(
      /step/,
    );
  });
});
