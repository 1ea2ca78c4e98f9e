// What the durable store costs per recorded call (issue #45): the recording
// proxy with sessions, store on against store off, each in its own process,
// calls interleaved. A session is 4 calls (a short conversation); each call
// is written to the store after it is recorded, before its answer is sent.
// Targets: <= 0.2 ms p50 added at 64 tokens, <= 5% at 2,000 top-5 tokens.
//
// BENCH_ONLY=production runs these rows alone; BENCH_PROXY_SCALE=0.3 a third of the samples.
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { type Child, cpuMs, median, now, startChild, startUpstream } from "./proxy.js";

const SCALE = Number(process.env.BENCH_PROXY_SCALE ?? 1);
const n = (x: number) => Math.max(8, Math.round(x * SCALE));
const FILE = fileURLToPath(new URL("./production-server.ts", import.meta.url));

// One count per side, so that each side's sessions are 4 calls long.
const counts: Record<string, number> = {};
function call(client: OpenAI, long: boolean, tag: string) {
  const n = counts[tag] ?? 0;
  counts[tag] = n + 1;
  return client.chat.completions.create(
    {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: long ? 2000 : 64,
      ...(long ? { top_logprobs: 5 } : {}),
    } as never,
    { headers: { "x-trajectory-session": `${tag}-${Math.floor(n / 4)}` } },
  );
}

async function latency(off: OpenAI, on: OpenAI, long: boolean, rounds: number) {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const order: Array<[OpenAI, number[], string]> = [
      [off, a, "off"],
      [on, b, "on"],
    ];
    if (i % 2) order.reverse();
    for (const [client, into, tag] of order) {
      const t0 = now();
      await call(client, long, tag);
      into.push(now() - t0);
    }
  }
  return { off: median(a), on: median(b) };
}

async function cpu(child: Child, client: OpenAI, long: boolean, count: number, tag: string) {
  const before = (await child.ask("cpu")).cpu;
  for (let i = 0; i < count; i++) await call(client, long, tag);
  const after = (await child.ask("cpu")).cpu;
  return (cpuMs(after) - cpuMs(before)) / count;
}

export async function benchProduction(): Promise<void> {
  const upstream = await startUpstream();
  const memory = await startChild("memory", upstream.baseURL, FILE);
  const stored = await startChild("store", upstream.baseURL, FILE);
  try {
    const key = "any-key-on-loopback";
    const off = new OpenAI({ baseURL: memory.baseURL, apiKey: key, maxRetries: 0 });
    const on = new OpenAI({ baseURL: stored.baseURL, apiKey: key, maxRetries: 0 });
    for (let i = 0; i < n(300); i++) {
      await call(off, false, "off");
      await call(on, false, "on");
    }
    for (let i = 0; i < n(20); i++) {
      await call(off, true, "off");
      await call(on, true, "on");
    }
    const short = await latency(off, on, false, n(600));
    const long = await latency(off, on, true, n(60));
    const cpuOff = await cpu(memory, off, false, n(400), "off");
    const cpuOn = await cpu(stored, on, false, n(400), "on");
    const cpuOffLong = await cpu(memory, off, true, n(40), "off");
    const cpuOnLong = await cpu(stored, on, true, n(40), "on");
    const { stats } = await stored.ask("stats");
    console.table([
      {
        row: "64-token answer, p50 per call",
        "store off": `${short.off.toFixed(3)} ms`,
        "store on": `${short.on.toFixed(3)} ms`,
        added: `${(short.on - short.off).toFixed(3)} ms`,
        "CPU off / on": `${cpuOff.toFixed(3)} / ${cpuOn.toFixed(3)} ms`,
      },
      {
        row: "2,000-token top-5 logprobs, p50 per call",
        "store off": `${long.off.toFixed(2)} ms`,
        "store on": `${long.on.toFixed(2)} ms`,
        added: `${(((long.on - long.off) / long.off) * 100).toFixed(1)} %`,
        "CPU off / on": `${cpuOffLong.toFixed(2)} / ${cpuOnLong.toFixed(2)} ms`,
      },
    ]);
    console.log(
      `store after the run: ${stats.trajectories} trajectories, ${(stats.bytes / 1e6).toFixed(1)} MB in ${stats.segments} segment(s); Node ${process.version}`,
    );
  } finally {
    memory.proc.kill();
    stored.proc.kill();
    upstream.server.closeAllConnections();
    upstream.server.close();
  }
}
