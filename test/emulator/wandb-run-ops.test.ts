// The run operations of the emulator's W&B API that the real `wandb` client
// sends around an artifact upload (RunResumeStatus, Viewer,
// ServerFeaturesQuery, CreateRunFiles and its PUTs), checked without Python;
// wandb-python-client.test.ts drives them with the real client.
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";

const KEY = "alice-key-0123";
let emu: Emulator;
let origin: string;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "alice", "bob-key": "bob" } });
  origin = new URL(emu.url).origin;
});
afterAll(() => emu.close());

async function gql(query: string, variables: Record<string, unknown> = {}, key = KEY) {
  const res = await fetch(`${origin}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Basic ${Buffer.from(`api:${key}`).toString("base64")}`,
    },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { data: any; errors?: { message: string }[] };
}

const RESUME = `query RunResumeStatus($project: String, $entity: String, $name: String!) {
  model(name: $project, entityName: $entity) { id name entity { id name }
    bucket(name: $name, missingOk: true) { id name summaryMetrics displayName logLineCount
      historyLineCount eventsLineCount historyTail eventsTail config tags notes wandbConfig(keys: ["t"]) } } }`;
const UPSERT = `mutation UpsertBucket($name: String, $project: String, $entity: String, $config: JSONString, $tags: [String!], $notes: String) {
  upsertBucket(input: { name: $name, modelName: $project, entityName: $entity, config: $config, tags: $tags, notes: $notes }) {
    bucket { id name config historyLineCount } inserted } }`;
const RUN_FILES = `mutation CreateRunFiles($entity: String!, $project: String!, $run: String!, $files: [String!]!) {
  createRunFiles(input: {entityName: $entity, projectName: $project, runName: $run, files: $files}) {
    runID uploadHeaders files { name uploadUrl } } }`;

it("answers RunResumeStatus as W&B: no project, no run, then the run to resume", async () => {
  const vars = { project: "resume", entity: "alice", name: "r1" };
  expect((await gql(RESUME, vars)).data).toEqual({ model: null });
  const config = JSON.stringify({ lr: { value: 0.1 }, _wandb: { value: { t: { "1": [1] } } } });
  const up = await gql(UPSERT, { ...vars, config, tags: ["a"], notes: "n" });
  expect(up.data.upsertBucket.inserted).toBe(true);
  expect(JSON.parse(up.data.upsertBucket.bucket.config)).toEqual(JSON.parse(config));
  // Another run of a known project: the project, no bucket.
  expect((await gql(RESUME, { ...vars, name: "other" })).data.model.bucket).toBeNull();
  // The file_stream's summary, history and events are what a resume starts from.
  const stream = await fetch(`${origin}/files/alice/resume/r1/file_stream`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Basic ${Buffer.from(`api:${KEY}`).toString("base64")}`,
    },
    body: JSON.stringify({
      files: {
        "wandb-history.jsonl": {
          offset: 0,
          content: ['{"_step":0,"loss":1}', '{"_step":1,"loss":0.5}'],
        },
        "wandb-summary.json": { offset: 0, content: ['{"_step":1,"loss":0.5}'] },
        "output.log": { offset: 0, content: ["hello"] },
      },
    }),
  });
  expect(stream.status).toBe(200);
  const bucket = (await gql(RESUME, vars)).data.model.bucket;
  expect(bucket).toMatchObject({
    name: "r1",
    historyLineCount: 2,
    eventsLineCount: 0,
    logLineCount: 1,
    tags: ["a"],
    notes: "n",
  });
  expect(JSON.parse(bucket.summaryMetrics)).toEqual({ _step: 1, loss: 0.5 });
  expect(JSON.parse(bucket.historyTail).at(-1)).toBe('{"_step":1,"loss":0.5}');
  expect(JSON.parse(bucket.eventsTail)).toEqual([]);
  expect(JSON.parse(bucket.wandbConfig)).toEqual({ t: { "1": [1] } });
  expect(JSON.parse(bucket.config).lr).toEqual({ value: 0.1 });
  // Another entity's key reads none of it.
  const bob = await gql(RESUME, vars, "bob-key");
  expect(bob.errors?.[0]?.message).toMatch(/belongs to entity bob/);
});

it("answers Viewer and ServerFeaturesQuery", async () => {
  const viewer = await gql(
    "query Viewer { viewer { id entity username email flags teams { edges { node { name } } } } }",
  );
  expect(viewer.data.viewer).toMatchObject({
    entity: "alice",
    username: "alice",
    teams: { edges: [] },
  });
  const features = await gql(
    "query ServerFeaturesQuery { serverInfo { features { name isEnabled } } }",
  );
  expect(features.data).toEqual({ serverInfo: { features: [] } });
});

it("hands out signed upload URLs for a run's files, and checks the PUT", async () => {
  await gql(UPSERT, { project: "files", entity: "alice", name: "r2" });
  const missing = await gql(RUN_FILES, {
    entity: "alice",
    project: "files",
    run: "nope",
    files: ["a"],
  });
  expect(missing.errors?.[0]?.message).toMatch(/no run alice\/files\/nope/);
  const r = await gql(RUN_FILES, {
    entity: "alice",
    project: "files",
    run: "r2",
    files: ["config.yaml", "wandb-summary.json"],
  });
  const files = r.data.createRunFiles.files as { name: string; uploadUrl: string }[];
  expect(files.map((f) => f.name)).toEqual(["config.yaml", "wandb-summary.json"]);
  const ok = await fetch(files[0]!.uploadUrl, { method: "PUT", body: Buffer.from("lr: 0.1\n") });
  expect(ok.status).toBe(200);
  // The signature covers Content-Type: a header the URL was not signed with is refused.
  const bad = await fetch(files[1]!.uploadUrl, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  expect(bad.status).toBe(403);
  expect(await bad.text()).toMatch(/SignatureDoesNotMatch/);
  const marked = await gql(
    "mutation MarkRunFilesUploaded($entity: String!, $project: String!, $run: String!, $files: [String!]!) { markRunFilesUploaded(input: {entityName: $entity, projectName: $project, runName: $run, files: $files}) { success } }",
    { entity: "alice", project: "files", run: "r2", files: ["config.yaml"] },
  );
  expect(marked.data).toEqual({ markRunFilesUploaded: { success: true } });
});
