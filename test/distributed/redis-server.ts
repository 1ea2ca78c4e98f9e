// A real redis-server on a free loopback port, with the append-only file
// fsynced on every write, so a restart keeps everything Redis acknowledged.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { inject } from "vitest";

export interface RedisServer {
  port: number;
  connection: { host: string; port: number };
  /** Kills it with SIGKILL (as a crash) and waits for it to be gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Freezes it (SIGSTOP): connections are accepted by the kernel, nothing answers. */
  pause(): void;
  /** Lets a frozen server run again (SIGCONT). */
  resume(): void;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startRedis(): Promise<RedisServer> {
  const dir = await mkdtemp(path.join(tmpdir(), "redis-"));
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const start = async () => {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir];
    args.push("--appendonly", "yes", "--appendfsync", "always", "--save", "");
    // Found (or installed) by the global setup, test/setup/global.ts.
    const bin = inject("systemTools").redisServer ?? "redis-server";
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    proc = child;
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.on("error", (e) =>
        reject(
          new Error(
            `redis-server could not start (${e.message}); install it (apt-get install -y redis-server), or set REDIS_SERVER to it.`,
          ),
        ),
      );
      child.on("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        if (/Ready to accept connections/.test(out)) resolve();
      });
    });
  };
  const kill = async () => {
    const p = proc;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((resolve) => p.once("exit", resolve));
    p.kill("SIGKILL");
    await gone;
  };
  await start();
  return {
    port,
    connection: { host: "127.0.0.1", port },
    kill,
    start,
    pause: () => proc?.kill("SIGSTOP"),
    resume: () => proc?.kill("SIGCONT"),
    close: async () => {
      proc?.kill("SIGCONT");
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
