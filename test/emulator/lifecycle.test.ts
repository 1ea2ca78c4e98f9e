import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { startEmulator } from "trajectory-recorder/emulator";
import { afterEach, expect, it } from "vitest";
import { call, createModel, KEY, start, waitForJob } from "./helpers.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tempDir() {
  const d = await mkdtemp(path.join(tmpdir(), "emu-"));
  dirs.push(d);
  return d;
}

it("keeps models, checkpoints, jobs and events across a restart on the same data directory", async () => {
  const dataDir = await tempDir();
  const first = await start({ dataDir });
  const m = await createModel(first, "persisted");
  const traj = (r: number, w: string) => ({
    messages_and_choices: [
      { role: "user", content: "say red" },
      {
        index: 0,
        finish_reason: "stop",
        message: { role: "assistant", content: w },
        logprobs: { content: [{ token: w, logprob: -3 }] },
      },
    ],
    reward: r,
  });
  const job = await call(first, "POST", "/preview/training-jobs", {
    model_id: m.id,
    trajectory_groups: [{ trajectories: [traj(1, "red"), traj(0, "dog")] }],
  });
  const events = await waitForJob(first, job.json.id);
  const before = await call(first, "GET", `/preview/models/${m.id}/checkpoints`);
  const answer = await call(first, "POST", "/chat/completions", {
    model: `wandb-artifact:///alice/demo/persisted`,
    messages: [{ role: "user", content: "say red" }],
    seed: 3,
    logprobs: true,
  });
  await first.close();
  expect((await readdir(dataDir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);

  const second = await start({ dataDir });
  try {
    expect((await call(second, "GET", `/preview/models/${m.id}/checkpoints`)).json).toEqual(
      before.json,
    );
    const again = await call(
      second,
      "GET",
      `/preview/training-jobs/${job.json.id}/events?limit=100`,
    );
    expect(again.json.data).toEqual(events);
    expect((await call(second, "GET", `/preview/training-jobs/${job.json.id}`)).json.status).toBe(
      "COMPLETED",
    );
    const dup = await call(second, "POST", "/preview/models", {
      project: "demo",
      name: "persisted",
      base_model: "b",
      return_existing: true,
    });
    expect(dup.json.id).toBe(m.id);
    const same = await call(second, "POST", "/chat/completions", {
      model: `wandb-artifact:///alice/demo/persisted`,
      messages: [{ role: "user", content: "say red" }],
      seed: 3,
      logprobs: true,
    });
    expect(same.json.choices).toEqual(answer.json.choices);
  } finally {
    await second.close();
  }
});

it("trains SFT from a file:// JSONL and the loss falls", async () => {
  const dir = await tempDir();
  const file = path.join(dir, "data.jsonl");
  const line = (w: string) =>
    JSON.stringify({
      messages: [
        { role: "user", content: `say ${w}` },
        { role: "assistant", content: `${w} ${w}` },
      ],
    });
  await writeFile(file, `${["red", "cat", "apple", "two"].map(line).join("\n")}\n`);
  const emu = await start({ sftDataDir: dir });
  try {
    const m = await createModel(emu, "sft");
    const losses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const job = await call(emu, "POST", "/preview/sft-training-jobs", {
        model_id: m.id,
        training_data_url: pathToFileURL(file).href,
        config: { batch_size: 2, learning_rate: 1e-4 },
      });
      expect(job.status).toBe(200);
      const events = await waitForJob(emu, job.json.id);
      expect(events.map((e) => e.type)).toEqual([
        "training_started",
        "gradient_step",
        "gradient_step",
        "training_ended",
      ]);
      expect(events[0].data.num_sequences).toBe(2);
      losses.push(events[1].data.loss);
    }
    expect(losses[2]).toBeLessThan(losses[0]!);
    const r = await call(emu, "POST", "/chat/completions", {
      model: "wandb-artifact:///alice/demo/sft",
      messages: [{ role: "user", content: "say cat" }],
      temperature: 0,
    });
    expect(r.json.choices[0].message.content.split(" ")[0]).toBe("cat");
    const missing = await call(emu, "POST", "/preview/sft-training-jobs", {
      model_id: m.id,
      training_data_url: pathToFileURL(path.join(dir, "nope.jsonl")).href,
    });
    const failed = await waitForJob(emu, missing.json.id);
    expect(failed.map((e) => e.type)).toEqual(["training_started", "training_failed"]);
    expect(failed[1].data.error_message).toMatch(/Could not read training_data_url/);
    const artifact = await call(emu, "POST", "/preview/sft-training-jobs", {
      model_id: m.id,
      training_data_url: "wandb-artifact:///e/p/data:v0",
    });
    expect((await waitForJob(emu, artifact.json.id)).at(-1).data.error_message).toMatch(
      /file:\/\/ or http/,
    );
  } finally {
    await emu.close();
  }
});

it("reads SFT data over http:// and forwards chat completions to an upstream with logprobs added", async () => {
  const seen: any[] = [];
  const fake = createServer((req, res) => {
    if (req.url === "/data.jsonl") {
      res.end(
        `${JSON.stringify({
          messages: [
            { role: "user", content: "hi" },
            { role: "assistant", content: "ok" },
          ],
        })}\n`,
      );
      return;
    }
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ url: req.url, body: JSON.parse(body) });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 1,
          model: "up",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: "from upstream" },
              finish_reason: "stop",
              logprobs: null,
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
  const upstream = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/v1`;
  const emu = await start({ upstream, fetchTrainingData: true });
  try {
    const r = await call(emu, "POST", "/chat/completions", {
      model: "qwen",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(r.json.choices[0].message.content).toBe("from upstream");
    expect(seen[0]).toMatchObject({
      url: "/v1/chat/completions",
      body: { model: "qwen", logprobs: true },
    });
    const m = await createModel(emu, "http-sft");
    const job = await call(emu, "POST", "/preview/sft-training-jobs", {
      model_id: m.id,
      training_data_url: `${upstream.replace("/v1", "")}/data.jsonl`,
    });
    expect((await waitForJob(emu, job.json.id)).at(-1).type).toBe("training_ended");
  } finally {
    await emu.close();
    await new Promise((r) => fake.close(r));
  }
  const orphan = await start({ upstream });
  try {
    const r = await call(orphan, "POST", "/chat/completions", {
      model: "qwen",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(r.status).toBe(502);
    expect(r.json.error.message).toMatch(/could not be reached/);
  } finally {
    await orphan.close();
  }
});

it("closes promptly with an open keep-alive connection and answers a list key as entity local", async () => {
  const emu = await startEmulator({ port: 0, apiKeys: ["k1"] });
  const agent = new (await import("node:http")).Agent({ keepAlive: true });
  await new Promise<void>((resolve, reject) => {
    const req = request(
      `${emu.url}/preview/models`,
      {
        method: "POST",
        agent,
        headers: { authorization: "Bearer k1", "content-type": "application/json" },
      },
      (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => {
          expect(JSON.parse(body).entity).toBe("local");
          resolve();
        });
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ project: "p", name: "n", base_model: "b" }));
  });
  const t0 = Date.now();
  await emu.close();
  expect(Date.now() - t0).toBeLessThan(1000);
  agent.destroy();
  await expect(fetch(`${emu.url}/health`)).rejects.toThrow();
});

it("runs from the command line and prints its URL", async () => {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/index.ts", "emulator", "--port", "0", "--api-key", KEY],
    {
      cwd: path.resolve(import.meta.dirname, "../.."),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (c) => {
        out += c;
        const m = /listening on (\S+)/.exec(out);
        if (m) resolve(m[1] as string);
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const res = await fetch(`${url}/preview/models`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ project: "p", name: "n", base_model: "b" }),
    });
    expect(res.status).toBe(200);
  } finally {
    child.kill("SIGTERM");
  }
});

it("stops a running job on close and reports it failed after a restart", async () => {
  const dataDir = await tempDir();
  const emu = await start({ dataDir });
  const m = await createModel(emu, "interrupted");
  const traj = (r: number) => ({
    messages_and_choices: [
      { role: "user", content: "say red" },
      {
        index: 0,
        finish_reason: "length",
        message: { role: "assistant", content: "red" },
        logprobs: { content: [{ token: "red", logprob: -3 }] },
      },
    ],
    reward: r,
  });
  const groups = Array.from({ length: 400 }, () => ({ trajectories: [traj(1), traj(0)] }));
  const job = await call(emu, "POST", "/preview/training-jobs", {
    model_id: m.id,
    trajectory_groups: groups,
  });
  await emu.close();
  const again = await start({ dataDir });
  try {
    const status = await call(again, "GET", `/preview/training-jobs/${job.json.id}`);
    expect(status.json.status).toBe("FAILED");
    expect(status.json.error_message).toMatch(/closed|stopped/);
    const events = (
      await call(again, "GET", `/preview/training-jobs/${job.json.id}/events?limit=100`)
    ).json.data;
    expect(
      events.filter((e: any) => e.type === "training_failed" || e.type === "training_ended"),
    ).toHaveLength(1);
    expect(events.at(-1).type).toBe("training_failed");
    const cps = await call(again, "GET", `/preview/models/${m.id}/checkpoints`);
    expect(cps.json.data.map((c: any) => c.step)).toEqual([0]);
  } finally {
    await again.close();
  }
});

it("ends a running job as failed when its model is deleted, and writes no checkpoint for the deleted model", async () => {
  const dataDir = await tempDir();
  const emu = await start({ dataDir });
  const traj = (r: number) => ({
    messages_and_choices: [
      { role: "user", content: "say red" },
      {
        index: 0,
        finish_reason: "length",
        message: { role: "assistant", content: "red" },
        logprobs: { content: [{ token: "red", logprob: -3 }] },
      },
    ],
    reward: r,
  });
  let modelId: string;
  try {
    const m = await createModel(emu, "deleted-mid-job");
    modelId = m.id;
    const groups = Array.from({ length: 1000 }, () => ({ trajectories: [traj(1), traj(0)] }));
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: groups,
    });
    // Delete once the job is running.
    for (let i = 0; i < 200; i++) {
      const seen = await call(emu, "GET", `/preview/training-jobs/${job.json.id}/events`);
      if (seen.json.data.length > 0) break;
    }
    expect((await call(emu, "DELETE", `/preview/models/${m.id}`)).status).toBe(200);
    await waitForJob(emu, job.json.id);
    // Give the runner its next turns: it must stop without writing or emitting more.
    await new Promise((r) => setTimeout(r, 50));
    const events = (
      await call(emu, "GET", `/preview/training-jobs/${job.json.id}/events?limit=100`)
    ).json.data;
    expect(events.filter((e: any) => /^training_(ended|failed)$/.test(e.type))).toHaveLength(1);
    expect(events.at(-1).type).toBe("training_failed");
    expect(events.at(-1).data.error_message).toMatch(/deleted while this job ran/);
    expect(events[0].type).toBe("training_started");
    const status = await call(emu, "GET", `/preview/training-jobs/${job.json.id}`);
    expect(status.json).toMatchObject({ status: "FAILED", checkpoint_step: null });
    // The same name again starts clean, at step 0 only.
    const again = await createModel(emu, "deleted-mid-job");
    const cps = await call(emu, "GET", `/preview/models/${again.id}/checkpoints`);
    expect(cps.json.data.map((c: any) => c.step)).toEqual([0]);
  } finally {
    await emu.close();
  }
  const state = JSON.parse(await readFile(path.join(dataDir, "emulator-state.json"), "utf8"));
  expect(state.checkpoints.filter((c: any) => c.model_id === modelId)).toEqual([]);
});
