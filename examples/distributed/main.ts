// The whole cluster on one machine: Redis, the emulator, N worker processes
// and the coordinator, then 16 groups of 8 rollouts and the progress until
// every group is accounted for (trained, failed, no signal, ...); then it exits. `node --import tsx --import ./scripts/lua-hooks.mjs examples/distributed/main.ts [workers] [--shipper]`
// (`--shipper`: the coordinator hands groups to a TrajectoryShipper that trains)
// (needs `redis-server` on the PATH; on Debian `apt-get install redis-server`).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { drain, RolloutProducer, readProgress } from "trajectory-recorder/bullmq";
import { startEmulator } from "trajectory-recorder/emulator";
import { TARGETS } from "./shared.js";

const workers = Number(process.argv[2] ?? 3);
const viaShipper = process.argv.includes("--shipper");
const here = path.dirname(fileURLToPath(import.meta.url));
const children: ChildProcess[] = [];
const run = (command: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp) => {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.stdout?.on("data", (d: Buffer) => {
      process.stdout.write(d);
      if (ready.test(d.toString())) resolve();
    });
  });
};

// 1. Redis, with every write on disk before it is acknowledged.
const port = 6400 + Math.floor(Math.random() * 500);
const dir = await mkdtemp(path.join(tmpdir(), "redis-"));
await run(
  "redis-server",
  [
    "--port",
    String(port),
    "--dir",
    dir,
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    "--logfile",
    "",
  ],
  process.env,
  /Ready to accept connections/,
);
// 2. The Training Service (here the emulator; point TRAINING_SERVICE_BASE_URL at the real one).
const emulator = await startEmulator({ port: 0, apiKeys: ["dev-key"] });
const env = {
  ...process.env,
  REDIS_PORT: String(port),
  TRAINING_SERVICE_BASE_URL: emulator.url,
  WANDB_API_KEY: "dev-key",
  MODEL_NAME: `say-the-word-${Date.now()}`,
  ...(viaShipper ? { SHIPPER_SPOOL_DIR: await mkdtemp(path.join(tmpdir(), "spool-")) } : {}),
};
// 3. N workers and the coordinator, each its own process.
// tsx, and the .lua scripts of the BullMQ integration loaded as the build inlines them.
const tsx = ["--import", "tsx", "--import", path.join(here, "../../scripts/lua-hooks.mjs")];
await Promise.all(
  Array.from({ length: workers }, () =>
    run(process.execPath, [...tsx, path.join(here, "worker.ts")], env, /ready/),
  ),
);
await run(process.execPath, [...tsx, path.join(here, "coordinator.ts")], env, /ready/);

// 4. Enqueue; running this again with the same ids would add nothing.
const connection = { host: "127.0.0.1", port };
const producer = new RolloutProducer({ connection });
const groups = Array.from({ length: 16 }, (_, i) => {
  const target = TARGETS[i % TARGETS.length] as string;
  return { id: `round1-${i}-${target}`, payload: { target }, rollouts: 8 };
});
console.log(await producer.enqueue(groups));
await producer.close();

// 5. Progress, from any process, until every group is in a final state:
// once nothing is queued or running, drain() asks the coordinator to train
// the last partial batch (through the shipper: to hand over the rest and
// flush it), and resolves when nothing is left.
const line = (p: Awaited<ReturnType<typeof readProgress>>) => {
  const g = p.groups;
  const shown = Object.entries(g)
    .filter(([state, n]) => n > 0 && state !== "finished" && state !== "total")
    .map(([state, n]) => `${state} ${n}`)
    .join(", ");
  return `groups: ${shown}; reward mean ${p.rewardMean?.toFixed(3) ?? "-"}; step ${p.step}; jobs ${p.trainingJobs}`;
};
for (;;) {
  const p = await readProgress({ connection });
  console.log(line(p));
  if (p.idle) break;
  await new Promise((r) => setTimeout(r, 1000));
}
const final = await drain({ connection });
console.log(`drained: ${line(final)}`);
const { ids } = await readProgress({ connection, ids: true });
for (const [state, list] of Object.entries(ids ?? {})) {
  if (list.length > 0) console.log(`  ${state}: ${list.join(", ")}`);
}
// The coordinator (and its shipper) first, while the service is still up; Redis last.
for (const child of children.reverse()) {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
await emulator.close();
