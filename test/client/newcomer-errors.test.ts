// Mistakes a newcomer makes with the client and the emulator, and the errors
// that should tell them what to do.
import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { TrainingClient, Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { InvalidBaseURLError, NotFoundError } from "trajectory-recorder/errors";
import { afterAll, beforeAll, expect, it } from "vitest";

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["right-key"] });
});
afterAll(async () => {
  await emu.close();
});

it("a base URL without a scheme fails at construction, naming the URL and the fix", () => {
  for (const baseURL of ["localhost:8123/v1", "api.example.com/v1", "ftp://host/v1", "not a url"]) {
    const make = () => new TrainingClient({ apiKey: "k", baseURL });
    expect(make).toThrow(InvalidBaseURLError);
    expect(make).toThrow(/is not an http:\/\/ or https:\/\/ URL.*"http:\/\/localhost:8000\/v1"/);
  }
});

it("a 404 from a base URL without /v1 says the URL lacks /v1", async () => {
  const base = emu.url.replace(/\/v1$/, "");
  const client = new TrainingClient({ apiKey: "right-key", baseURL: base, maxRetries: 0 });
  const err = await client.models
    .create({ project: "p", name: "n", base_model: "b" })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(NotFoundError);
  expect((err as Error).message).toContain(`does not end in /v1`);
  expect((err as Error).message).toContain(`try ${base}/v1`);

  // A plain openai client aimed there reads the emulator's answer too.
  const openai = new OpenAI({ apiKey: "right-key", baseURL: base, maxRetries: 0 });
  const plain = await openai.chat.completions
    .create({ model: "m", messages: [{ role: "user", content: "hi" }] })
    .catch((e: unknown) => e);
  expect(plain).toBeInstanceOf(OpenAI.NotFoundError);
  expect((plain as Error).message).toContain("does the client's base URL end in /v1?");
});

it("chat completions through the client say so too, whatever the server's 404 body", async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("Not Found");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const client = new TrainingClient({ apiKey: "k", baseURL: base, maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model: "m", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as Error).message).toContain("POST /chat/completions failed: Not Found.");
    expect((err as Error).message).toContain(`The base URL ${base} does not end in /v1`);
    const right = new TrainingClient({ apiKey: "k", baseURL: `${base}/v1`, maxRetries: 0 });
    const plain = await right.chat.completions
      .create({ model: "m", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect((plain as Error).message).not.toContain("does not end in /v1");
  } finally {
    server.close();
  }
});

it("a wrong key through a plain openai client reads the emulator's message, not 'no body'", async () => {
  const openai = new OpenAI({ apiKey: "wrong-key", baseURL: emu.url, maxRetries: 0 });
  const err = await openai.chat.completions
    .create({ model: "m", messages: [{ role: "user", content: "hi" }] })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
  const e = err as InstanceType<typeof OpenAI.AuthenticationError>;
  expect(e.message).toContain("The API key is not valid for this server");
  expect(e.message).not.toContain("no body");
  expect(e.message).not.toContain("wrong-key");
  expect(e.code).toBe("invalid_api_key");
  expect(e.type).toBe("authentication_error");

  // The service's own routes keep FastAPI's shape, which TrainingClient reads.
  const client = new TrainingClient({ apiKey: "wrong-key", baseURL: emu.url, maxRetries: 0 });
  const own = await client.models
    .create({ project: "p", name: "n", base_model: "b" })
    .catch((x) => x);
  expect((own as Error).message).toContain("The API key is not valid for this server");
  const chat = await client.chat.completions
    .create({ model: "m", messages: [{ role: "user", content: "hi" }] })
    .catch((x: unknown) => x);
  expect((chat as Error).message).toContain("The API key is not valid for this server");
});

it("trainingJobs.create and models.log take TrajectoryGroup objects as well as their JSON", async () => {
  const client = new TrainingClient({ apiKey: "right-key", baseURL: emu.url });
  const model = await client.models.create({ project: "p", name: "g", base_model: "b" });
  const prompt = { role: "user" as const, content: "say red" };
  const group = new TrajectoryGroup(
    [1, 0].map((reward) => new Trajectory({ messages_and_choices: [prompt], reward })),
  );
  const logged = await client.models.log(model.id, {
    split: "val",
    trajectory_groups: [group, group.toJSON()],
  });
  expect(logged).toMatchObject({ num_groups: 2, num_trajectories: 4 });
  const job = await client.trainingJobs.create({ model_id: model.id, trajectory_groups: [group] });
  expect(job.id).toMatch(/^[0-9a-f-]{36}$/);
});

it("an upstream that is not an http(s) URL is refused when the emulator starts", async () => {
  await expect(startEmulator({ port: 0, upstream: "notaurl" })).rejects.toThrow(
    /upstream: "notaurl" is not an http:\/\/ or https:\/\/ URL/,
  );
});
