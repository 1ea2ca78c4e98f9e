// What the client sends must be valid for both the older ("W&B Training") and
// the newer ("Serverless Training") OpenAPI documents of the service.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BASE, makeClient, useNock } from "./helpers.js";

useNock({ beforeAll, afterEach, afterAll });

type Json = Record<string, unknown>;
const DOCS = ["training-v1.json", "serverless-training.json"].map((file) => ({
  file,
  doc: JSON.parse(
    readFileSync(new URL(`../fixtures/openapi/${file}`, import.meta.url), "utf8"),
  ) as Json,
}));

const MODEL_ID = "3f0b6c1e-8a40-4c55-9d1e-6a1f5c3b2a10";
const trajectory = {
  messages_and_choices: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "2+2?" },
    {
      index: 0,
      finish_reason: "stop",
      message: { role: "assistant", content: "4" },
      logprobs: { content: [{ token: "4", logprob: -0.01, bytes: [52], top_logprobs: [] }] },
    },
  ],
  tools: [
    {
      type: "function",
      function: { name: "calc", description: "adds", parameters: { type: "object" } },
    },
  ],
  additional_histories: [],
  reward: 1,
  metrics: { correct: 1 },
  metadata: { task: "math" },
  logs: ["ok"],
  start_time: "2026-01-01T00:00:00Z",
};

interface Captured {
  method: string;
  path: string;
  body: unknown;
  query: Record<string, string>;
}

/** Records every request the client makes, answering each with `reply`. */
function capture(
  method: "post" | "delete" | "get",
  path: string | RegExp,
  reply: unknown,
  into: Captured[],
) {
  nock(BASE)
    .intercept(path, method.toUpperCase())
    .query(true)
    .reply((uri, body) => {
      const url = new URL(uri, BASE);
      into.push({
        method: method.toUpperCase(),
        path: url.pathname,
        body: typeof body === "string" && body !== "" ? JSON.parse(body) : body || undefined,
        query: Object.fromEntries(url.searchParams),
      });
      return [200, reply];
    });
}

/** Runs one call of every endpoint that takes a body or query, capturing what is sent. */
async function sendEverything(): Promise<Captured[]> {
  const sent: Captured[] = [];
  const client = makeClient();
  const model = {
    id: MODEL_ID,
    entity: "me",
    project: "demo",
    name: "agent",
    base_model: "Qwen/Qwen3-4B",
    run_id: "r",
  };
  capture("post", "/v1/preview/models", model, sent);
  await client.models.create({
    project: "demo",
    name: "agent",
    base_model: "Qwen/Qwen3-4B",
    entity: null,
    return_existing: true,
  });
  capture("post", `/v1/preview/models/${MODEL_ID}/log`, {}, sent);
  await client.models.log(MODEL_ID, {
    split: "val",
    trajectory_groups: [{ trajectories: [trajectory] }],
  });
  capture(
    "delete",
    `/v1/preview/models/${MODEL_ID}/checkpoints`,
    { deleted_count: 1, not_found_steps: [] },
    sent,
  );
  await client.models.checkpoints.delete(MODEL_ID, { steps: [1, 2] });
  capture("get", `/v1/preview/models/${MODEL_ID}/checkpoints`, { data: [], has_more: false }, sent);
  await client.models.checkpoints.list(MODEL_ID, { after: "c1", limit: 100, order: "desc" });
  capture("post", "/v1/preview/training-jobs", { id: MODEL_ID }, sent);
  await client.trainingJobs.create({
    model_id: MODEL_ID,
    trajectory_groups: [{ trajectories: [trajectory, { ...trajectory, reward: 0 }] }],
    experimental_config: {
      advantage_balance: 0,
      epsilon: null,
      epsilon_high: null,
      importance_sampling_level: "token",
      kimi_k2_tau: null,
      learning_rate: 5e-6,
      mask_prob_ratio: false,
      max_negative_advantage_importance_sampling_weight: null,
      ppo: false,
      precalculate_logprobs: false,
      scale_rewards: true,
    },
  });
  capture("post", "/v1/preview/sft-training-jobs", { id: MODEL_ID }, sent);
  await client.sftTrainingJobs.create({
    model_id: MODEL_ID,
    training_data_url: "wandb-artifact:///me/demo/agent-sft-data:v0",
    config: { batch_size: 2, learning_rate: [1e-5, 2e-5] },
  });
  capture(
    "get",
    `/v1/preview/training-jobs/${MODEL_ID}/events`,
    { data: [], has_more: false },
    sent,
  );
  await client.trainingJobs.events.list(MODEL_ID, { after: "e1", limit: 10 });
  capture(
    "post",
    "/v1/chat/completions",
    { id: "c", object: "chat.completion", created: 1, model: "m", choices: [] },
    sent,
  );
  await client.chat.completions.create({
    model: "wandb-artifact:///me/demo/agent:step3",
    messages: [
      { role: "developer", content: "Be brief." },
      { role: "user", content: "2+2?" },
    ],
    logprobs: true,
    top_logprobs: 2,
    max_completion_tokens: 64,
    temperature: 0.7,
    tools: [{ type: "function", function: { name: "calc", parameters: { type: "object" } } }],
    tool_choice: "auto",
    top_k: 20,
    min_p: 0.05,
    repetition_penalty: 1.1,
    return_token_ids: true,
    chat_template_kwargs: { enable_thinking: false },
    stop_token_ids: [2],
  });
  return sent;
}

/** The OpenAPI path template matching a concrete path (`{x}` is one segment). */
function operationFor(doc: Json, method: string, path: string): Json {
  const paths = doc.paths as Record<string, Record<string, Json>>;
  for (const [template, ops] of Object.entries(paths)) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    const op = ops[method.toLowerCase()];
    if (re.test(path) && op) return op;
  }
  throw new Error(`${method} ${path} is not an operation of this document`);
}

function pointer(...parts: string[]): string {
  return parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
}

describe("requests validate against both OpenAPI documents", async () => {
  const sent = await (async () => {
    nock.disableNetConnect();
    return sendEverything();
  })();

  it("covers every operation with a body or query", () => {
    expect(sent.map((s) => `${s.method} ${s.path.replace(MODEL_ID, "{id}")}`)).toEqual([
      "POST /v1/preview/models",
      "POST /v1/preview/models/{id}/log",
      "DELETE /v1/preview/models/{id}/checkpoints",
      "GET /v1/preview/models/{id}/checkpoints",
      "POST /v1/preview/training-jobs",
      "POST /v1/preview/sft-training-jobs",
      "GET /v1/preview/training-jobs/{id}/events",
      "POST /v1/chat/completions",
    ]);
  });

  for (const { file, doc } of DOCS) {
    it(`every body and query is valid for ${file}, with no undeclared top-level keys`, () => {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats.default(ajv);
      ajv.addSchema(doc, "doc");
      const problems: string[] = [];
      for (const req of sent) {
        const template = Object.keys(doc.paths as Json).find((t) =>
          new RegExp(`^${t.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(req.path),
        ) as string;
        const op = operationFor(doc, req.method, req.path);
        const where = `${req.method} ${template}`;
        if (req.body !== undefined) {
          const ref = `doc#/${pointer("paths", template, req.method.toLowerCase(), "requestBody", "content", "application/json", "schema")}`;
          const validate = ajv.compile({ $ref: ref });
          if (!validate(req.body)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
          const schema = resolve(doc, ajv.getSchema(ref)?.schema as Json);
          const declared = schema.properties as Json | undefined;
          if (declared && schema.additionalProperties !== true) {
            for (const key of Object.keys(req.body as Json)) {
              if (!(key in declared)) problems.push(`${where}: body key ${key} is not declared`);
            }
          }
        }
        const params = (op.parameters ?? []) as { name: string; in: string; schema: Json }[];
        for (const [name, value] of Object.entries(req.query)) {
          const param = params.find((p) => p.in === "query" && p.name === name);
          if (!param) {
            problems.push(`${where}: query ${name} is not declared`);
            continue;
          }
          const typed = param.schema.type === "integer" ? Number(value) : value;
          const validate = ajv.compile(param.schema);
          if (!validate(typed))
            problems.push(`${where}: query ${name}: ${ajv.errorsText(validate.errors)}`);
        }
      }
      expect(problems).toEqual([]);
    });
  }

  it("the validator does catch a bad body (control)", () => {
    const { doc } = DOCS[0] as { doc: Json };
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema(doc, "doc");
    const ref = `doc#/${pointer("paths", "/v1/preview/training-jobs", "post", "requestBody", "content", "application/json", "schema")}`;
    const validate = ajv.compile({ $ref: ref });
    expect(validate({ model_id: "not-a-uuid", trajectory_groups: [] })).toBe(false);
    expect(
      validate({ model_id: MODEL_ID, trajectory_groups: [{ trajectories: [trajectory] }] }),
    ).toBe(true);
  });
});

/** Follows a `$ref` to the components schema it names, one level. */
function resolve(doc: Json, schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  const name = ref.split("/").at(-1) as string;
  return ((doc.components as Json).schemas as Json)[name] as Json;
}
