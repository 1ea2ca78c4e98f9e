// 400 rollouts in flight at the field's size (issue 51): agent rollouts of
// 10–40 calls with long prompts, through worker processes on this machine,
// a loopback model server in its own process (every call answered after
// SCALE_CALL_MS) and a real redis-server, trained by a TrainingCoordinator
// in this process against a stand-in service (its `train` writes and checks
// each group's wire JSON, then ends at once: the service is not what is
// measured). All SCALE_ROLLOUTS rollouts are enqueued first; the workers
// hold SCALE_IN_FLIGHT of them at once until the queue runs dry.
//
// Reports CPU per rollout, Redis `used_memory` (peak, per rollout in
// flight), the event loop's delay in the coordinator and each worker, the
// coordinator's handling per group apart from the training call, and checks
// that every enqueued group was trained exactly once. Run from the repository:
//   node --import tsx --import ./scripts/lua-hooks.mjs bench/distributed-scale.ts
// or `BENCH_ONLY=distributed-scale npm run bench`. Needs `redis-server` on the PATH.
import { cpus } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { RolloutProducer, readProgress, TrainingCoordinator } from "trajectory-recorder/bullmq";
import {
  cpuMs,
  load,
  modelServer,
  redisCalls,
  redisCpuMs,
  spawnWorkers,
  standInModel,
  startRedis,
  usedMemory,
} from "./distributed.js";

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const GROUP = 8;
/** Rollouts at once, over all workers. */
const IN_FLIGHT = num("SCALE_IN_FLIGHT", 400);
/** Worker processes; each runs its share of IN_FLIGHT. */
const WORKERS = num("SCALE_WORKERS", 4);
/** Groups per training step: 16 groups of 8 is Agent Lightning's 128 rollouts a step. */
const TRAIN_EVERY = num("SCALE_TRAIN_EVERY", 16);
/** Rollouts in all, rounded up to whole training steps. */
const ROLLOUTS =
  Math.ceil(num("SCALE_ROLLOUTS", 1280) / (GROUP * TRAIN_EVERY)) * GROUP * TRAIN_EVERY;
/** The model's latency per call, in ms. */
const CALL_MS = num("SCALE_CALL_MS", 1000);
/** Calls per rollout, spread evenly over this range. */
const [MIN_CALLS, MAX_CALLS] = (process.env.SCALE_CALLS ?? "10-40").split("-").map(Number) as [
  number,
  number,
];
/** The task's prompt, in characters (about 4 a token), sent with every call. */
const PROMPT_CHARS = num("SCALE_PROMPT_CHARS", 16_000);
/** Each tool result added to the conversation, in characters. */
const RESULT_CHARS = num("SCALE_RESULT_CHARS", 1_000);
/** Gives up when no group was trained for this long, in s. */
const STALL_S = num("SCALE_STALL_S", 180);
const quiet = { info: () => {}, warn: console.warn, error: console.error };

interface Sample {
  s: number;
  used: number;
  active: number;
  trained: number;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;
// The histogram counts from one sample to the next: the 10 ms between them are not delay.
const lateMs = (ns: number) => Math.max(0, ns / 1e6 - 10);
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** The stand-in service, with the time and CPU spent inside its `train` counted. */
function timedModel() {
  const inner = standInModel();
  const spent = { calls: 0, wallMs: 0, cpuMs: 0, groupBytes: 0 };
  const model = {
    ...inner,
    train: async (...args: Parameters<typeof inner.train>) => {
      const cpu = process.cpuUsage();
      const start = performance.now();
      try {
        spent.groupBytes += args[0].reduce((s, g) => s + JSON.stringify(g).length, 0);
        return await inner.train(...args);
      } finally {
        spent.calls++;
        spent.wallMs += performance.now() - start;
        spent.cpuMs += cpuMs(process.cpuUsage(cpu));
      }
    },
  };
  return { model, spent };
}

export async function benchDistributedScale(): Promise<void> {
  const server = await modelServer("./distributed-scale-model.ts", [String(CALL_MS)]);
  const { port, proc } = await startRedis();
  const connection = { host: "127.0.0.1", port };
  const redis = new Redis(connection);
  const name = `scale-${Date.now()}`;
  const loadBefore = load();
  const perWorker = Math.ceil(IN_FLIGHT / WORKERS);
  const groups = ROLLOUTS / GROUP;
  try {
    const { model, spent } = timedModel();
    const trained: string[] = [];
    const coordinator = await TrainingCoordinator.start({
      connection,
      name,
      model,
      trainEvery: { groups: TRAIN_EVERY },
      // Every group is trained, however far behind: the check below counts them.
      maxStepsOffPolicy: Number.POSITIVE_INFINITY,
      pollIntervalMs: 200,
      concurrency: 8,
      logger: quiet,
      onTrained: (r) => void trained.push(...r.groups),
    });
    // The collector's handling of each group, from its job turning active to completed.
    const collectStarted = new Map<string, number>();
    const collectMs: number[] = [];
    const collector = coordinator.collector?.worker;
    // Groups the collector refused (too many failed rollouts): counted, never trained.
    const failed = new Set<string>();
    collector?.on("failed", (job) => {
      if (job && (job.finishedOn || job.attemptsMade >= (job.opts.attempts ?? 1)))
        failed.add(job.id as string);
    });
    collector?.on("active", (job) => collectStarted.set(job.id as string, performance.now()));
    collector?.on("completed", (job) => {
      const at = collectStarted.get(job.id as string);
      if (at !== undefined) collectMs.push(performance.now() - at);
    });
    const before = await usedMemory(redis);
    const producer = new RolloutProducer({ connection, name, logger: quiet });
    const ids = Array.from({ length: groups }, (_, g) => `g${g}`);
    await producer.enqueue(ids.map((id, g) => ({ id, payload: { g }, rollouts: GROUP })));
    const queued = await usedMemory(redis);

    const redisCpuBefore = await redisCpuMs(redis);
    const callsBefore = await redisCalls(redis);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const samples: Sample[] = [];
    const sampler = setInterval(() => {
      void Promise.all([usedMemory(redis), redis.llen(`bull:${name}-rollouts:active`)]).then(
        ([used, active]) =>
          samples.push({
            s: (performance.now() - start) / 1000,
            used,
            active,
            trained: trained.length,
          }),
        () => {},
      );
    }, 1000);
    const workers = await spawnWorkers("./distributed-scale-worker.ts", WORKERS, [
      String(port),
      server.url,
      String(perWorker),
      name,
      String(PROMPT_CHARS),
      String(RESULT_CHARS),
      String(MIN_CALLS),
      String(MAX_CALLS),
    ]);
    let last = { n: -1, at: performance.now() };
    while (trained.length + failed.size < groups) {
      await new Promise((r) => setTimeout(r, 500));
      const ended = trained.length + failed.size;
      if (ended !== last.n) last = { n: ended, at: performance.now() };
      else if (performance.now() - last.at > STALL_S * 1000) {
        console.warn(
          `scale: no group trained for ${STALL_S} s; stopping with ${trained.length} of ${groups}.`,
        );
        break;
      }
    }
    const wallS = (performance.now() - start) / 1000;
    const mainCpu = cpuMs(process.cpuUsage(cpu));
    delay.disable();
    clearInterval(sampler);
    const redisCpu = (await redisCpuMs(redis)) - redisCpuBefore;
    let commands = 0;
    for (const [cmd, n] of await redisCalls(redis))
      if (cmd !== "info" && cmd !== "llen") commands += n - (callsBefore.get(cmd) ?? 0);
    const end = await usedMemory(redis);
    const workerCpu = await workers.stop();
    const progress = await readProgress({ connection, name });
    await producer.close();
    await coordinator.close();

    // Everything accounted for: each enqueued group trained exactly once.
    const counts = new Map<string, number>();
    for (const id of trained) counts.set(id, (counts.get(id) ?? 0) + 1);
    const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    const lost = ids.filter((id) => !counts.has(id) && !failed.has(id));
    const strays = [...counts.keys()].filter((id) => !ids.includes(id));

    // The steady window: while the workers held (nearly) all their slots.
    const full = samples.filter((s) => s.active >= 0.95 * IN_FLIGHT);
    const steady = full.length
      ? samples.filter((s) => s.s >= (full[0] as Sample).s && s.s <= (full.at(-1) as Sample).s)
      : [];
    const peak = Math.max(end, ...samples.map((s) => s.used));
    const steadyUsed = pct(
      steady.map((s) => s.used),
      0.5,
    );
    const steadyActive = pct(
      steady.map((s) => s.active),
      0.5,
    );
    const eld = workers
      .outputs()
      .map((out) => /eld ([\d.]+) ([\d.]+) ([\d.]+)/.exec(out)?.slice(1).map(Number) ?? [])
      .filter((e) => e.length === 3);
    const handlingCpu = mainCpu - spent.cpuMs;
    const per = (x: number, n: number) => `${((x / n) * 1000).toFixed(0)} µs`;
    const rows: Record<string, { value: string }> = {
      "groups enqueued; trained; failed (counted); trained twice; lost; unknown": {
        value: `${groups}; ${trained.length}; ${failed.size}; ${twice.length}; ${lost.length}; ${strays.length}${lost.length ? ` (lost: ${lost.slice(0, 5).join(", ")})` : ""}`,
      },
      "readProgress: groups trained, failed, total; rollouts finished, failed": {
        value: `${progress.groups.trained}, ${progress.groups.failed}, ${progress.groups.total}; ${progress.rollouts.finished}, ${progress.rollouts.failed}`,
      },
      "wall; rollouts/s; calls per rollout": {
        value: `${wallS.toFixed(0)} s; ${(ROLLOUTS / wallS).toFixed(1)}; ${MIN_CALLS}–${MAX_CALLS}`,
      },
      "rollouts in flight: target; median in the steady window (its length)": {
        value: `${IN_FLIGHT}; ${steadyActive} (${steady.length ? ((steady.at(-1) as Sample).s - (steady[0] as Sample).s).toFixed(0) : 0} s)`,
      },
      "trajectory JSON per rollout (mean, as trained)": {
        value: `${(spent.groupBytes / Math.max(1, trained.length * GROUP) / 1024).toFixed(0)} KB`,
      },
      "CPU per rollout: workers / coordinator process / Redis": {
        value: `${per(workerCpu, ROLLOUTS)} / ${per(mainCpu, ROLLOUTS)} / ${per(redisCpu, ROLLOUTS)}`,
      },
      "coordinator CPU per group apart from the training call (target ≤ 5 ms)": {
        value: `${ms(handlingCpu / groups)} (the training call: ${ms(spent.cpuMs / groups)} per group, ${spent.calls} calls)`,
      },
      "collector: a group's job from active to completed, p50 / p99 / max": {
        value: `${ms(pct(collectMs, 0.5))} / ${ms(pct(collectMs, 0.99))} / ${ms(Math.max(0, ...collectMs))} (${collectMs.length} groups)`,
      },
      "event-loop delay, coordinator process: p50 / p99 / max": {
        value: [50, 99, 100]
          .map((p) => ms(lateMs(p === 100 ? delay.max : delay.percentile(p))))
          .join(" / "),
      },
      "event-loop delay, each worker process: p50 / p99 / max": {
        value: `${eld.map((e) => e.map((x) => x.toFixed(0)).join("/")).join(", ")} ms`,
      },
      "Redis used_memory: before / queued / peak / steady median / end": {
        value: `${mb(before)} / ${mb(queued)} / ${mb(peak)} / ${mb(steadyUsed)} / ${mb(end)}`,
      },
      "Redis used_memory per rollout in flight: peak above start ÷ target; steady ÷ median in flight":
        {
          value: `${((peak - before) / IN_FLIGHT / 1024).toFixed(0)} KB; ${steadyActive ? ((steadyUsed - before) / steadyActive / 1024).toFixed(0) : "?"} KB`,
        },
      "Redis commands per rollout": { value: (commands / ROLLOUTS).toFixed(1) },
    };
    console.log(
      `\n${ROLLOUTS} rollouts, ${IN_FLIGHT} in flight over ${WORKERS} worker processes × ${perWorker}, ${MIN_CALLS}–${MAX_CALLS} calls each, a ${PROMPT_CHARS}-character prompt and ${RESULT_CHARS}-character tool results, ${CALL_MS} ms a call, trained every ${TRAIN_EVERY} groups of ${GROUP}; Node ${process.version}, ${cpus().length} CPUs, load average ${loadBefore} before and ${load()} after:`,
    );
    console.table(rows);
    console.log(
      `memory curve (s: MB used, rollouts active, groups trained): ${samples
        .filter((_, i) => i % 5 === 0)
        .map(
          (s) => `${s.s.toFixed(0)}:${(s.used / 1024 / 1024).toFixed(0)},${s.active},${s.trained}`,
        )
        .join(" ")}`,
    );
  } finally {
    redis.disconnect();
    proc.kill("SIGKILL");
    server.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchDistributedScale();
}
