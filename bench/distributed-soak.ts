// Soak of the BullMQ mode's Redis memory (issue 51's shape): N rollouts of M
// MB each through 4 workers, a coordinator handing each group to a sink that
// keeps only its id, Redis `used_memory` sampled every second. It checks the
// bound (peak ≤ rollouts in flight × M + 64 MB), that memory does not grow
// with rollouts done (the second half's peak against the first half's),
// that no group is lost or handed twice, and prints the curve as a table.
// Run from the repository:
//   SOAK_ROLLOUTS=200 SOAK_MB=5 node --import tsx --import ./scripts/lua-hooks.mjs bench/distributed-soak.ts
// It starts its own redis-server (REDIS_SERVER, else `redis-server` on the PATH).
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { Recorder } from "../src/index.js";
import {
  RolloutProducer,
  RolloutWorker,
  readProgress,
  TrainingCoordinator,
} from "../src/integrations/bullmq/index.js";

const ROLLOUTS = Number(process.env.SOAK_ROLLOUTS ?? 1000);
const MB = Number(process.env.SOAK_MB ?? 5);
const WORKERS = 4;
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 4);
// How long a rollout takes: real ones wait on a model for seconds.
const ROLLOUT_MS = Number(process.env.SOAK_ROLLOUT_MS ?? 500);
const GROUP = 8;
const quiet = { info() {}, warn() {}, error: (m: string) => console.error(m) };

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

async function startRedis(port: number): Promise<ChildProcess> {
  const bin = process.env.REDIS_SERVER ?? "redis-server";
  const child = spawn(bin, ["--port", String(port), "--bind", "127.0.0.1", "--save", ""]);
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.on("error", reject);
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (/Ready to accept connections/.test(out)) resolve();
    });
  });
  return child;
}

async function main() {
  const port = await freePort();
  const server = await startRedis(port);
  const connection = { host: "127.0.0.1", port };
  const redis = new Redis(connection);
  const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info("memory"))?.[1]);
  const baseline = await used();
  const blob = "x".repeat(Math.round(MB * 1024 * 1024));
  const workers = [];
  for (let i = 0; i < WORKERS; i++) {
    workers.push(
      await RolloutWorker.start<{ n: number }>({
        connection,
        recorder: new Recorder(),
        concurrency: CONCURRENCY,
        logger: quiet,
        rollout: async ({ trajectory, index }) => {
          await new Promise((r) => setTimeout(r, ROLLOUT_MS));
          trajectory.reward = index;
          trajectory.metadata.blob = blob;
        },
      }),
    );
  }
  let handed = 0;
  const seen = new Set<string>();
  let twice = 0;
  const coordinator = await TrainingCoordinator.start({
    connection,
    model: { getStep: async () => 0 },
    sink: {
      add: (group) => {
        const id = String(group.metadata.group_id);
        if (seen.has(id)) twice++;
        seen.add(id);
        handed++;
      },
    },
    pollIntervalMs: 100,
    logger: quiet,
  });
  const samples: { t: number; used: number; done: number }[] = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    void used().then((u) =>
      samples.push({ t: (Date.now() - started) / 1000, used: u, done: handed }),
    );
  }, 1000);
  const producer = new RolloutProducer({ connection, logger: quiet });
  const groups = Math.ceil(ROLLOUTS / GROUP);
  await producer.enqueue(
    Array.from({ length: groups }, (_, i) => ({
      id: `soak${i}`,
      payload: { n: i },
      rollouts: GROUP,
    })),
  );
  while (handed < groups) await new Promise((r) => setTimeout(r, 200));
  clearInterval(sampler);
  const progress = await readProgress({ connection });
  const seconds = (Date.now() - started) / 1000;
  const peak = Math.max(...samples.map((s) => s.used));
  const inFlight = WORKERS * CONCURRENCY;
  const half = samples.filter((s) => s.done >= groups / 2);
  const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
  // Not growing with rollouts done: the second half's peak against the first half's.
  const firstHalf = samples.filter((s) => s.done < groups / 2);
  const peakOf = (list: typeof samples) => Math.max(0, ...list.map((s) => s.used));
  const bound = inFlight * MB * 1024 * 1024 + 64 * 1024 * 1024;
  await new Promise((r) => setTimeout(r, 1000));
  const end = await used();
  const keys = await redis.keys("*");
  const sizes = await Promise.all(
    keys.map(async (k) => [k, Number(await redis.memory("USAGE", k))] as const),
  );
  const largest = sizes
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([k, b]) => `${k}:${(b / 1024).toFixed(0)}KB`);
  console.log(
    JSON.stringify({
      rollouts: groups * GROUP,
      mbPerRollout: MB,
      workers: WORKERS,
      inFlight,
      seconds: Number(seconds.toFixed(1)),
      baselineMB: mb(baseline),
      peakMB: mb(peak),
      boundMB: mb(inFlight * MB * 1024 * 1024 + 64 * 1024 * 1024),
      endMB: mb(end),
      midMB: mb(half[0]?.used ?? end),
      handed,
      withinBound: peak <= bound,
      firstHalfPeakMB: mb(peakOf(firstHalf)),
      secondHalfPeakMB: mb(peakOf(half)),
      growing: peakOf(half) > peakOf(firstHalf) * 1.25 + 16 * 1024 * 1024,
      lost: groups - seen.size,
      handedTwice: twice,
      keys: keys.length,
      largest,
      progress: { groups: progress.groups.handed, rollouts: progress.rollouts },
      curveMB: samples.map((s) => `${s.t.toFixed(0)}s:${mb(s.used)}@${s.done}`),
    }),
  );
  // The curve as a compact table for docs/distributed.md: about 24 rows.
  const every = Math.max(1, Math.ceil(samples.length / 24));
  console.log("| t (s) | used_memory (MB) | rollouts done |\n| ---: | ---: | ---: |");
  for (const [i, x] of samples.entries()) {
    if (i % every === 0 || i === samples.length - 1 || x.used === peak) {
      console.log(`| ${x.t.toFixed(0)} | ${mb(x.used)} | ${x.done * GROUP} |`);
    }
  }
  await producer.close();
  await coordinator.close();
  for (const w of workers) await w.close();
  redis.disconnect();
  server.kill("SIGKILL");
}

await main();
