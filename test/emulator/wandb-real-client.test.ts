// The emulator's W&B API as strict as the real one: it serves the request
// sequence the real `wandb` client sends for ART's `_train_sft` (recorded as a
// fixture from the client's GraphQL documents), its upload URLs are checked
// like GCS V2 signed URLs, and bad or unauthenticated input never reaches a
// 500 or an unbounded read.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { TrainableModel, TrainingClient, Trajectory } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { manifestDigest } from "../../src/training/index.js";

const KEY = "alice-key-0123";
const basic = (key: string) => `Basic ${Buffer.from(`api:${key}`).toString("base64")}`;
let emu: Emulator;
let origin: string;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: { [KEY]: "alice" } });
  origin = new URL(emu.url).origin;
});
afterAll(async () => {
  await emu.close();
});
afterEach(() => {
  vi.useRealTimers();
});

async function graphql(body: unknown, key: string | null = KEY) {
  const res = await fetch(`${origin}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: basic(key) } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const lines = ["red", "cat"]
  .map((w) =>
    JSON.stringify({
      messages: [
        { role: "user", content: `say ${w}` },
        { role: "assistant", content: `${w} ${w}` },
      ],
    }),
  )
  .join("\n")
  .concat("\n");
const md5 = (data: string) => createHash("md5").update(data).digest("base64");

type Values = Record<string, unknown>;
function fill(value: unknown, values: Values): unknown {
  if (typeof value === "string") {
    const whole = /^\{\{(\w+)\}\}$/.exec(value);
    if (whole) return values[whole[1] as string];
    return value.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(values[k]));
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, values));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, values)]));
  return value;
}
const at = (json: unknown, where: string) =>
  where.split(".").reduce<any>((v, k) => (v == null ? undefined : v[k]), json);

/** Replays the recorded real-client sequence; returns each step's status. */
async function replay(values: Values, tamper?: (headers: Record<string, string>) => void) {
  const fixture = JSON.parse(
    await readFile(
      new URL("../fixtures/wandb/real-client-sft-upload.json", import.meta.url),
      "utf8",
    ),
  );
  const statuses: string[] = [];
  for (const step of fixture.steps) {
    if (step.kind === "graphql") {
      const r = await graphql({
        operationName: step.operationName,
        query: step.query,
        variables: fill(step.variables, values),
      });
      expect(r.status).toBe(200);
      expect(
        r.json.errors,
        `${step.operationName}: ${JSON.stringify(r.json.errors)}`,
      ).toBeUndefined();
      for (const [name, where] of Object.entries(step.save ?? {}))
        values[name] = at(r.json, where as string);
      statuses.push(step.operationName);
    } else if (step.kind === "put") {
      const headers: Record<string, string> = {};
      for (const h of fill(step.headers, values) as string[]) {
        const i = h.indexOf(":");
        headers[h.slice(0, i)] = h.slice(i + 1);
      }
      tamper?.(headers);
      const body = step.body === "file" ? lines : (values.manifest as string);
      const res = await fetch(fill(step.url, values) as string, {
        method: "PUT",
        headers,
        body: Buffer.from(body),
      });
      statuses.push(`PUT ${res.status}`);
      if (res.status !== 200) return { statuses, failure: await res.text() };
    } else {
      const res = await fetch(`${origin}${fill(step.path, values)}`, {
        method: "POST",
        headers: { authorization: basic(KEY), "content-type": "application/json" },
        body: JSON.stringify(step.body),
      });
      statuses.push(`file_stream ${res.status}`);
    }
  }
  return { statuses, failure: undefined };
}

function scenario(model: TrainableModel, collection: string): Values {
  const fileMd5 = md5(lines);
  return {
    entity: "alice",
    project: model.project,
    run: model.runId ?? model.name,
    displayName: model.name,
    collection,
    fileMd5,
    artifactDigest: manifestDigest({ "train.jsonl": fileMd5 }),
    clientID: `c-${collection}`,
    sequenceClientID: `s-${collection}`,
  };
}

function withManifest(values: Values): Values {
  // The manifest names the artifact that first held the file, known once created.
  const manifest = new Proxy(values, {}) as Values;
  Object.defineProperty(manifest, "manifest", {
    enumerable: true,
    get() {
      return JSON.stringify({
        version: 1,
        storagePolicy: "wandb-storage-policy-v1",
        storagePolicyConfig: { storageLayout: "V2" },
        contents: {
          "train.jsonl": {
            digest: values.fileMd5,
            birthArtifactID: values.artifactId,
            size: Buffer.byteLength(lines),
          },
        },
      });
    },
  });
  Object.defineProperty(manifest, "manifestMd5", {
    enumerable: true,
    get: () => md5(manifest.manifest as string),
  });
  return manifest;
}

describe("the real wandb client's request sequence", () => {
  it("is served whole, and ART's _train_sft flow then trains offline on the artifact", async () => {
    const client = new TrainingClient({ apiKey: KEY, baseURL: emu.url });
    const model = await TrainableModel.register(client, {
      project: "p",
      name: "replayed",
      baseModel: "t",
    });
    const values = withManifest(scenario(model, "replayed-sft-data-0123456789ab"));
    const { statuses } = await replay(values);
    expect(statuses).toEqual([
      "UpsertBucket",
      "ArtifactType",
      "CreateArtifact",
      "CreateArtifactManifest",
      "CreateArtifactFiles",
      "PUT 200",
      "CreateArtifactManifest",
      "PUT 200",
      "CommitArtifact",
      "file_stream 200",
    ]);
    // The run carries what the client sent, and ended with the file stream.
    const run = await graphql({
      query:
        "query Run($entity: String!, $project: String!, $name: String!) { project(name: $project, entityName: $entity) { run(name: $name) { displayName host state } } }",
      variables: { entity: "alice", project: "p", name: model.runId },
    });
    expect(run.json.data.project.run).toMatchObject({
      displayName: "replayed",
      host: "trainer-7",
      state: "finished",
    });
    // What ART then sends: the artifact's :v0 URL as training_data_url.
    const url = "wandb-artifact:///alice/p/replayed-sft-data-0123456789ab:v0";
    const example = new Trajectory({
      messages_and_choices: [
        { role: "user", content: "unused" },
        { role: "assistant", content: "unused" },
      ],
    });
    const types: string[] = [];
    const result = await model.trainSft(
      [example],
      { batchSize: 1, learningRate: 1e-4 },
      {
        pollIntervalMs: 10,
        onEvent: (e) => types.push(e.type),
        uploader: { upload: async () => url },
      },
    );
    // Two rows in the artifact, one per batch: the job read the replayed upload.
    expect(types).toEqual(["training_started", "gradient_step", "gradient_step", "training_ended"]);
    expect(result.step).toBe(1);
    // The type the name now has is what the client's ArtifactType finds.
    const type = await graphql({
      query:
        "query ArtifactType($entityName: String, $projectName: String, $name: String!) { project(name: $projectName, entityName: $entityName) { artifact(name: $name) { artifactType { name } } } }",
      variables: {
        entityName: "alice",
        projectName: "p",
        name: "replayed-sft-data-0123456789ab:latest",
      },
    });
    expect(type.json.data.project.artifact.artifactType.name).toBe("dataset");
  });

  it("keeps the older $artifactFiles form working", async () => {
    const created = await graphql({
      query:
        "mutation CreateArtifact($input: CreateArtifactInput!) { createArtifact(input: $input) { artifact { id state } } }",
      variables: {
        input: {
          entityName: "alice",
          projectName: "p",
          artifactTypeName: "dataset",
          artifactCollectionName: "older-form",
          digest: "d",
        },
      },
    });
    const id = created.json.data.createArtifact.artifact.id;
    const files = await graphql({
      query:
        "mutation CreateArtifactFiles($artifactFiles: [CreateArtifactFileSpecInput!]!, $storageLayout: ArtifactStorageLayout!) { createArtifactFiles(input: { artifactFiles: $artifactFiles, storageLayout: $storageLayout }) { files { edges { node { uploadUrl uploadHeaders } } } } }",
      variables: {
        storageLayout: "V2",
        artifactFiles: [{ artifactID: id, name: "train.jsonl", md5: md5(lines) }],
      },
    });
    const node = files.json.data.createArtifactFiles.files.edges[0].node;
    expect(node.uploadUrl).toMatch(/\/wandb-uploads\/.+Signature=/);
    expect(node.uploadHeaders).toEqual([`Content-MD5:${md5(lines)}`]);
  });
});

describe("upload URLs, checked like GCS V2 signed URLs", () => {
  async function uploadUrl(name: string) {
    const created = await graphql({
      query: "mutation { createArtifact(input: $input) { artifact { id } } }",
      variables: {
        input: {
          entityName: "alice",
          projectName: "p",
          artifactTypeName: "dataset",
          artifactCollectionName: name,
          digest: name,
        },
      },
    });
    const id = created.json.data.createArtifact.artifact.id;
    const files = await graphql({
      query:
        "mutation X($input: CreateArtifactFilesInput!) { createArtifactFiles(input: $input) { files { edges { node { uploadUrl } } } } }",
      variables: {
        input: { artifactFiles: [{ artifactID: id, name: "train.jsonl", md5: md5(lines) }] },
      },
    });
    return files.json.data.createArtifactFiles.files.edges[0].node.uploadUrl as string;
  }
  const put = (url: string, headers: Record<string, string>, body: BodyInit = Buffer.from(lines)) =>
    fetch(url, { method: "PUT", headers, body });

  it("answers 403 SignatureDoesNotMatch when a Content-Type creeps in, as Node's fetch adds to a string body", async () => {
    const url = await uploadUrl("typed");
    const res = await put(url, { "content-md5": md5(lines) }, lines);
    expect(res.status).toBe(403);
    const xml = await res.text();
    expect(xml).toContain("<Code>SignatureDoesNotMatch</Code>");
    expect(xml).toContain("text/plain;charset=UTF-8");
    // The same bytes, as the client sends them, go through.
    expect((await put(url, { "content-md5": md5(lines) })).status).toBe(200);
  });

  it("answers 403 without the signed Content-MD5, with another one, or with a changed expiry", async () => {
    const url = await uploadUrl("md5");
    expect((await put(url, {})).status).toBe(403);
    expect((await put(url, { "content-md5": md5("other") })).status).toBe(403);
    const later = new URL(url);
    later.searchParams.set("Expires", String(Number(later.searchParams.get("Expires")) + 3600));
    expect((await put(later.href, { "content-md5": md5(lines) })).status).toBe(403);
    const unsigned = new URL(url);
    unsigned.searchParams.delete("Signature");
    expect((await put(unsigned.href, { "content-md5": md5(lines) })).status).toBe(403);
  });

  it("answers 400 ExpiredToken once the URL's expiry has passed", async () => {
    const url = await uploadUrl("expired");
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 2 * 60 * 60 * 1000);
    const res = await put(url, { "content-md5": md5(lines) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("<Code>ExpiredToken</Code>");
  });

  it("answers 400 BadDigest when the bytes differ from the signed Content-MD5", async () => {
    const url = await uploadUrl("digest");
    const res = await put(url, { "content-md5": md5(lines) }, Buffer.from("tampered\n"));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("BadDigest");
  });
});

describe("bad input to the W&B routes", () => {
  it("never answers 500: a null body, null variables, a file spec of null, a non-string query", async () => {
    const bodies: [unknown, number][] = [
      [null, 400],
      [[], 400],
      [{ query: "mutation { createArtifactFiles(input: $input) { x } }", variables: null }, 200],
      [{ query: "mutation { createArtifactFiles(input: $input) { x } }", variables: [] }, 400],
      [
        {
          query: "mutation { createArtifactFiles(input: $input) { x } }",
          variables: { artifactFiles: [null] },
        },
        200,
      ],
      [
        {
          query: "mutation { createArtifactFiles(input: $input) { x } }",
          variables: { input: { artifactFiles: [null] } },
        },
        200,
      ],
      [
        {
          query: "mutation { createArtifactFiles(input: $input) { x } }",
          variables: { input: { artifactFiles: 7 } },
        },
        200,
      ],
      [
        { query: "mutation { createArtifact(input: $input) { x } }", variables: { input: null } },
        200,
      ],
      [{ query: "mutation { upsertBucket(input: {}) { x } }", variables: { name: 5 } }, 200],
      [
        {
          query: "query { project(name: $p) { artifact(name: $n) { x } } }",
          variables: { name: null },
        },
        200,
      ],
      [{ query: 42 }, 200],
    ];
    for (const [body, status] of bodies) {
      const r = await graphql(body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json.errors?.[0]?.message, JSON.stringify(body)).toEqual(expect.any(String));
    }
    const raw = await fetch(`${origin}/graphql`, {
      method: "POST",
      headers: { authorization: basic(KEY) },
      body: "{not json",
    });
    expect(raw.status).toBe(400);
    const stream = await fetch(`${origin}/files/alice/p/%E0%A4%A/file_stream`, {
      method: "POST",
      headers: { authorization: basic(KEY) },
      body: "null",
    });
    expect(stream.status).toBe(404);
  });

  it("answers 401 to an unknown key before reading the body, and 413 past the cap", async () => {
    // A body announced at 600 MB, of which only a few bytes are ever sent.
    const answer = await new Promise<number>((resolve, reject) => {
      const req = request(`${origin}/graphql`, {
        method: "POST",
        headers: {
          "content-length": String(600 * 1024 * 1024),
          "content-type": "application/json",
        },
      });
      req.on("response", (res) => {
        res.on("error", () => {}); // the server closes on the unread rest
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.write("{");
    });
    expect(answer).toBe(401);
    const big = await fetch(`${origin}/graphql`, {
      method: "POST",
      headers: { authorization: basic(KEY), "content-type": "application/json" },
      body: JSON.stringify({ query: "x".repeat(2 * 1024 * 1024) }),
    }).catch((e: unknown) => e);
    // Either the 413 arrives or the server closed on the unread rest; never a 200 or 500.
    if (big instanceof Response) expect(big.status).toBe(413);
    const upload = await new Promise<number>((resolve, reject) => {
      const req = request(`${origin}/wandb-uploads/not-a-token?Expires=1&Signature=x`, {
        method: "PUT",
        headers: { "content-length": String(600 * 1024 * 1024) },
      });
      req.on("response", (res) => {
        res.on("error", () => {}); // the server closes on the unread rest
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.write("x");
    });
    expect(upload).toBe(404);
  });
});

describe("--sft-data-dir", () => {
  it("says at start when the directory does not exist", async () => {
    const warnings: string[] = [];
    const local = await startEmulator({
      port: 0,
      apiKeys: { [KEY]: "alice" },
      sftDataDir: "/nonexistent/sft-data",
      onWarning: (m) => warnings.push(m),
    });
    await local.close();
    expect(warnings.join("\n")).toContain("sftDataDir /nonexistent/sft-data does not exist (yet)");
  });

  it("fails a job pointed at a FIFO instead of stalling on it", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "sft-fifo-"));
    const fifo = path.join(dir, "train.jsonl");
    execFileSync("mkfifo", [fifo]);
    const local = await startEmulator({ port: 0, apiKeys: { [KEY]: "alice" }, sftDataDir: dir });
    try {
      const client = new TrainingClient({ apiKey: KEY, baseURL: local.url });
      const model = await TrainableModel.register(client, {
        project: "p",
        name: "f",
        baseModel: "t",
      });
      const example = new Trajectory({
        messages_and_choices: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
        ],
      });
      const started = Date.now();
      await expect(
        model.trainSft(
          [example],
          {},
          {
            pollIntervalMs: 10,
            uploader: { upload: async () => pathToFileURL(fifo).href },
          },
        ),
      ).rejects.toThrow(/must name a JSONL file/);
      expect(Date.now() - started).toBeLessThan(10_000);
      // A regular file in the same place trains.
      await rm(fifo);
      await writeFile(fifo, lines);
      await expect(
        model.trainSft(
          [example],
          {},
          {
            pollIntervalMs: 10,
            uploader: { upload: async () => pathToFileURL(fifo).href },
          },
        ),
      ).resolves.toMatchObject({ step: 1 });
    } finally {
      await local.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
