import {
  ChatCompletionCreateParamsSchema,
  ChatEngineParamsSchema,
  CheckpointPageSchema,
  ExperimentalTrainingConfigSchema,
  formatZodPath,
  HTTPValidationErrorSchema,
  LogParamsSchema,
  ModelCreateParamsSchema,
  ModelSchema,
  PaginatedResponseSchema,
  TrainingJobCreateParamsSchema,
  TrainingJobEventSchema,
  zodIssuesToValidationItems,
} from "trajectory-recorder/wire";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const MODEL_ID = "3f0b6c1e-8a40-4c55-9d1e-6a1f5c3b2a10";

describe("response schemas keep what the service adds", () => {
  it("a model keeps unknown fields and accepts a missing run_id", () => {
    const parsed = ModelSchema.parse({
      id: MODEL_ID,
      entity: "me",
      project: "p",
      name: "n",
      base_model: "b",
      color: "blue",
    });
    expect(parsed).toMatchObject({ color: "blue" });
    expect(parsed.run_id).toBeUndefined();
  });

  it("a page fills the documented defaults and keeps extra fields on items", () => {
    const page = CheckpointPageSchema.parse({
      data: [{ id: "c", step: 1, metrics: {}, uri: "x" }],
    });
    expect(page).toMatchObject({ object: "list", has_more: false, data: [{ uri: "x" }] });
    const custom = PaginatedResponseSchema(z.object({ id: z.string() })).safeParse({
      has_more: true,
    });
    expect(custom.success).toBe(false);
  });

  it("an event keeps a type this client does not know, but must have one", () => {
    expect(
      TrainingJobEventSchema.safeParse({ id: "e", type: "gradient_step", data: {} }).success,
    ).toBe(true);
    expect(TrainingJobEventSchema.parse({ id: "e", type: "paused" })).toEqual({
      id: "e",
      type: "paused",
      data: {},
    });
    expect(TrainingJobEventSchema.safeParse({ id: "e", data: {} }).success).toBe(false);
  });

  it("a 422 body parses into loc/msg/type items", () => {
    const body = { detail: [{ loc: ["body", "steps", 0], msg: "bad", type: "int_type" }] };
    expect(HTTPValidationErrorSchema.parse(body).detail[0]?.loc).toEqual(["body", "steps", 0]);
  });
});

describe("request schemas refuse what the service would", () => {
  it("model creation needs project, name and base_model and refuses unknown keys", () => {
    const r = ModelCreateParamsSchema.safeParse({ project: "p", nam: "n" });
    expect(r.success).toBe(false);
    const paths = r.error?.issues.map((i) => formatZodPath(i.path));
    expect(paths).toEqual(expect.arrayContaining(["name", "base_model", "(root)"]));
  });

  it("ExperimentalTrainingConfig has the 25 documented keys, each optional and nullable", () => {
    const keys = Object.keys(ExperimentalTrainingConfigSchema.shape);
    expect(keys).toHaveLength(25);
    const allNull = Object.fromEntries(keys.map((k) => [k, null]));
    expect(ExperimentalTrainingConfigSchema.parse(allNull)).toEqual(allNull);
    expect(ExperimentalTrainingConfigSchema.parse({})).toEqual({});
    expect(
      ExperimentalTrainingConfigSchema.safeParse({ importance_sampling_level: "word" }).success,
    ).toBe(false);
    expect(ExperimentalTrainingConfigSchema.safeParse({ kl_penalty_step_lag: 0 }).success).toBe(
      false,
    );
  });

  it("a training job needs at least one group", () => {
    const r = TrainingJobCreateParamsSchema.safeParse({
      model_id: MODEL_ID,
      trajectory_groups: [],
    });
    expect(r.success).toBe(false);
  });

  it("log requires split and groups", () => {
    const r = LogParamsSchema.safeParse({ trajectory_groups: [] });
    expect(r.error?.issues.map((i) => i.path.join("."))).toEqual(["split"]);
  });

  it("chat params type the engine fields and let unknown keys through", () => {
    expect(Object.keys(ChatEngineParamsSchema.shape)).toEqual(
      expect.arrayContaining([
        "top_k",
        "min_p",
        "return_token_ids",
        "chat_template_kwargs",
        "vllm_xargs",
        "repetition_detection",
        "structured_outputs",
        "priority",
        "cache_salt",
      ]),
    );
    const ok = ChatCompletionCreateParamsSchema.parse({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      future_field: 1,
    });
    expect(ok).toMatchObject({ future_field: 1 });
    const bad = ChatCompletionCreateParamsSchema.safeParse({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      reasoning_effort: "max",
    });
    expect(bad.success).toBe(false);
  });
});

describe("zod errors as FastAPI validation items", () => {
  it("prefixes loc with the location and names missing fields 'missing'", () => {
    const r = LogParamsSchema.safeParse({ split: 3, trajectory_groups: [{}], extra: 1 });
    expect(r.success).toBe(false);
    const items = zodIssuesToValidationItems(r.error as z.ZodError, "body");
    expect(items).toEqual(
      expect.arrayContaining([
        {
          loc: ["body", "split"],
          msg: expect.stringContaining("expected string"),
          type: "invalid_type",
        },
        {
          loc: ["body", "trajectory_groups", 0, "trajectories"],
          msg: expect.any(String),
          type: "missing",
        },
        { loc: ["body"], msg: expect.stringContaining("extra"), type: "extra_forbidden" },
      ]),
    );
  });

  it("formatZodPath renders indexes in brackets", () => {
    expect(formatZodPath(["trajectory_groups", 0, "trajectories", 2, "reward"])).toBe(
      "trajectory_groups[0].trajectories[2].reward",
    );
    expect(formatZodPath([])).toBe("(root)");
  });
});
