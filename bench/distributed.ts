// Rollouts through BullMQ and Redis (trajectory-recorder/bullmq) against the
// same rollouts gathered in one process. Each rollout is one chat completion
// that a local server answers after a simulated model latency; 1, 2 and 4
// worker processes each run CONCURRENCY rollouts at once. A GroupCollector in
// this process takes the groups (no training: the Training Service is not
// what is measured). Then the same rollouts through a bare BullMQ flow of the
// same shape and sizes (bench/distributed-bare-worker.ts), alternately with
// ours, for the CPU and Redis commands the library adds to BullMQ's own.
// Needs `redis-server` on the PATH.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FlowProducer, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { gatherTrajectoryGroups, Recorder, TrajectoryGroup } from "trajectory-recorder";
import {
  DirectoryPayloadStore,
  GroupCollector,
  RolloutProducer,
  TrainingCoordinator,
} from "trajectory-recorder/bullmq";
import type { TrainResult } from "../src/training/index.js";
import { type GroupInput, prepareGroups } from "../src/trajectory/group-wire.js";
import { converse } from "./distributed-conversation.js";

const GROUP = 8;
// BENCH_DISTRIBUTED_ROLLOUTS sets how many rollouts each run has (a multiple of 8).
const ROLLOUTS = Math.ceil(Number(process.env.BENCH_DISTRIBUTED_ROLLOUTS ?? 1000) / GROUP) * GROUP;
const LATENCY_MS = 20;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
// Rollouts at once per worker in the latency-bound runs: small enough that
// four workers together need well under one of this machine's two cores.
const LATENCY_BOUND = 1;
// Our components' default `eventsMaxLen`, given to the bounded bare flow too.
const EVENTS_MAX_LEN = 2000;
const quiet = { info: () => {}, warn: console.warn, error: console.error };

/** The simulated model, in its own process (a model server is another machine). */
export async function modelServer(
  script = "./distributed-model.ts",
  args = [String(LATENCY_MS)],
): Promise<{ url: string; close: () => void }> {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const proc = spawn(process.execPath, ["--import", "tsx", file, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve) => {
    let out = "";
    proc.stdout?.on("data", (d: Buffer) => {
      out += d;
      const m = /url (\S+)\n/.exec(out);
      if (m) resolve(m[1] as string);
    });
  });
  return { url, close: () => proc.kill("SIGKILL") };
}

export async function startRedis(): Promise<{ port: number; proc: ChildProcess }> {
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

export const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

export async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const num = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (num("used_cpu_user") + num("used_cpu_sys")) * 1000;
}

/** Calls per command since the server started (`INFO commandstats`). */
export async function redisCalls(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info("commandstats");
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls.set(m[1] as string, Number(m[2]));
  return calls;
}

/** Worker processes running `file` with `args`; resolves once each says "ready". */
export async function spawnWorkers(
  file: string,
  workers: number,
  args: string[],
): Promise<{ stop: () => Promise<number>; outputs: () => string[] }> {
  const path = fileURLToPath(new URL(file, import.meta.url));
  const procs = Array.from({ length: workers }, () =>
    spawn(
      process.execPath,
      [
        // e.g. BENCH_WORKER_NODE_ARGS=--cpu-prof to profile the workers.
        ...(process.env.BENCH_WORKER_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
        "--import",
        "tsx",
        // The BullMQ integration's .lua scripts, loaded as the build inlines them.
        "--import",
        fileURLToPath(new URL("../scripts/lua-hooks.mjs", import.meta.url)),
        path,
        ...args,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
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
  /** Stops the workers; resolves with the CPU they spent since they were ready, in ms. */
  const stop = async () => {
    const exits = procs.map((p) => new Promise((r) => p.once("exit", r)));
    for (const p of procs) p.kill("SIGTERM");
    await Promise.all(exits);
    return outputs.reduce((s, out) => s + Number(/cpu ([\d.]+)/.exec(out.out())?.[1] ?? 0), 0);
  };
  return { stop, outputs: () => outputs.map((o) => o.out()) };
}

/** Redis's `used_memory`, in bytes. */
export async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info("memory"))?.[1] ?? 0);
}

/**
 * Samples Redis's `used_memory` every `everyMs` from now on; `stop()` gives
 * the value before, the highest sampled and the value at the stop.
 */
export function sampleMemory(redis: Redis, everyMs: number) {
  const sampler = new Redis(redis.options);
  const first = usedMemory(sampler);
  let peak = 0;
  const timer = setInterval(() => {
    void usedMemory(sampler).then(
      (m) => {
        peak = Math.max(peak, m);
      },
      () => {},
    );
  }, everyMs);
  return async (): Promise<Memory> => {
    clearInterval(timer);
    const end = await usedMemory(sampler);
    sampler.disconnect();
    return { before: await first, peak: Math.max(peak, end), end };
  };
}

/** Redis `used_memory` around a run, in bytes. */
export interface Memory {
  before: number;
  /** The highest value sampled during the run. */
  peak: number;
  /** Once the run's last group was taken, before anything was closed. */
  end: number;
}

/** Wall time, this process's CPU, Redis's CPU, memory and commands while `body` runs. */
async function measure(
  redis: Redis,
  body: () => Promise<void>,
  rollouts = ROLLOUTS,
): Promise<Omit<Run, "workerCpuMs">> {
  const redisBefore = await redisCpuMs(redis);
  const callsBefore = await redisCalls(redis);
  const memory = sampleMemory(redis, 50);
  const cpu = process.cpuUsage();
  const start = performance.now();
  await body();
  const wallMs = performance.now() - start;
  const mainCpuMs = cpuMs(process.cpuUsage(cpu));
  const mem = await memory();
  const redisCpu = (await redisCpuMs(redis)) - redisBefore;
  const commands = new Map<string, number>();
  for (const [cmd, n] of await redisCalls(redis)) {
    // The bench's own sampling and counting, not the run's.
    if (cmd === "info") continue;
    const added = n - (callsBefore.get(cmd) ?? 0);
    if (added > 0) commands.set(cmd, added / rollouts);
  }
  return { wallMs, mainCpuMs, redisCpuMs: redisCpu, commands, memory: mem };
}

interface Run {
  wallMs: number;
  /** Commands Redis ran per rollout during the run, by command, counting those inside scripts. */
  commands: Map<string, number>;
  workerCpuMs: number;
  mainCpuMs: number;
  redisCpuMs: number;
  memory?: Memory;
}

async function inProcess(url: string, concurrency: number): Promise<Run> {
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
      concurrency,
      afterEach: (g) => void JSON.stringify(g),
      progressStream: { isTTY: false, write: () => true } as never,
    },
  );
  return {
    wallMs: performance.now() - start,
    workerCpuMs: 0,
    mainCpuMs: cpuMs(process.cpuUsage(cpu)),
    redisCpuMs: 0,
    commands: new Map(),
  };
}

/** A run's shape: calls per rollout, rollouts, and what collects the groups. */
interface Shape {
  turns: number;
  rollouts: number;
  /** A GroupCollector, or a TrainingCoordinator collecting and training (a stand-in service). */
  collect: "collector" | "coordinator";
  /** Where the workers write trajectories: the default Redis store, or a DirectoryPayloadStore. */
  store?: "redis" | "directory";
}
const ONE_CALL: Shape = { turns: 1, rollouts: ROLLOUTS, collect: "collector" };

/**
 * A model for the TrainingCoordinator runs: `train` does what the real one
 * does with the groups before its request (writes and checks each group's
 * wire JSON once, `prepareGroups`), then answers as a job that ended at once:
 * the Training Service is not what is measured.
 */
export function standInModel() {
  let step = 0;
  return {
    getStep: async () => step,
    followJob: async (): Promise<TrainResult> => {
      throw new Error("bench: no job to follow");
    },
    train: async (
      groups: readonly GroupInput[],
      _config?: unknown,
      run: { onJobCreated?: (job: { jobId: string; stepBefore: number }) => unknown } = {},
    ): Promise<TrainResult> => {
      await prepareGroups(groups, "train");
      await run.onJobCreated?.({ jobId: `job${step}`, stepBefore: step });
      step += 1;
      return { jobId: `job${step}`, step, metrics: {}, rawMetrics: {}, noSignalGroups: 0 };
    },
  };
}

async function throughQueue(
  port: number,
  url: string,
  workers: number,
  concurrency: number,
  redis: Redis,
  shape: Shape = ONE_CALL,
): Promise<Run> {
  const name = `bench-${workers}x${concurrency}-${Date.now()}`;
  const connection = { host: "127.0.0.1", port };
  const dir =
    shape.store === "directory" ? await mkdtemp(join(tmpdir(), "bench-payloads-")) : undefined;
  const payloads = dir ? new DirectoryPayloadStore({ dir }) : undefined;
  const procs = await spawnWorkers("./distributed-worker.ts", workers, [
    String(port),
    url,
    String(concurrency),
    name,
    String(shape.turns),
    ...(dir ? [dir] : []),
  ]);
  const groups = shape.rollouts / GROUP;
  let finished = 0;
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  let close: () => Promise<void>;
  if (shape.collect === "coordinator") {
    // Every group trained: batches of 8 groups (rollouts a multiple of 64).
    const coordinator = await TrainingCoordinator.start({
      connection,
      name,
      model: standInModel(),
      trainEvery: { groups: 8 },
      pollIntervalMs: 200,
      concurrency: 8,
      logger: quiet,
      payloads,
      onTrained: (r) => {
        finished += r.groups.length;
        if (finished === groups) resolve();
      },
    });
    close = () => coordinator.close();
  } else {
    const collector = await GroupCollector.start({
      connection,
      name,
      concurrency: 8,
      logger: quiet,
      payloads,
    });
    collector.worker.on("completed", () => ++finished === groups && resolve());
    close = () => collector.close();
  }
  const producer = new RolloutProducer({ connection, name });
  const measured = await measure(
    redis,
    async () => {
      await producer.enqueue(
        Array.from({ length: groups }, (_, g) => ({
          id: `g${g}`,
          payload: { g },
          rollouts: GROUP,
        })),
      );
      await done;
    },
    shape.rollouts,
  );
  await producer.close();
  await close();
  const workerCpuMs = await procs.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  return { ...measured, workerCpuMs };
}

/** The JSON length of one recorded trajectory as a RolloutWorker returns it. */
async function trajectoryChars(url: string, shape: Shape = ONE_CALL): Promise<number> {
  const recorder = new Recorder();
  const openai = recorder.wrap(new OpenAI({ apiKey: "k", baseURL: url, maxRetries: 0 }));
  const trajectory = await recorder.rollout(
    async (t) => {
      await converse(openai, shape.turns);
      t.reward = 7;
    },
    { metadata: { group_id: `g${shape.rollouts / GROUP - 1}`, rollout_index: GROUP - 1 } },
  );
  trajectory.initial_policy_version = 0;
  trajectory.final_policy_version = 0;
  return JSON.stringify(trajectory).length;
}

/**
 * The same rollouts through BullMQ alone: a FlowProducer parent job per group
 * with its rollouts as children (same ids and data), workers in their own
 * processes making the same call without a recorder and returning as many
 * characters of JSON as a trajectory, and a parent worker here that reads the
 * children's results and does nothing else.
 */
async function bareFlow(
  port: number,
  url: string,
  workers: number,
  concurrency: number,
  redis: Redis,
  resultChars: number,
  shape: Shape = ONE_CALL,
  bounded = false,
): Promise<Run> {
  const name = `bare-${workers}x${concurrency}-${Date.now()}`;
  const connection = { host: "127.0.0.1", port };
  const rolloutQueue = `${name}-rollouts`;
  // Bounded as BullMQ's docs advise (and as ours is): finished jobs removed
  // (a child's result is kept in its parent's `:processed` until the parent
  // completes) and each queue's events stream capped at our default.
  const queues = bounded
    ? [rolloutQueue, `${name}-groups`].map(
        (q) => new Queue(q, { connection, streams: { events: { maxLen: EVENTS_MAX_LEN } } }),
      )
    : [];
  await Promise.all(queues.map((q) => q.waitUntilReady()));
  const removed = bounded ? { removeOnComplete: true } : {};
  const procs = await spawnWorkers("./distributed-bare-worker.ts", workers, [
    String(port),
    url,
    String(concurrency),
    rolloutQueue,
    String(resultChars),
    String(shape.turns),
  ]);
  const groups = shape.rollouts / GROUP;
  let completed = 0;
  let read = 0;
  const parents = new Worker(
    `${name}-groups`,
    async (job) => {
      read += Object.keys(await job.getChildrenValues()).length;
    },
    { connection, concurrency: 8 },
  );
  const done = new Promise<void>((resolve) =>
    parents.on("completed", () => ++completed === groups && resolve()),
  );
  await parents.waitUntilReady();
  const flows = new FlowProducer({ connection });
  const measured = await measure(
    redis,
    async () => {
      for (let i = 0; i < groups; i += 50) {
        await flows.addBulk(
          Array.from({ length: Math.min(50, groups - i) }, (_, k) => {
            const id = `g${i + k}`;
            return {
              name: "group",
              queueName: `${name}-groups`,
              data: { rollouts: GROUP, metadata: {} },
              opts: { jobId: id, ...removed },
              children: Array.from({ length: GROUP }, (_, index) => ({
                name: "rollout",
                queueName: rolloutQueue,
                data: { groupId: id, index, payload: { g: i + k } },
                opts: { jobId: `${id}#${index}`, ...removed },
              })),
            };
          }),
        );
      }
      await done;
    },
    shape.rollouts,
  );
  await flows.close();
  await parents.close();
  await Promise.all(queues.map((q) => q.close()));
  const workerCpuMs = await procs.stop();
  // Said, not thrown: on a machine this loaded BullMQ's own flow has been
  // seen to hand a parent fewer children's values than it ran.
  if (read !== shape.rollouts)
    console.warn(`bare flow: the parents read ${read} results of ${shape.rollouts} rollouts`);
  return { ...measured, workerCpuMs };
}

export const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const totalCommands = (r: Run) => [...r.commands.values()].reduce((a, b) => a + b, 0);

// The rollout shapes against the bare BullMQ flow, in alternating pairs:
// one call and an agent's four tool-calling calls per rollout, collected by
// a GroupCollector or by a TrainingCoordinator that also trains (a stand-in
// service). BENCH_DISTRIBUTED_PAIRS pairs of each (default 3),
// BENCH_DISTRIBUTED_SHAPE_ROLLOUTS rollouts a run (a multiple of 64, default 512).
const PAIRS = Number(process.env.BENCH_DISTRIBUTED_PAIRS ?? 3);
const SHAPE_ROLLOUTS =
  Math.ceil(Number(process.env.BENCH_DISTRIBUTED_SHAPE_ROLLOUTS ?? 512) / 64) * 64;
const SHAPE_WORKERS = 2;
// BENCH_DISTRIBUTED_SHAPES=4:coordinator,4:collector runs only those shapes
// (calls per rollout : what collects), to iterate on one.
const ONLY_SHAPES = process.env.BENCH_DISTRIBUTED_SHAPES?.split(",").map((s) => s.trim());
const SHAPE_CONCURRENCY = 4;
const TARGETS: Record<string, number> = { collector: 1.15, coordinator: 1.25 };

async function shapeRatios(port: number, url: string, redis: Redis) {
  const rows: Record<string, { value: string }> = {};
  for (const turns of [1, 4]) {
    for (const collect of ["collector", "coordinator"] as const) {
      if (ONLY_SHAPES && !ONLY_SHAPES.includes(`${turns}:${collect}`)) continue;
      const shape: Shape = { turns, rollouts: SHAPE_ROLLOUTS, collect };
      const chars = await trajectoryChars(url, shape);
      const pairs: [Run, Run][] = [];
      for (let k = 0; k < PAIRS; k++) {
        // Alternating which runs first: the machine's load moves within a run.
        const ours = () => throughQueue(port, url, SHAPE_WORKERS, SHAPE_CONCURRENCY, redis, shape);
        const bare = () =>
          bareFlow(port, url, SHAPE_WORKERS, SHAPE_CONCURRENCY, redis, chars, shape);
        if (k % 2 === 0) {
          const o = await ours();
          pairs.push([o, await bare()]);
        } else {
          const b = await bare();
          pairs.push([await ours(), b]);
        }
      }
      const allCpu = (r: Run) => r.workerCpuMs + r.mainCpuMs + r.redisCpuMs;
      const cpu = pairs.map(([o, b]) => allCpu(o) / allCpu(b));
      const wall = pairs.map(([o, b]) => o.wallMs / b.wallMs);
      const commands =
        pairs.reduce((s, [o]) => s + totalCommands(o), 0) /
        pairs.reduce((s, [, b]) => s + totalCommands(b), 0);
      const per = (f: (r: Run) => number, i: 0 | 1) =>
        `${((pairs.reduce((s, p) => s + f(p[i]), 0) / pairs.length / shape.rollouts) * 1000).toFixed(0)}`;
      const parts = (i: 0 | 1) =>
        [(r: Run) => r.workerCpuMs, (r: Run) => r.mainCpuMs, (r: Run) => r.redisCpuMs]
          .map((f) => per(f, i))
          .join("/");
      const label = `${turns} call${turns > 1 ? "s" : ""} per rollout, ${collect === "collector" ? "GroupCollector" : "TrainingCoordinator"}`;
      rows[`${label}: CPU ours ÷ bare, median (each pair)`] = {
        value: `×${median(cpu).toFixed(2)} (${cpu.map((r) => `×${r.toFixed(2)}`).join(", ")})${turns > 1 ? `; target ≤ ×${TARGETS[collect]}` : ""}`,
      };
      rows[`${label}: CPU µs per rollout, workers/collecting process/redis, ours | bare`] = {
        value: `${parts(0)} | ${parts(1)}`,
      };
      rows[`${label}: wall ÷ bare (median), Redis commands ÷ bare`] = {
        value: `×${median(wall).toFixed(2)}, ×${commands.toFixed(3)} (${(pairs.reduce((s, [o]) => s + totalCommands(o), 0) / pairs.length).toFixed(1)} vs ${(pairs.reduce((s, [, b]) => s + totalCommands(b), 0) / pairs.length).toFixed(1)} per rollout); target ≤ ×1.05`,
      };
    }
  }
  return rows;
}

// The payload store's cost: 4-call rollouts trained by a TrainingCoordinator,
// trajectories written to the default RedisPayloadStore (and with
// BENCH_DISTRIBUTED_STORES=redis,directory a DirectoryPayloadStore too),
// against the bare flow returning each trajectory-sized result as its job's
// result, with BullMQ's defaults and bounded as its docs advise (finished
// jobs removed, events capped at our default). Rounds of one run of each
// side, in rotating order: BENCH_DISTRIBUTED_PAIRS rounds (default 3).
const STORES = (process.env.BENCH_DISTRIBUTED_STORES ?? "redis")
  .split(",")
  .map((s) => s.trim()) as ("redis" | "directory")[];
const PAYLOAD_TARGETS = { cpu: 1.3, memory: 1.2 };

/** The commands one side runs more of per rollout than the other, most first (medians). */
function mostAdded(ours: Run[], base: Run[]): string {
  const names = new Set([...ours, ...base].flatMap((r) => [...r.commands.keys()]));
  const added = [...names].map((c) => {
    const of = (rs: Run[]) => median(rs.map((r) => r.commands.get(c) ?? 0));
    return [c, of(ours) - of(base)] as const;
  });
  return added
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([c, n]) => `${c} ${n >= 0 ? "+" : ""}${n.toFixed(2)}`)
    .join(", ");
}

async function payloadRows(port: number, url: string, redis: Redis) {
  const shape = (store?: "redis" | "directory"): Shape => ({
    turns: 4,
    rollouts: SHAPE_ROLLOUTS,
    collect: "coordinator",
    store,
  });
  const chars = await trajectoryChars(url, shape());
  const sides: { label: string; run: () => Promise<Run> }[] = [
    ...STORES.map((store) => ({
      label: `ours, ${store === "redis" ? "RedisPayloadStore" : "DirectoryPayloadStore"}`,
      run: () => throughQueue(port, url, SHAPE_WORKERS, SHAPE_CONCURRENCY, redis, shape(store)),
    })),
    {
      label: "bare flow, BullMQ's defaults",
      run: () => bareFlow(port, url, SHAPE_WORKERS, SHAPE_CONCURRENCY, redis, chars, shape()),
    },
    {
      label: "bare flow, bounded",
      run: () => bareFlow(port, url, SHAPE_WORKERS, SHAPE_CONCURRENCY, redis, chars, shape(), true),
    },
  ];
  const runs = sides.map(() => [] as Run[]);
  for (let k = 0; k < PAIRS; k++) {
    // Rotating which side runs first: the machine's load moves within a round.
    for (let j = 0; j < sides.length; j++) {
      const i = (j + k) % sides.length;
      // Each run starts on an empty Redis: what the previous one kept is not its memory.
      await redis.flushall();
      runs[i]?.push(await (sides[i] as (typeof sides)[number]).run());
    }
  }
  const inFlight = SHAPE_WORKERS * SHAPE_CONCURRENCY;
  const rollouts = SHAPE_ROLLOUTS;
  const ownCpu = (r: Run) => r.workerCpuMs + r.mainCpuMs;
  const allCpu = (r: Run) => ownCpu(r) + r.redisCpuMs;
  const peakPerSlot = (r: Run) => ((r.memory?.peak ?? 0) - (r.memory?.before ?? 0)) / inFlight;
  const endPerRollout = (r: Run) => ((r.memory?.end ?? 0) - (r.memory?.before ?? 0)) / rollouts;
  const med = (rs: Run[], f: (r: Run) => number) => median(rs.map(f));
  const us = (ms: number) => `${((ms / rollouts) * 1000).toFixed(0)}`;
  const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;
  const rows: Record<string, { value: string }> = {};
  rows["trajectory JSON per rollout (the bare flow's result is as long)"] = {
    value: `${chars} characters`,
  };
  const bare = runs[STORES.length] as Run[];
  const bounded = runs[STORES.length + 1] as Run[];
  sides.forEach((side, i) => {
    const rs = runs[i] as Run[];
    rows[`${side.label}: CPU µs per rollout, workers + collecting process (+ Redis), median`] = {
      value: `${us(med(rs, ownCpu))} (${us(med(rs, allCpu))}); workers/collecting/Redis ${us(med(rs, (r) => r.workerCpuMs))}/${us(med(rs, (r) => r.mainCpuMs))}/${us(med(rs, (r) => r.redisCpuMs))}`,
    };
    rows[
      `${side.label}: Redis used_memory, peak per rollout in flight (${inFlight}) | left per rollout done`
    ] = {
      value: `${kb(med(rs, peakPerSlot))} (each run ${rs.map((r) => kb(peakPerSlot(r))).join(", ")}) | ${kb(med(rs, endPerRollout))}`,
    };
    rows[`${side.label}: Redis commands per rollout (script calls)`] = {
      value: `${med(rs, totalCommands).toFixed(1)} (${med(rs, (r) => (r.commands.get("evalsha") ?? 0) + (r.commands.get("eval") ?? 0)).toFixed(2)})`,
    };
  });
  STORES.forEach((store, i) => {
    const ours = runs[i] as Run[];
    const ratios = (f: (r: Run) => number, base: Run[]) =>
      ours.map((o, k) => f(o) / f(base[k] as Run));
    const show = (xs: number[]) =>
      `×${median(xs).toFixed(2)} (${xs.map((x) => `×${x.toFixed(2)}`).join(", ")})`;
    for (const [what, base] of [
      ["bare", bare],
      ["bare bounded", bounded],
    ] as const) {
      rows[`${store} store ÷ ${what}: CPU workers + collecting process, median (each round)`] = {
        value: `${show(ratios(ownCpu, base))}; with Redis ${show(ratios(allCpu, base))}; target ≤ ×${PAYLOAD_TARGETS.cpu}`,
      };
      rows[`${store} store ÷ ${what}: Redis memory per rollout in flight, median (each round)`] = {
        value: `${show(ratios(peakPerSlot, base))}; target ≤ ×${PAYLOAD_TARGETS.memory}`,
      };
      rows[`${store} store ÷ ${what}: Redis commands per rollout (most added)`] = {
        value: `×${(med(ours, totalCommands) / med(base, totalCommands)).toFixed(3)} (${mostAdded(ours, base)})`,
      };
    }
  });
  return rows;
}

export async function benchDistributed(): Promise<void> {
  const server = await modelServer();
  const { port, proc } = await startRedis();
  const redis = new Redis({ host: "127.0.0.1", port });
  const loadBefore = load();
  if (process.env.BENCH_DISTRIBUTED_PART === "payloads") {
    try {
      const rows = await payloadRows(port, server.url, redis);
      console.log(
        `\nThe payload store's cost against the bare BullMQ flow: 4-call rollouts, ${SHAPE_ROLLOUTS} a run, groups of ${GROUP} trained by a TrainingCoordinator (stand-in service), ${SHAPE_WORKERS} workers × ${SHAPE_CONCURRENCY}, ${LATENCY_MS} ms a call, ${PAIRS} rounds; ${cpus().length} CPUs, load average ${loadBefore} before and ${load()} after:`,
      );
      console.table(rows);
    } finally {
      redis.disconnect();
      proc.kill("SIGKILL");
      server.close();
    }
    return;
  }
  if (process.env.BENCH_DISTRIBUTED_PART === "shapes") {
    try {
      const rows = await shapeRatios(port, server.url, redis);
      console.log(
        `\nRollout shapes against the bare BullMQ flow: ${SHAPE_ROLLOUTS} rollouts a run, groups of ${GROUP}, ${SHAPE_WORKERS} workers × ${SHAPE_CONCURRENCY}, ${LATENCY_MS} ms a call, ${PAIRS} alternating pairs each; ${cpus().length} CPUs, load average ${loadBefore} before and ${load()} after:`,
      );
      console.table(rows);
    } finally {
      redis.disconnect();
      proc.kill("SIGKILL");
      server.close();
    }
    return;
  }
  try {
    const local = await inProcess(server.url, CONCURRENCY);
    const localOne = await inProcess(server.url, LATENCY_BOUND);
    const runs = new Map<string, Run>();
    for (const c of [CONCURRENCY, LATENCY_BOUND]) {
      for (const w of [1, 2, 4]) {
        runs.set(`${w}x${c}`, await throughQueue(port, server.url, w, c, redis));
      }
    }
    // Ours against the bare BullMQ flow, alternately twice (the other jobs'
    // load on a shared machine moves within a run).
    const chars = await trajectoryChars(server.url);
    const pairs: [Run, Run][] = [];
    for (let k = 0; k < 2; k++) {
      const ours =
        k === 0
          ? (runs.get(`1x${CONCURRENCY}`) as Run)
          : await throughQueue(port, server.url, 1, CONCURRENCY, redis);
      pairs.push([ours, await bareFlow(port, server.url, 1, CONCURRENCY, redis, chars)]);
    }
    const rate = (r: Run) => ROLLOUTS / (r.wallMs / 1000);
    const perRollout = (ms: number) => `${((ms / ROLLOUTS) * 1000).toFixed(0)} µs`;
    const rows: Record<string, { value: string }> = {};
    for (const [c, l] of [
      [CONCURRENCY, local],
      [LATENCY_BOUND, localOne],
    ] as const) {
      rows[`in-process gatherTrajectoryGroups, concurrency ${c}`] = {
        value: `${rate(l).toFixed(0)} rollouts/s (CPU ${perRollout(l.mainCpuMs)} per rollout)`,
      };
      const one = runs.get(`1x${c}`) as Run;
      for (const w of [1, 2, 4]) {
        const r = runs.get(`${w}x${c}`) as Run;
        rows[`queue, ${w} worker process${w > 1 ? "es" : ""} × ${c}`] = {
          value: `${rate(r).toFixed(0)} rollouts/s, ×${(rate(r) / rate(one)).toFixed(2)} of 1 worker`,
        };
      }
    }
    const q = runs.get(`1x${CONCURRENCY}`) as Run;
    rows[`queue CPU per rollout (1 × ${CONCURRENCY}): workers / collector+producer / redis`] = {
      value: `${perRollout(q.workerCpuMs)} / ${perRollout(q.mainCpuMs)} / ${perRollout(q.redisCpuMs)}`,
    };
    const top = [...q.commands].sort((a, b) => b[1] - a[1]);
    const total = top.reduce((sum, [, n]) => sum + n, 0);
    rows["redis commands per rollout (1 worker): total, top 6"] = {
      value: `${total.toFixed(1)}: ${top
        .slice(0, 6)
        .map(([c, n]) => `${c} ${n.toFixed(2)}`)
        .join(", ")}`,
    };
    const allCpu = (r: Run) => r.workerCpuMs + r.mainCpuMs + r.redisCpuMs;
    const sum = (f: (r: Run) => number, i: 0 | 1) => pairs.reduce((s, p) => s + f(p[i]), 0);
    const pairRatios = pairs.map(([o, b]) => `×${(allCpu(o) / allCpu(b)).toFixed(2)}`).join(", ");
    rows[
      `CPU per rollout, all processes, 1 worker × ${CONCURRENCY}: ours / bare BullMQ flow / in process`
    ] = {
      value: `${perRollout(sum(allCpu, 0) / pairs.length)} / ${perRollout(sum(allCpu, 1) / pairs.length)} / ${perRollout(local.mainCpuMs)}`,
    };
    rows["ours / bare BullMQ flow, CPU (both pairs; each pair)"] = {
      value: `×${(sum(allCpu, 0) / sum(allCpu, 1)).toFixed(2)} (${pairRatios}); target ≤ ×1.5`,
    };
    const parts = (i: 0 | 1) =>
      [(r: Run) => r.workerCpuMs, (r: Run) => r.mainCpuMs, (r: Run) => r.redisCpuMs]
        .map((f) => perRollout(sum(f, i) / pairs.length))
        .join(" / ");
    rows["bare BullMQ flow CPU per rollout: workers / producer+parent worker / redis"] = {
      value: parts(1),
    };
    const commands = (i: 0 | 1) => {
      const all = new Map<string, number>();
      for (const p of pairs)
        for (const [c, n] of p[i].commands) all.set(c, (all.get(c) ?? 0) + n / pairs.length);
      const sorted = [...all].sort((a, b) => b[1] - a[1]);
      const total = sorted.reduce((s, [, n]) => s + n, 0);
      const scripts = (all.get("evalsha") ?? 0) + (all.get("eval") ?? 0);
      return `${total.toFixed(1)} (${scripts.toFixed(2)} script calls): ${sorted
        .slice(0, 6)
        .map(([c, n]) => `${c} ${n.toFixed(2)}`)
        .join(", ")}`;
    };
    rows["redis commands per rollout, ours: all (script calls), top 6"] = { value: commands(0) };
    rows["redis commands per rollout, bare BullMQ flow: all (script calls), top 6"] = {
      value: commands(1),
    };
    rows["added by the queue per rollout (CPU, all processes, vs in-process)"] = {
      value: perRollout(q.workerCpuMs + q.mainCpuMs + q.redisCpuMs - local.mainCpuMs),
    };
    const q1 = runs.get(`1x${LATENCY_BOUND}`) as Run;
    rows[`added by the queue per rollout (wall, 1 worker × ${LATENCY_BOUND} vs in-process)`] = {
      value: perRollout((q1.wallMs - localOne.wallMs) * LATENCY_BOUND),
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
      `\n${ROLLOUTS} rollouts of one ${LATENCY_MS} ms call, groups of ${GROUP}, ${cpus().length} CPUs, load average ${loadBefore} before and ${load()} after:`,
    );
    console.table(rows);
    const shapes = await shapeRatios(port, server.url, redis);
    console.log(
      `\nRollout shapes against the bare BullMQ flow: ${SHAPE_ROLLOUTS} rollouts a run, ${SHAPE_WORKERS} workers × ${SHAPE_CONCURRENCY}, ${PAIRS} alternating pairs each; load average ${load()}:`,
    );
    console.table(shapes);
    const payloads = await payloadRows(port, server.url, redis);
    console.log(
      `\nThe payload store's cost against the bare BullMQ flow (4-call rollouts, TrainingCoordinator; BENCH_DISTRIBUTED_PART=payloads runs it alone); load average ${load()}:`,
    );
    console.table(payloads);
  } finally {
    redis.disconnect();
    proc.kill("SIGKILL");
    server.close();
  }
}
