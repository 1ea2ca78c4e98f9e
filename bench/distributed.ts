// Rollouts through BullMQ and Redis (trajectory-recorder/bullmq) against the
// same rollouts gathered in one process. Each rollout is one chat completion
// that a local server answers after a simulated model latency; 1, 2 and 4
// worker processes each run CONCURRENCY rollouts at once. A GroupCollector in
// this process takes the groups (no training: the Training Service is not
// what is measured). Needs `redis-server` on the PATH.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { gatherTrajectoryGroups, Recorder, TrajectoryGroup } from "trajectory-recorder";
import { GroupCollector, RolloutProducer } from "trajectory-recorder/bullmq";

const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 2000);
const GROUP = 8;
const LATENCY_MS = 20;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const quiet = { info: () => {}, warn: console.warn, error: console.error };

function modelServer(): Promise<{ url: string; close: () => void }> {
  const body = JSON.stringify({
    id: "c",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        logprobs: null,
        message: { role: "assistant", content: "hello" },
      },
    ],
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () =>
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(body);
      }, LATENCY_MS),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        close: () => server.close(),
      }),
    ),
  );
}

async function startRedis(): Promise<{ port: number; proc: ChildProcess }> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const proc = spawn("redis-server", args, { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    proc.on("error", (e) => reject(new Error(`redis-server could not start: ${e.message}`)));
    let out = "";
    proc.stdout?.on("data", (d: Buffer) => {
      out += d;
      if (out.includes("Ready to accept connections")) resolve();
    });
  });
  return { port, proc };
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const num = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (num("used_cpu_user") + num("used_cpu_sys")) * 1000;
}

interface Run {
  wallMs: number;
  workerCpuMs: number;
  mainCpuMs: number;
  redisCpuMs: number;
}

async function inProcess(url: string): Promise<Run> {
  const recorder = new Recorder();
  const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL: url, maxRetries: 0 }));
  const rollout = (i: number) => () =>
    recorder.rollout(async (t) => {
      await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
      });
      t.reward = i;
    });
  const cpu = process.cpuUsage();
  const start = performance.now();
  await gatherTrajectoryGroups(
    Array.from({ length: ROLLOUTS / GROUP }, () =>
      TrajectoryGroup.from(Array.from({ length: GROUP }, (_, i) => rollout(i))),
    ),
    {
      concurrency: CONCURRENCY,
      afterEach: (g) => void JSON.stringify(g),
      progressStream: { isTTY: false, write: () => true } as never,
    },
  );
  return {
    wallMs: performance.now() - start,
    workerCpuMs: 0,
    mainCpuMs: cpuMs(process.cpuUsage(cpu)),
    redisCpuMs: 0,
  };
}

async function throughQueue(
  port: number,
  url: string,
  workers: number,
  redis: Redis,
): Promise<Run> {
  const name = `bench-${workers}-${Date.now()}`;
  const connection = { host: "127.0.0.1", port };
  const file = fileURLToPath(new URL("./distributed-worker.ts", import.meta.url));
  const procs = Array.from({ length: workers }, () =>
    spawn(
      process.execPath,
      ["--import", "tsx", file, String(port), url, String(CONCURRENCY), name],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    ),
  );
  const outputs = procs.map((p) => {
    let out = "";
    const ready = new Promise<void>((resolve) =>
      p.stdout?.on("data", (d: Buffer) => {
        out += d;
        if (out.includes("ready")) resolve();
      }),
    );
    return { out: () => out, ready };
  });
  await Promise.all(outputs.map((o) => o.ready));
  const collector = await GroupCollector.start({ connection, name, concurrency: 8, logger: quiet });
  const groups = ROLLOUTS / GROUP;
  let collected = 0;
  const done = new Promise<void>((resolve) =>
    collector.worker.on("completed", () => ++collected === groups && resolve()),
  );
  const producer = new RolloutProducer({ connection, name });
  const redisBefore = await redisCpuMs(redis);
  const cpu = process.cpuUsage();
  const start = performance.now();
  await producer.enqueue(
    Array.from({ length: groups }, (_, g) => ({ id: `g${g}`, payload: { g }, rollouts: GROUP })),
  );
  await done;
  const wallMs = performance.now() - start;
  const mainCpuMs = cpuMs(process.cpuUsage(cpu));
  const redisCpu = (await redisCpuMs(redis)) - redisBefore;
  await producer.close();
  await collector.close();
  const exits = procs.map((p) => new Promise((r) => p.once("exit", r)));
  for (const p of procs) p.kill("SIGTERM");
  await Promise.all(exits);
  const workerCpuMs = outputs.reduce(
    (s, out) => s + Number(/cpu ([\d.]+)/.exec(out.out())?.[1] ?? 0),
    0,
  );
  return { wallMs, workerCpuMs, mainCpuMs, redisCpuMs: redisCpu };
}

export async function benchDistributed(): Promise<void> {
  const server = await modelServer();
  const { port, proc } = await startRedis();
  const redis = new Redis({ host: "127.0.0.1", port });
  try {
    const local = await inProcess(server.url);
    const runs = new Map<number, Run>();
    for (const w of [1, 2, 4]) runs.set(w, await throughQueue(port, server.url, w, redis));
    const rate = (r: Run) => ROLLOUTS / (r.wallMs / 1000);
    const one = runs.get(1) as Run;
    const perRollout = (ms: number) => `${((ms / ROLLOUTS) * 1000).toFixed(0)} µs`;
    const rows: Record<string, { value: string }> = {
      [`in-process gatherTrajectoryGroups, concurrency ${CONCURRENCY}`]: {
        value: `${rate(local).toFixed(0)} rollouts/s (CPU ${perRollout(local.mainCpuMs)} per rollout)`,
      },
    };
    for (const [w, r] of runs) {
      rows[`queue, ${w} worker process${w > 1 ? "es" : ""} × ${CONCURRENCY}`] = {
        value: `${rate(r).toFixed(0)} rollouts/s, ×${(rate(r) / rate(one)).toFixed(2)} of 1 worker`,
      };
    }
    const q = one;
    rows["queue CPU per rollout: workers / coordinator side / redis"] = {
      value: `${perRollout(q.workerCpuMs)} / ${perRollout(q.mainCpuMs)} / ${perRollout(q.redisCpuMs)}`,
    };
    rows["added by the queue per rollout (CPU, all processes, vs in-process)"] = {
      value: perRollout(q.workerCpuMs + q.mainCpuMs + q.redisCpuMs - local.mainCpuMs),
    };
    rows["added by the queue per rollout (wall, 1 worker vs in-process, same concurrency)"] = {
      value: perRollout((q.wallMs - local.wallMs) * CONCURRENCY),
    };
    // What more cores would allow, from the CPU each part spent: a worker
    // process is one JavaScript thread, Redis runs commands on one thread.
    const ceiling = (ms: number) => `${(ROLLOUTS / (ms / 1000)).toFixed(0)} rollouts/s`;
    rows["ceiling of one worker process on its own core (from its CPU per rollout)"] = {
      value: ceiling(q.workerCpuMs),
    };
    rows["ceiling of one Redis (from its CPU per rollout)"] = { value: ceiling(q.redisCpuMs) };
    rows[`latency-bound rate of one worker × ${CONCURRENCY} (${LATENCY_MS} ms per rollout)`] = {
      value: `${((CONCURRENCY * 1000) / LATENCY_MS).toFixed(0)} rollouts/s`,
    };
    console.log(
      `\n${ROLLOUTS} rollouts of one ${LATENCY_MS} ms call, groups of ${GROUP}, ${cpus().length} CPUs:`,
    );
    console.table(rows);
  } finally {
    redis.disconnect();
    proc.kill("SIGKILL");
    server.close();
  }
}
