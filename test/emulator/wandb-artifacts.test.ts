// SFT data through W&B artifacts, end to end and offline: trainSft uploads the
// data as a dataset artifact to the emulator's W&B API (same port), the
// emulator resolves the `wandb-artifact:///` URL, trains, and the model learns.

import { hostname } from "node:os";
import {
  TrainableModel,
  TrainingClient,
  TrainingFailedError,
  Trajectory,
  WandbArtifactUploader,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { WandbApiError } from "trajectory-recorder/errors";
import { afterAll, beforeAll, expect, it } from "vitest";
import { USER_AGENT } from "../../src/client/index.js";

const KEYS = { "alice-key-0123": "alice", "bob-key-4567": "bob" };
let emu: Emulator;
let origin: string;
let client: TrainingClient;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: KEYS });
  origin = new URL(emu.url).origin;
  client = new TrainingClient({ apiKey: "alice-key-0123", baseURL: emu.url });
});
afterAll(async () => {
  await emu.close();
});

const fast = { pollIntervalMs: 10 };
const examples = ["red", "cat", "apple", "two"].map(
  (w) =>
    new Trajectory({
      messages_and_choices: [
        { role: "user", content: `say ${w}` },
        {
          index: 0,
          finish_reason: "stop",
          logprobs: null,
          message: { role: "assistant", content: `${w} ${w}` },
        },
      ],
    }),
);

/** Records every request an uploader makes, then lets it through. */
function recording() {
  const seen: { method: string; url: string; headers: Headers; body: any }[] = [];
  const recorder: typeof fetch = async (input, init) => {
    const raw = init?.body;
    const body =
      typeof raw === "string"
        ? raw
        : raw instanceof Uint8Array
          ? Buffer.from(raw).toString("utf8")
          : undefined;
    seen.push({
      method: init?.method ?? "GET",
      url: String(input),
      headers: new Headers(init?.headers),
      body: init?.method === "POST" && body ? JSON.parse(body) : body,
    });
    return fetch(input, init);
  };
  return { seen, fetch: recorder };
}

it("trains SFT with no uploader given: the data goes to a W&B dataset artifact the emulator serves", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "sft",
    baseModel: "t",
  });
  const types: string[] = [];
  const result = await model.trainSft(
    examples,
    { batchSize: 2, learningRate: 1e-4 },
    { ...fast, onEvent: (e) => types.push(e.type) },
  );
  expect(types).toEqual(["training_started", "gradient_step", "gradient_step", "training_ended"]);
  expect(result.step).toBe(1);
  const answer = await model.openai().chat.completions.create({
    model: "",
    messages: [{ role: "user", content: "say apple" }],
    temperature: 0,
  });
  expect(answer.choices[0]?.message.content?.split(" ")[0]).toBe("apple");
});

it("saves the artifact the way the wandb client does and returns ART's wandb-artifact URL", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "proto",
    baseModel: "t",
  });
  const { seen, fetch: recorder } = recording();
  const urls: string[] = [];
  const uploader = new WandbArtifactUploader({
    apiKey: "alice-key-0123",
    baseUrl: origin,
    fetch: recorder,
  });
  await model.trainSft(
    examples.slice(0, 2),
    {},
    {
      ...fast,
      uploader: {
        async upload(artifact, options) {
          const url = await uploader.upload(artifact, options);
          urls.push(url);
          return url;
        },
      },
    },
  );
  expect(urls[0]).toMatch(/^wandb-artifact:\/\/\/alice\/p\/proto-sft-data-[0-9a-f]{12}:v0$/);
  const steps = seen.map((r) =>
    r.method === "PUT" ? "PUT" : (r.body.operationName ?? new URL(r.url).pathname),
  );
  expect(steps).toEqual([
    "UpsertBucket",
    "ArtifactType",
    "CreateArtifact",
    "CreateArtifactManifest",
    "CreateArtifactFiles",
    "PUT",
    "CreateArtifactManifest",
    "PUT",
    "CommitArtifact",
    "ArtifactByID",
    `/files/alice/p/${model.runId}/file_stream`,
  ]);
  // Upload URLs are signed without a Content-Type: none is sent.
  for (const r of seen.filter((r) => r.method === "PUT"))
    expect(r.headers.get("content-type")).toBeNull();
  expect(seen.at(-1)?.body).toEqual({ complete: true, exitcode: 0 });
  for (const r of seen.filter((r) => r.method === "POST")) {
    if (r.url.endsWith("/file_stream")) continue;
    expect(r.url).toBe(`${origin}/graphql`);
    expect(r.headers.get("user-agent")).toBe(USER_AGENT);
    expect(r.headers.get("authorization")).toBe(
      `Basic ${Buffer.from("api:alice-key-0123").toString("base64")}`,
    );
  }
  expect(seen[0]?.body.variables).toEqual({
    name: model.runId,
    project: "p",
    entity: "alice",
    displayName: "proto",
    host: hostname(),
  });
  const input = seen[2]?.body.variables;
  expect(input).toMatchObject({
    entityName: "alice",
    projectName: "p",
    runName: model.runId,
    artifactTypeName: "dataset",
    artifactCollectionName: urls[0]?.slice("wandb-artifact:///alice/p/".length, -3),
  });
  expect(JSON.parse(input.metadata)).toEqual({ format: "jsonl", num_trajectories: 2 });
  expect(seen[4]?.body.variables.input.artifactFiles[0].name).toBe("train.jsonl");
  const jsonl = seen[5]?.body as string;
  expect(
    jsonl
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).messages[0].content),
  ).toEqual(["say red", "say cat"]);
  const manifest = JSON.parse(seen[7]?.body as string);
  expect(Object.keys(manifest.contents)).toEqual(["train.jsonl"]);
  expect(manifest.contents["train.jsonl"].size).toBe(Buffer.byteLength(jsonl));
});

it("numbers the versions of one name, and saves the same content only once", async () => {
  const uploader = new WandbArtifactUploader({ apiKey: "alice-key-0123", baseUrl: origin });
  const line = (w: string) =>
    `${JSON.stringify({
      messages: [
        { role: "user", content: `say ${w}` },
        { role: "assistant", content: w },
      ],
    })}\n`;
  const save = (data: string) =>
    uploader.upload({
      name: "shared.jsonl",
      data,
      contentType: "application/jsonl",
      owner: { entity: "alice", project: "p", run: "r" },
    });
  expect(await save(line("red"))).toBe("wandb-artifact:///alice/p/shared:v0");
  expect(await save(line("cat"))).toBe("wandb-artifact:///alice/p/shared:v1");
  const { seen, fetch: recorder } = recording();
  const again = new WandbArtifactUploader({
    apiKey: "alice-key-0123",
    baseUrl: origin,
    fetch: recorder,
  });
  const url = await again.upload({
    name: "shared.jsonl",
    data: line("red"),
    contentType: "application/jsonl",
    owner: { entity: "alice", project: "p", run: "r" },
  });
  expect(url).toBe("wandb-artifact:///alice/p/shared:v0");
  expect(seen.map((r) => r.body.operationName ?? "file_stream")).toEqual([
    "UpsertBucket",
    "ArtifactType",
    "CreateArtifact",
    "ArtifactByID",
    "file_stream",
  ]);
  // SFT jobs resolve each version, and the latest; a version never saved fails the job.
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "ver",
    baseModel: "t",
  });
  const train = (version: string) =>
    model.trainSft(
      examples,
      {},
      {
        ...fast,
        uploader: { upload: async () => `wandb-artifact:///alice/p/shared:${version}` },
      },
    );
  await expect(train("v1")).resolves.toMatchObject({ step: 1 });
  await expect(train("latest")).resolves.toMatchObject({ step: 2 });
  await expect(train("v2")).rejects.toThrow(/No committed W&B artifact alice\/p\/shared:v2/);
});

it("fails the SFT job, after it started, when the artifact belongs to another entity", async () => {
  const bob = new TrainingClient({ apiKey: "bob-key-4567", baseURL: emu.url });
  const bobs = await TrainableModel.register(bob, { project: "p", name: "b", baseModel: "t" });
  const url = await new WandbArtifactUploader({ apiKey: "bob-key-4567", baseUrl: origin }).upload({
    name: "b-sft-data-000000000000.jsonl",
    data: `${JSON.stringify({
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: "y" },
      ],
    })}\n`,
    contentType: "application/jsonl",
    owner: { entity: "bob", project: "p", run: bobs.runId ?? "b" },
  });
  expect(url).toBe("wandb-artifact:///bob/p/b-sft-data-000000000000:v0");
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "nosy",
    baseModel: "t",
  });
  const types: string[] = [];
  const error = await model
    .trainSft(
      examples,
      {},
      {
        ...fast,
        uploader: { upload: async () => url },
        onEvent: (e) => types.push(e.type),
      },
    )
    .catch((e) => e);
  expect(error).toBeInstanceOf(TrainingFailedError);
  expect(error.message).toMatch(/No committed W&B artifact bob\/p\/b-sft-data-000000000000:v0/);
  expect(types).toEqual(["training_started", "training_failed"]);
});

it("refuses to write another entity's artifact, and a key it does not know, without echoing the key", async () => {
  const asBob = new WandbArtifactUploader({ apiKey: "bob-key-4567", baseUrl: origin });
  const artifact = {
    name: "x.jsonl",
    data: "{}\n",
    contentType: "application/jsonl",
    owner: { entity: "alice", project: "p", run: "r" },
  };
  const denied = await asBob.upload(artifact).catch((e) => e);
  expect(denied).toBeInstanceOf(WandbApiError);
  expect(denied.operation).toBe("UpsertBucket");
  expect(denied.message).toMatch(/belongs to entity bob, not alice/);
  const unknown = new WandbArtifactUploader({ apiKey: "wrong-key-999999", baseUrl: origin });
  const rejected = await unknown.upload(artifact).catch((e) => e);
  expect(rejected).toBeInstanceOf(WandbApiError);
  expect(rejected.status).toBe(401);
  expect(rejected.message).not.toContain("wrong-key-999999");
});

it("takes its key and base URL from WANDB_API_KEY and WANDB_BASE_URL, and keeps keys off clear-text remote hosts", () => {
  const saved = { key: process.env.WANDB_API_KEY, url: process.env.WANDB_BASE_URL };
  try {
    process.env.WANDB_API_KEY = "env-key-01234567";
    process.env.WANDB_BASE_URL = `${origin}/`;
    expect(new WandbArtifactUploader().baseUrl).toBe(origin);
    delete process.env.WANDB_BASE_URL;
    expect(new WandbArtifactUploader().baseUrl).toBe("https://api.wandb.ai");
    expect(() => new WandbArtifactUploader({ baseUrl: "http://wandb.example.com" })).toThrow(
      /expected an https:\/\/ base URL/,
    );
    delete process.env.WANDB_API_KEY;
    expect(() => new WandbArtifactUploader()).toThrow(/WANDB_API_KEY/);
  } finally {
    for (const [name, value] of [
      ["WANDB_API_KEY", saved.key],
      ["WANDB_BASE_URL", saved.url],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});
