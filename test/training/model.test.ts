import { mkdtemp, readdir, readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  InvalidTrainingOptionsError,
  LocalFileUploader,
  PresignedUrlUploader,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { trainableGroup } from "../helpers/trainable.js";

let emu: Emulator;
let client: TrainingClient;
beforeAll(async () => {
  // SFT below reads a file under the temp dir and fetches from a loopback store.
  emu = await startEmulator({
    port: 0,
    apiKeys: ["k"],
    sftDataDir: tmpdir(),
    fetchTrainingData: true,
  });
  client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
});
afterAll(async () => {
  await emu.close();
});

const fast = { pollIntervalMs: 10 };

async function rolloutGroup(model: TrainableModel, target: string): Promise<TrajectoryGroup> {
  const openai = model.openai();
  const prompt = { role: "user" as const, content: `please say ${target}` };
  const completion = await openai.chat.completions.create({
    model: "",
    messages: [prompt],
    n: 8,
    max_tokens: 3,
    logprobs: true,
  });
  return new TrajectoryGroup(
    completion.choices.map(
      (choice) =>
        new Trajectory({
          messages_and_choices: [prompt, choice],
          reward: (choice.message.content ?? "").split(/\s+/).includes(target) ? 1 : 0,
        }),
    ),
  );
}

it("registers a model once: a second register returns the same id", async () => {
  const a = await TrainableModel.register(client, { project: "p", name: "same", baseModel: "toy" });
  const b = await TrainableModel.register(client, { project: "p", name: "same", baseModel: "toy" });
  expect(b.id).toBe(a.id);
  expect(a.entity).toBe("local");
  expect(a.inferenceName()).toBe("wandb-artifact:///local/p/same");
  expect(a.inferenceName(2)).toBe("wandb-artifact:///local/p/same:step2");
  expect(await a.getStep()).toBe(0);
});

it("trains on groups, reports each event, and returns the new step with averaged metrics", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "rl",
    baseModel: "toy",
  });
  const groups = [await rolloutGroup(model, "red"), await rolloutGroup(model, "dog")];
  // A group whose rewards all match teaches nothing; make sure each one differs.
  for (const g of groups) g.trajectories[0]!.reward = 1 - g.trajectories[1]!.reward;
  const types: string[] = [];
  const result = await model.train(
    groups,
    { learningRate: 5e-5 },
    { ...fast, onEvent: (e) => types.push(e.type) },
  );
  expect(result.step).toBe(1);
  expect(await model.getStep()).toBe(1);
  expect(types[0]).toBe("training_started");
  expect(types.at(-1)).toBe("training_ended");
  expect(types.filter((t) => t === "gradient_step").length).toBe(
    result.metrics["data/step_num_gradient_steps"],
  );
  expect(Object.values(result.metrics).every((v) => Number.isFinite(v))).toBe(true);
});

it("rejects bad options naming the field before anything is sent", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "bad",
    baseModel: "toy",
  });
  const group = trainableGroup(1, 0);
  await expect(model.train([group], { learningRate: "fast" as never })).rejects.toThrow(
    /Invalid options to train, nothing was sent: learningRate: .*expected number/,
  );
  await expect(model.train([group], { learningRat: 1 } as never)).rejects.toThrow(
    /unknown option learningRat/,
  );
  await expect(model.train([{ trajectories: [{ reward: "high" }] }] as never)).rejects.toThrow(
    /groups\[0\]\.trajectories\[0\]\.reward/,
  );
  await expect(
    TrainableModel.register(client, { project: "p", name: "", baseModel: "toy" }),
  ).rejects.toBeInstanceOf(InvalidTrainingOptionsError);
  expect(await model.getStep()).toBe(0);
});

it("answers chat completions on the latest checkpoint, or on a pinned step", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "pinned",
    baseModel: "toy",
  });
  const seen: string[] = [];
  const recorder = {
    wrap<T extends object>(c: T): T {
      seen.push("wrapped");
      return c;
    },
  };
  const latest = model.openai({ recorder });
  const out = await latest.chat.completions.create({
    model: "",
    messages: [{ role: "user", content: "hi" }],
  });
  expect(out.model).toBe("wandb-artifact:///local/p/pinned");
  expect(seen).toEqual(["wrapped"]);
  const pinned = model.openai({ step: 0 });
  const out0 = await pinned.chat.completions.create({
    model: "",
    messages: [{ role: "user", content: "hi" }],
  });
  expect(out0.model).toBe("wandb-artifact:///local/p/pinned:step0");
});

it("logs groups under a split", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "log",
    baseModel: "toy",
  });
  await expect(
    model.log([{ trajectories: [{ reward: 1 }] }], { split: "val" }),
  ).resolves.toBeUndefined();
});

it("deletes checkpoints keeping the latest and the best by a metric", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "prune",
    baseModel: "toy",
  });
  for (let i = 0; i < 3; i++) {
    await model.train([await rolloutGroup(model, "cat")].map(ensureSpread), {}, fast);
  }
  const pages = await client.models.checkpoints.list(model.id, { order: "asc" });
  const reward = (m: Record<string, unknown>) => (typeof m.reward === "number" ? m.reward : -1);
  const top = Math.max(...pages.data.map((c) => reward(c.metrics)));
  const best = pages.data.filter((c) => reward(c.metrics) === top).map((c) => c.step);
  const { deleted, kept } = await model.deleteCheckpoints({ keepBestBy: "reward" });
  expect(kept).toEqual([...new Set([...best, 3])].sort((a, b) => a - b));
  expect([...deleted, ...kept].sort()).toEqual([0, 1, 2, 3]);
  const left = (await client.models.checkpoints.list(model.id)).data.map((c) => c.step);
  expect(left).toEqual(kept);
});

it("trains SFT from trajectories through a local file uploader, and from JSONL through a pre-signed PUT", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "sft",
    baseModel: "toy",
  });
  const trajectories = [
    new Trajectory({
      messages_and_choices: [
        { role: "user", content: "please say fish" },
        { role: "assistant", content: "fish" },
      ],
    }),
    new Trajectory({
      messages_and_choices: [
        { role: "user", content: "please say two" },
        { role: "assistant", content: "two" },
      ],
    }),
  ];
  const dir = await mkdtemp(path.join(tmpdir(), "sft-"));
  const local = await model.trainSft(
    trajectories,
    { batchSize: 1, learningRate: 5e-5 },
    { uploader: new LocalFileUploader(dir), ...fast },
  );
  expect(local.step).toBe(1);

  // A pre-signed store: PUT stores the bytes, GET of the same path serves them.
  const stored = new Map<string, Buffer>();
  const store = http.createServer(async (req, res) => {
    const key = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method === "PUT") {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      stored.set(key, Buffer.concat(chunks));
      return res.writeHead(200).end();
    }
    const body = stored.get(key);
    res.writeHead(body ? 200 : 404).end(body);
  });
  await new Promise<void>((r) => store.listen(0, "127.0.0.1", r));
  const port = (store.address() as AddressInfo).port;
  const uploader = new PresignedUrlUploader({
    presign: (name) => ({
      uploadUrl: `http://127.0.0.1:${port}/bucket/${name}?X-Signature=secret`,
    }),
  });
  const jsonl = trajectories.map((t) => JSON.stringify({ messages: t.messages() })).join("\n");
  const remote = await model.trainSft(jsonl, {}, { uploader, ...fast });
  store.close();
  expect(remote.step).toBe(2);
  const [file] = [...stored.keys()];
  expect(file).toMatch(/^\/bucket\/sft-sft-data-[0-9a-f]{12}\.jsonl$/);
  expect(stored.get(file!)!.toString()).toBe(`${jsonl}\n`);

  const [name] = await readdir(dir);
  const text = await readFile(path.join(dir, name!), "utf8");
  expect(
    text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l)),
  ).toEqual(trajectories.map((t) => ({ messages: t.messages() })));
});

it("deletes the model", async () => {
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "gone",
    baseModel: "toy",
  });
  const { deletedCheckpoints } = await model.delete();
  expect(deletedCheckpoints).toBe(1);
  const again = await TrainableModel.register(client, {
    project: "p",
    name: "gone",
    baseModel: "toy",
  });
  expect(again.id).not.toBe(model.id);
});

function ensureSpread(g: TrajectoryGroup): TrajectoryGroup {
  g.trajectories[0]!.reward = 1 - g.trajectories[1]!.reward;
  return g;
}

it("writes a local artifact atomically and gives its file:// URL", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "art-"));
  const url = await new LocalFileUploader(dir).upload({
    name: "../x.jsonl",
    data: "{}\n",
    contentType: "application/jsonl",
  });
  expect(url).toBe(pathToFileURL(path.join(dir, "x.jsonl")).href);
  expect(await readFile(fileURLToPath(url), "utf8")).toBe("{}\n");
});

it("retries a pre-signed PUT on 503 and never shows the signature in errors", async () => {
  let puts = 0;
  const store = http.createServer((_req, res) => {
    puts += 1;
    res.writeHead(puts === 1 ? 503 : 403).end();
  });
  await new Promise<void>((r) => store.listen(0, "127.0.0.1", r));
  const port = (store.address() as AddressInfo).port;
  const uploader = new PresignedUrlUploader({
    presign: () => ({ uploadUrl: `http://127.0.0.1:${port}/b/f.jsonl?sig=topsecret` }),
  });
  const err = await uploader
    .upload({ name: "f.jsonl", data: "x", contentType: "text/plain" })
    .catch((e) => e);
  store.close();
  expect(puts).toBe(2);
  expect(err.message).toBe(`Uploading f.jsonl to http://127.0.0.1:${port}/b/f.jsonl answered 403.`);
  expect(err.message).not.toContain("topsecret");

  // Off this machine, only https: the pre-signed query string is a credential.
  const plain = new PresignedUrlUploader({
    presign: () => ({ uploadUrl: "http://storage.example.com/b/f.jsonl?sig=topsecret" }),
  });
  const refused = await plain
    .upload({ name: "f.jsonl", data: "x", contentType: "text/plain" })
    .catch((e) => e);
  expect(refused).toBeInstanceOf(TypeError);
  expect(refused.message).toBe(
    "PresignedUrlUploader: uploadUrl: expected an https:// upload URL (http:// only on loopback), got http://storage.example.com.",
  );
});

it("walks every checkpoint page and deletes all but the latest and every step tied for the best", async () => {
  const all = [0, 1, 2, 3, 4].map((step) => ({
    id: `c${step}`,
    step,
    metrics: step === 0 ? {} : { "val/reward": [0, 0.9, 0.5, 0.9, 0.2][step] },
  }));
  const deletes: unknown[] = [];
  const fake = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    res.setHeader("content-type", "application/json");
    if (url.pathname.endsWith("/preview/models")) {
      return res.end(
        JSON.stringify({
          id: "5b1f5d8e-3f5e-4a57-8d0a-6f0f3f1e2a11",
          entity: "e",
          project: "p",
          name: "n",
          base_model: "b",
        }),
      );
    }
    if (req.method === "DELETE") {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      deletes.push(JSON.parse(Buffer.concat(chunks).toString()));
      return res.end(JSON.stringify({ deleted_count: 3, not_found_steps: [] }));
    }
    const after = url.searchParams.get("after");
    const start = after ? all.findIndex((c) => c.id === after) + 1 : 0;
    const data = all.slice(start, start + 2);
    res.end(JSON.stringify({ object: "list", data, has_more: start + 2 < all.length }));
  });
  await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
  const port = (fake.address() as AddressInfo).port;
  const c = new TrainingClient({ apiKey: "k", baseURL: `http://127.0.0.1:${port}/v1` });
  const model = await TrainableModel.register(c, { project: "p", name: "n", baseModel: "b" });
  const out = await model.deleteCheckpoints({ keepBestBy: "val/reward" });
  expect(out).toEqual({ deleted: [0, 2], kept: [1, 3, 4] });
  expect(deletes).toEqual([{ steps: [0, 2] }]);
  expect(await model.deleteCheckpoints({ keepLatest: false, keepBestBy: "missing" })).toEqual({
    deleted: [0, 1, 2, 3, 4],
    kept: [],
  });
  fake.close();
});
