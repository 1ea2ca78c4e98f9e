// `demo` and `report` from the command line.
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { get } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { TrainingClient } from "../../src/client/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import { Recorder } from "../../src/recorder/index.js";
import { TrainableModel } from "../../src/training/index.js";
import { TrajectoryGroup } from "../../src/trajectory/index.js";
import { collect, inProcess, start, waitForOutput } from "./run.js";

const pageIndex = (html: string) =>
  JSON.parse(/<script type="application\/json" id="report-index">(.*?)<\/script>/s.exec(html)![1]!);

/** An emulator data directory with two models, each trained one step on a hand-made group. */
async function twoModels(): Promise<{ dataDir: string; ids: string[] }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "tr-cli-report-models-"));
  const emu = await startEmulator({ port: 0, apiKeys: { k: "alice" }, dataDir });
  const client = new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 });
  const ids: string[] = [];
  for (const name of ["first", "second"]) {
    const model = await TrainableModel.register(client, {
      project: "p",
      name,
      baseModel: "emulator/tiny",
    });
    ids.push(model.id);
    const t = (reward: number) => ({
      messages_and_choices: [
        { role: "user", content: "q" },
        {
          index: 0,
          finish_reason: "stop",
          message: { role: "assistant", content: "a" },
          logprobs: null,
        },
      ],
      reward,
      metadata: { scenario: "s" },
    });
    await model.log(
      [
        TrajectoryGroup.fromJSON({
          trajectories: [t(0), t(name === "first" ? 0.2 : 0.8)],
        } as never),
      ],
      {
        split: "val",
      },
    );
  }
  // Closed, so its state is on disk; the service test starts its own.
  await emu.close();
  return { dataDir, ids };
}

it("demo trains the agent, prints its progress and writes the report it names", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-cli-demo-"));
  const out = path.join(dir, "demo.html");
  const r = await inProcess(["demo", "--steps", "1", "--report", out, "--json"]);
  expect(r.code).toBe(0);
  const result = JSON.parse(r.stdout);
  expect(result.reportPath).toBe(out);
  expect(result.rewards.length).toBeGreaterThanOrEqual(2);
  expect(r.stderr).toContain("emulator at http://127.0.0.1:");
  expect(readFileSync(out, "utf8")).toMatch(/^<!doctype html>/i);
}, 120_000);

it("report writes one HTML page from a JSONL file of groups", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-cli-report-"));
  const groups = path.join(dir, "groups.jsonl");
  const prompt = { role: "user", content: "say red" };
  const choice = (content: string) => ({
    index: 0,
    finish_reason: "stop",
    message: { role: "assistant", content },
    logprobs: { content: [{ token: content, logprob: -0.7, bytes: null, top_logprobs: [] }] },
  });
  const group = {
    trajectories: [
      { messages_and_choices: [prompt, choice("red")], reward: 1 },
      { messages_and_choices: [prompt, choice("blue")], reward: 0 },
    ],
  };
  await writeFile(groups, `${JSON.stringify(group)}\n`);
  const out = path.join(dir, "report.html");
  const r = await inProcess(["report", "--groups", groups, "--out", out, "--title", "my run"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(`Wrote ${out}: 1 step(s), 2 trajectories.\n`);
  expect(readFileSync(out, "utf8")).toContain("my run");

  const neither = await inProcess(["report", "--out", out]);
  expect(neither.code).toBe(2);
  expect(neither.stderr).toContain(
    "give --data-dir DIR, --groups FILE, --model MODEL or --store DIR.",
  );
  expect(existsSync(path.join(dir, "nothing.html"))).toBe(false);
});

it("report exits 1 when the run holds no trajectory, and the page it writes says so", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "tr-cli-report-empty-"));
  const groups = path.join(dir, "empty.jsonl");
  await writeFile(groups, `${JSON.stringify({ trajectories: [] })}\n`);
  const out = path.join(dir, "empty.html");
  const r = await inProcess(["report", "--groups", groups, "--out", out]);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toBe(
    `Nothing to report: ${groups} holds no trajectory. Wrote ${out}, which says so.\n`,
  );
  expect(readFileSync(out, "utf8")).toContain("Nothing logged");
});

it("report --model takes an id, a unique id prefix, ENTITY/PROJECT/NAME, PROJECT/NAME or a name; two of them compare", async () => {
  const { dataDir, ids } = await twoModels();
  {
    const out = path.join(dataDir, "r.html");
    for (const ref of [ids[1]!, ids[1]!.slice(0, 8), "alice/p/second", "p/second", "second"]) {
      const r = await inProcess(["report", "--data-dir", dataDir, "--model", ref, "--out", out]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(pageIndex(readFileSync(out, "utf8")).title).toBe("p/second");
    }
    const missing = await inProcess([
      "report",
      "--data-dir",
      dataDir,
      "--model",
      "nobody/p/x",
      "--out",
      out,
    ]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('No model "nobody/p/x"');
    expect(missing.stderr).toContain("alice/p/first");
    // Two models of one directory, side by side.
    const both = await inProcess([
      "report",
      "--data-dir",
      dataDir,
      "--model",
      "first",
      "--model",
      "second",
      "--out",
      out,
    ]);
    expect(both.code).toBe(0);
    const index = pageIndex(readFileSync(out, "utf8"));
    expect(index.runs).toEqual(["p/first", "p/second"]);
    expect(index.steps.map((s: any) => `${s.run} ${s.split}`)).toEqual([
      "p/first val",
      "p/second val",
    ]);
  }
});

it("report --data-dir A --data-dir B puts two runs on one page", async () => {
  const a = await twoModels();
  const b = await twoModels();
  {
    const out = path.join(a.dataDir, "two.html");
    const r = await inProcess([
      "report",
      "--data-dir",
      a.dataDir,
      "--data-dir",
      b.dataDir,
      "--model",
      "second",
      "--out",
      out,
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const index = pageIndex(readFileSync(out, "utf8"));
    // Same model name in both: the runs are named by their directories.
    expect(index.runs).toEqual([path.basename(a.dataDir), path.basename(b.dataDir)]);
    const bad = await inProcess([
      "report",
      "--data-dir",
      a.dataDir,
      "--data-dir",
      b.dataDir,
      "--model",
      "x",
      "--model",
      "y",
      "--model",
      "z",
      "--out",
      out,
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "give one --model for every --data-dir (2), one for all, or none; got 3.",
    );
  }
});

it("report --serve serves the live page on 127.0.0.1 only, and --model alone reads the service's checkpoints", async () => {
  const { dataDir, ids } = await twoModels();
  const child = start(["report", "--serve", "--data-dir", dataDir, "--interval", "200"]);
  try {
    const line = await waitForOutput(child, /Serving the live report at (\S+)/);
    const served = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(line)![1]!;
    const page = await fetch(served);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
    const html = await page.text();
    expect(html).toContain('id="live"');
    expect(pageIndex(html).live).toEqual({ version: expect.any(String), interval: 200 });
    const version = await (await fetch(`${served}version`)).json();
    expect(version.version).toBe(pageIndex(html).live.version);
    // A name that points here from another site is refused (DNS rebinding).
    const port = new URL(served).port;
    const rebound = await new Promise<number | undefined>((resolve, reject) =>
      get(
        { host: "127.0.0.1", port, path: "/", headers: { host: `evil.example:${port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      ).on("error", reject),
    );
    expect(rebound).toBe(421);
  } finally {
    child.kill("SIGTERM");
    await collect(child);
  }
  // The service: its checkpoint list (the emulator's, here) drawn as the run.
  const emu = await startEmulator({ port: 0, apiKeys: { k: "alice" } });
  const url = emu.url;
  const keyFile = path.join(dataDir, "key");
  await writeFile(keyFile, "k");
  const client = new TrainingClient({ apiKey: "k", baseURL: url, maxRetries: 0 });
  const model = await TrainableModel.register(client, {
    project: "p",
    name: "trained",
    baseModel: "emulator/tiny",
  });
  const recorder = new Recorder({ logger: { warn() {} } as never });
  const openai = model.openai({ recorder });
  const rollouts = await Promise.all(
    [0, 1].map((i) =>
      recorder.rollout(async (t) => {
        await openai.chat.completions.create({
          model: "",
          messages: [{ role: "user", content: "q" }],
          max_tokens: 2,
          seed: i,
        });
        t.reward = i;
      }),
    ),
  );
  await model.train([new TrajectoryGroup(rollouts)], { learningRate: 1e-5 }, { pollIntervalMs: 5 });
  const out = path.join(dataDir, "service.html");
  const r = await inProcess([
    "report",
    "--model",
    model.id,
    "--base-url",
    url,
    "--api-key-file",
    keyFile,
    "--out",
    out,
  ]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const html = readFileSync(out, "utf8");
  const index = pageIndex(html);
  expect(index.training.map((x: any) => x.step)).toEqual([0]);
  expect(Object.keys(index.training[0].metrics)).toContain("loss/train");
  expect(html).toContain("the service's API lists checkpoints, not logged groups");
  expect(ids).toHaveLength(2);
  await emu.close();
}, 60_000);
