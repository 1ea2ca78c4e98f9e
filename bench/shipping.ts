// What shipping a recorded group costs after the calls, beside bare
// baselines measured in the same run: `JSON.stringify` of the wire object and
// a bare `fetch` POST of it to a sink (a child process that reads and drops
// every body, so its work is not on this process's clock).
//
// BENCH_ROLLOUTS sets the size of the long run (default 1000 rollouts).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import OpenAI from "openai";
import {
  Recorder,
  TrainableModel,
  TrainingClient,
  type Trajectory,
  TrajectoryGroup,
  TrajectoryShipper,
} from "trajectory-recorder";
// Not public (the CLI's own path), so taken from the sources.
import { toWireGroups } from "../src/training/index.js";

const TRAJECTORIES = 8;
const TURNS = 10;
const TOKENS = 500;
const TOP = 5;

const SINK = `
const http = require("node:http");
const model = JSON.stringify({ id: "5b1f5d8e-3f5e-4a57-8d0a-6f0f3f1e2a11", entity: "e", project: "p", name: "n", base_model: "b" });
const server = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(req.url.endsWith("/preview/models") ? model : "{}");
  });
});
server.keepAliveTimeout = 60000;
// Ends with the bench, however the bench ends.
process.stdin.on("end", () => process.exit(0)).resume();
server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\\n"));
`;

export async function startSink(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ["-e", SINK], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) =>
    child.stdout.once("data", (d: Buffer) => resolve(d.toString().trim())),
  );
  return { url: `http://127.0.0.1:${port}/v1`, stop: () => child.kill() };
}

// Token strings from a vocabulary of a few thousand, as a tokenizer's would repeat.
const vocab = Array.from({ length: 4096 }, (_, i) => ` tok${i.toString(36)}`);
let seed = 1;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = () => vocab[Math.floor(rand() * vocab.length)] as string;
const logprob = () => -rand() * 12;
const utf8 = (s: string) => [...Buffer.from(s)];

function completionBody(tokens: number, top: number): string {
  const content = Array.from({ length: tokens }, () => {
    const token = pick();
    return {
      token,
      bytes: utf8(token),
      logprob: logprob(),
      top_logprobs: Array.from({ length: top }, () => {
        const t = pick();
        return { token: t, bytes: utf8(t), logprob: logprob() };
      }),
    };
  });
  return JSON.stringify({
    id: "c",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        logprobs: { content, refusal: null },
        // No token ids, as the docs' figures say: ids without the prompt's
        // (`prompt_token_ids`) are half of what the lineage check reads.
        message: { role: "assistant", content: content.map((t) => t.token).join("") },
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: tokens, total_tokens: tokens + 1 },
  });
}

/** A client whose fetch answers in memory with a fresh body of `tokens` logprob tokens. */
function fakeClient(recorder: Recorder, tokens: number, top: number): OpenAI {
  const fetch = async () =>
    new Response(completionBody(tokens, top), { headers: { "content-type": "application/json" } });
  return recorder.wrap(new OpenAI({ apiKey: "k", baseURL: "http://x/v1", fetch }));
}

async function rollout(recorder: Recorder, client: OpenAI, turns: number): Promise<Trajectory> {
  return recorder.rollout(async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "go" }];
    for (let i = 0; i < turns; i++) {
      const res = await client.chat.completions.create({ model: "m", messages });
      messages.push(res.choices[0]!.message, { role: "user", content: `turn ${i}` });
    }
  });
}

export async function recordGroup(recorder: Recorder, tokens = TOKENS, top = TOP) {
  const client = fakeClient(recorder, tokens, top);
  const ts: Trajectory[] = [];
  for (let i = 0; i < TRAJECTORIES; i++) ts.push(await rollout(recorder, client, TURNS));
  // The rows measure one history of TURNS Choices per rollout: say so loudly
  // if the recorder ever builds the fixture otherwise.
  for (const t of ts) {
    const choices = t.messages_and_choices.filter((m) => "finish_reason" in m).length;
    if (choices !== TURNS || t.additional_histories.length > 0)
      throw new Error(
        `bench fixture: expected ${TURNS} choices in one history, got ${choices} and ${t.additional_histories.length} more histories (${t.logs.join("; ")})`,
      );
  }
  return new TrajectoryGroup(ts);
}

const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

/** CPU ms, wall ms and worst event-loop stall (ms) of `work`. */
async function measure(work: () => Promise<unknown>) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  // A timer keeps the loop turning, so a stall shows up even when nothing else is due.
  const tick = setInterval(() => {}, 1);
  h.enable();
  // Let the monitor's timer run once first, or a block right at the start goes unseen.
  await new Promise((r) => setTimeout(r, 5));
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const wall = performance.now() - t0;
  const cpuSpent = cpuMs(cpu);
  h.disable();
  clearInterval(tick);
  return { cpu: cpuSpent, wall, stall: h.max / 1e6 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function postBare(url: string, body: string): Promise<void> {
  const res = await fetch(`${url}/preview/models/5b1f5d8e-3f5e-4a57-8d0a-6f0f3f1e2a11/log`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k" },
    body,
  });
  await res.text();
}

// The JS heap plus ArrayBuffer backing stores (typed arrays live outside the
// heap that heapUsed counts).
const heapNow = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Heap kept per recorded logprob token, with `top` alternatives each (typed arrays included). */
async function heapPerToken(top: number): Promise<number> {
  const recorder = new Recorder();
  const client = fakeClient(recorder, TOKENS, top);
  const kept: Trajectory[] = [];
  await rollout(recorder, client, 1); // warm
  global.gc?.();
  global.gc?.();
  const before = heapNow();
  for (let i = 0; i < 40; i++) kept.push(await rollout(recorder, client, 5));
  global.gc?.();
  global.gc?.();
  const after = heapNow();
  const tokens = kept.length * 5 * TOKENS;
  kept.length = 0;
  return (after - before) / tokens;
}

/** A long run: rollouts recorded and shipped as they finish, through a spool. */
async function longRun(url: string, rollouts: number) {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-spool-"));
  const model = await TrainableModel.register(new TrainingClient({ apiKey: "k", baseURL: url }), {
    project: "p",
    name: "n",
    baseModel: "b",
  });
  const shipper = new TrajectoryShipper({ model, spoolDir: dir, flushOnExit: false });
  const recorder = new Recorder({ shipper });
  const client = fakeClient(recorder, 200, TOP);
  global.gc?.();
  const base = process.memoryUsage();
  const baseHeap = heapNow();
  let peakHeap = 0;
  let peakRss = 0;
  const sample = setInterval(() => {
    peakHeap = Math.max(peakHeap, heapNow());
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  const t0 = performance.now();
  for (let g = 0; g < rollouts / TRAJECTORIES; g++) {
    const ts: Trajectory[] = [];
    for (let i = 0; i < TRAJECTORIES; i++) ts.push(await rollout(recorder, client, TURNS));
    await shipper.add(new TrajectoryGroup(ts));
  }
  await shipper.close();
  clearInterval(sample);
  await rm(dir, { recursive: true, force: true });
  return {
    seconds: (performance.now() - t0) / 1000,
    peakHeap: peakHeap - baseHeap,
    peakRss: peakRss - base.rss,
    shipped: shipper.stats().shipped,
  };
}

export async function shippingBench(): Promise<void> {
  const sink = await startSink();
  const recorder = new Recorder();
  const group = await recordGroup(recorder);
  const wire = group.toJSON();
  const bytes = Buffer.byteLength(JSON.stringify(wire));

  // toJSON + stringify against a bare stringify of the wire object, alternating.
  const bare: number[] = [];
  const ours: number[] = [];
  for (let i = 0; i < 6; i++) {
    let c = process.cpuUsage();
    JSON.stringify(wire);
    bare.push(cpuMs(c));
    c = process.cpuUsage();
    JSON.stringify(group);
    ours.push(cpuMs(c));
  }

  // toWireGroups (the CLI's log and train) against the same bare stringify.
  const bareToo: number[] = [];
  const wireGroups: number[] = [];
  for (let i = 0; i < 4; i++) {
    let c = process.cpuUsage();
    JSON.stringify(wire);
    bareToo.push(cpuMs(c));
    c = process.cpuUsage();
    toWireGroups([group], "bench");
    wireGroups.push(cpuMs(c));
  }

  const model = await TrainableModel.register(
    new TrainingClient({ apiKey: "k", baseURL: sink.url }),
    { project: "p", name: "n", baseModel: "b" },
  );
  const shipOne = async () => {
    const shipper = new TrajectoryShipper({ model, flushOnExit: false });
    await shipper.add(group);
    await shipper.close();
    if (shipper.stats().shipped !== 1) throw new Error("the bench group was not shipped");
  };
  const bareOne = () => postBare(sink.url, JSON.stringify(wire));
  await shipOne();
  await bareOne();
  const shipRuns: Awaited<ReturnType<typeof measure>>[] = [];
  const bareRuns: Awaited<ReturnType<typeof measure>>[] = [];
  for (let i = 0; i < 4; i++) {
    bareRuns.push(await measure(bareOne));
    shipRuns.push(await measure(shipOne));
  }

  // Throughput: 6 groups, two requests at a time either way.
  const N = 6;
  const groups = [group, ...(await Promise.all([1, 2].map(() => recordGroup(recorder))))];
  const wires = groups.map((g) => g.toJSON());
  const bareMany = async () => {
    let next = 0;
    const lane = async () => {
      while (next < N) await postBare(sink.url, JSON.stringify(wires[next++ % wires.length]));
    };
    await Promise.all([lane(), lane()]);
  };
  const shipMany = async () => {
    const shipper = new TrajectoryShipper({ model, flushOnExit: false, concurrency: 2 });
    for (let i = 0; i < N; i++) await shipper.add(groups[i % groups.length] as TrajectoryGroup);
    await shipper.close();
  };
  const manyBare = await measure(bareMany);
  const manyShip = await measure(shipMany);

  const heapTop = await heapPerToken(TOP);
  const heapNone = await heapPerToken(0);
  const long = await longRun(sink.url, Number(process.env.BENCH_ROLLOUTS ?? 1000));
  sink.stop();

  const ms = (n: number) => `${n.toFixed(0)} ms`;
  const x = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const cpuShip = median(shipRuns.map((r) => r.cpu));
  const cpuBare = median(bareRuns.map((r) => r.cpu));
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  console.log(
    `\nShipping one group of ${TRAJECTORIES} trajectories × ${TURNS} turns × ${TOKENS} logprob tokens (top ${TOP}), ${(bytes / 2 ** 20).toFixed(1)} MiB of JSON:`,
  );
  console.table({
    "toJSON + stringify (vs bare stringify of the wire object)": {
      value: ms(median(ours)),
      baseline: ms(median(bare)),
      ratio: x(median(ours), median(bare)),
      target: "≤ 1.3×",
    },
    "toWireGroups, the CLI's log and train (vs bare stringify of the wire object)": {
      value: ms(median(wireGroups)),
      baseline: ms(median(bareToo)),
      ratio: x(median(wireGroups), median(bareToo)),
      target: "",
    },
    "client CPU shipping one group (vs stringify + bare fetch)": {
      value: ms(cpuShip),
      baseline: ms(cpuBare),
      ratio: x(cpuShip, cpuBare),
      target: "≤ 1.5×",
    },
    "worst event-loop stall shipping one group (median of runs / worst)": {
      value: `${ms(median(shipRuns.map((r) => r.stall)))} / ${ms(Math.max(...shipRuns.map((r) => r.stall)))}`,
      baseline: `${ms(median(bareRuns.map((r) => r.stall)))} / ${ms(Math.max(...bareRuns.map((r) => r.stall)))}`,
      ratio: "",
      target: "≤ 50 ms",
    },
    [`throughput, ${N} groups, 2 at a time (groups/s)`]: {
      value: (N / (manyShip.wall / 1000)).toFixed(2),
      baseline: (N / (manyBare.wall / 1000)).toFixed(2),
      ratio: x(manyBare.wall, manyShip.wall),
      target: "≥ 0.8×",
    },
    "heap + array buffers per recorded logprob token, top 5": {
      value: `${heapTop.toFixed(0)} B`,
      baseline: "",
      ratio: "",
      target: "≤ 300 B",
    },
    "heap + array buffers per recorded logprob token, no alternatives": {
      value: `${heapNone.toFixed(0)} B`,
      baseline: "",
      ratio: "",
      target: "",
    },
    [`${process.env.BENCH_ROLLOUTS ?? 1000} rollouts × ${TURNS} turns × 200 tokens (top 5), spooled: peak heap / RSS above start`]:
      {
        value: `${mib(long.peakHeap)} / ${mib(long.peakRss)}`,
        baseline: "",
        ratio: "",
        target: `${long.shipped} groups in ${long.seconds.toFixed(0)} s`,
      },
  });
}
