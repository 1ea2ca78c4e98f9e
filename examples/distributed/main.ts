// The whole cluster on one machine: Redis, the emulator, N worker processes
// and the coordinator, then 16 groups of 8 rollouts and the progress until
// every group is trained. `npx tsx examples/distributed/main.ts [workers] [--shipper]`
// (`--shipper`: the coordinator hands groups to a TrajectoryShipper that trains)
// (needs `redis-server` on the PATH; on Debian `apt-get install redis-server`).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { RolloutProducer, readProgress } from "trajectory-recorder/bullmq";
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
const tsx = ["--import", "tsx"];
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

// 5. Progress, from any process.
for (;;) {
  const p = await readProgress({ connection });
  const g = p.groups;
  console.log(
    `groups queued ${g.queued} running ${g.running} finished ${g.finished} failed ${g.failed} stale ${g.stale} ${viaShipper ? `handed ${g.handed}` : `trained ${g.trained}`}; reward mean ${p.rewardMean?.toFixed(3) ?? "-"}; step ${p.step}`,
  );
  const ended = g.failed + g.stale + (viaShipper ? g.uncertain + g.handOffFailed : 0);
  // Through the shipper: every 4 handed groups, one training job and one step.
  if (
    viaShipper
      ? g.handed + ended >= groups.length && p.step >= Math.floor(g.handed / 4)
      : g.trained + ended >= groups.length
  )
    break;
  await new Promise((r) => setTimeout(r, 1000));
}
// The coordinator (and its shipper) first, while the service is still up; Redis last.
for (const child of children.reverse()) {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
await emulator.close();
