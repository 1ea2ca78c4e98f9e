// The recording endpoint (t.baseURL) against the same calls sent straight to
// the upstream, in one run (issue #32):
// - added latency per call, 64-token answers (p50) and 2,000-token answers
//   with top-5 logprobs (%), direct and proxied calls interleaved;
// - the endpoint's CPU per call against a bare node:http forwarder of the
//   same bytes (each in its own process, its own CPU read before and after);
// - 1,000 concurrent rollouts through one endpoint: nothing lost, and the
//   heap per waiting token against the same calls from a wrapped client.
//
// - a 4-call conversation with the caller asking for logprobs (top 5), at 64
//   and 2,000 tokens: p50 added per call over the bare forwarder, and the
//   endpoint's process CPU per call (its rollouts opened and finished inside
//   the reading) against the forwarder's; beside them a forwarder through
//   the `openai` SDK that records nothing (what a hand-written proxy costs)
//   and the floor: the least recording from the bytes costs (the scan and a
//   parse, no rollouts, no SDK; see proxy-server.ts).
//
// BENCH_ONLY=proxy runs these rows alone; BENCH_PROXY_SCALE=0.3 a third of the samples;
// BENCH_PROXY_ROWS=conversation the conversation rows only. BENCH_PROXY_BEFORE=<checkout>
// runs another checkout's endpoint (its bench/proxy-server.ts, its src) beside this one in
// the same run, for paired before/after figures.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";

const SCALE = Number(process.env.BENCH_PROXY_SCALE ?? 1);
const n = (x: number) => Math.max(4, Math.round(x * SCALE));
const CONCURRENT = 1000;

let seed = 11;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const vocab = Array.from({ length: 4096 }, (_, i) => ` tok${i.toString(36)}`);
const tok = () => {
  const id = Math.floor(rand() * vocab.length);
  const text = vocab[id] as string;
  return {
    token: `token_id:${id}`,
    logprob: -rand() * 10,
    bytes: [...Buffer.from(text)],
    text,
    id,
  };
};
/** A vLLM-style answer of `count` tokens with `top` alternatives each, token ids included. */
function answer(count: number, top: number): string {
  const tokens = Array.from({ length: count }, tok);
  return JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1,
    model: "m",
    prompt_token_ids: [1, 2, 3, 4, 5, 6, 7, 8],
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        token_ids: tokens.map((t) => t.id),
        message: { role: "assistant", content: tokens.map((t) => t.text).join("") },
        logprobs: {
          content: tokens.map(({ token, logprob, bytes }) => ({
            token,
            logprob,
            bytes,
            top_logprobs: Array.from({ length: top }, () => {
              const a = tok();
              return { token: a.token, logprob: a.logprob, bytes: a.bytes };
            }),
          })),
          refusal: null,
        },
      },
    ],
    usage: { prompt_tokens: 8, completion_tokens: count, total_tokens: count + 8 },
  });
}

const SHORT = answer(64, 0);
const SHORT_TOP5 = answer(64, 5);
const LONG = answer(2000, 5);

export async function startUpstream() {
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw) as { max_tokens?: number; top_logprobs?: number };
      res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_bench" });
      res.end(body.max_tokens === 2000 ? LONG : body.top_logprobs === 5 ? SHORT_TOP5 : SHORT);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

export interface Child {
  proc: ChildProcess;
  baseURL: string;
  ask(command: string): Promise<any>;
}

export async function startChild(
  mode: string,
  upstream: string,
  file = fileURLToPath(new URL("./proxy-server.ts", import.meta.url)),
  cwd?: string,
): Promise<Child> {
  const proc = spawn(process.execPath, ["--expose-gc", "--import", "tsx", file, mode, upstream], {
    stdio: ["pipe", "pipe", "inherit"],
    ...(cwd ? { cwd } : {}),
  });
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  const queue: Array<(v: any) => void> = [];
  let first!: (v: any) => void;
  const ready = new Promise<any>((r) => (first = r));
  queue.push(first);
  lines.on("line", (line) => queue.shift()?.(JSON.parse(line)));
  const { baseURL } = await ready;
  return {
    proc,
    baseURL,
    ask: (command) =>
      new Promise((resolve) => {
        queue.push(resolve);
        proc.stdin?.write(`${command}\n`);
      }),
  };
}

export const now = () => Number(process.hrtime.bigint()) / 1e6;
export const median = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
export const cpuMs = (c: { user: number; system: number }) => (c.user + c.system) / 1000;
// The body the endpoint sends upstream: the direct call sends the same.
const training = { logprobs: true, return_token_ids: true, return_tokens_as_token_ids: true };
const call = (client: OpenAI, long: boolean, direct: boolean) =>
  client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: long ? 2000 : 64,
    ...(long ? { top_logprobs: 5 } : {}),
    ...(direct ? training : {}),
  } as never);

/**
 * p50 of direct, bare-forwarded and proxied calls, interleaved (rotating
 * which goes first). The forwarder and the endpoint are each another
 * process: the bare forwarder's row shows what the extra hop costs by
 * itself on this machine, the endpoint's what recording adds to it.
 */
async function latency(
  direct: OpenAI,
  bare: OpenAI,
  proxied: OpenAI,
  long: boolean,
  rounds: number,
) {
  const d: number[] = [];
  const b: number[] = [];
  const p: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const order: Array<[OpenAI, number[], boolean]> = [
      [direct, d, true],
      [bare, b, true],
      [proxied, p, false],
    ];
    for (let k = 0; k < i % 3; k++) order.push(order.shift() as [OpenAI, number[], boolean]);
    for (const [client, into, isDirect] of order) {
      const t0 = now();
      await call(client, long, isDirect);
      into.push(now() - t0);
    }
  }
  return { direct: median(d), bare: median(b), proxied: median(p) };
}

async function cpuPerCall(
  child: Child,
  client: OpenAI,
  long: boolean,
  calls: number,
  direct: boolean,
) {
  for (let i = 0; i < 20; i++) await call(client, long, direct);
  const before = (await child.ask("cpu")).cpu;
  for (let i = 0; i < calls; i++) await call(client, long, direct);
  const after = (await child.ask("cpu")).cpu;
  return (cpuMs(after) - cpuMs(before)) / calls;
}

export async function benchProxy(): Promise<void> {
  if (process.env.BENCH_PROXY_ROWS === "conversation") return benchConversation();
  const upstream = await startUpstream();
  const recording = await startChild("recording", upstream.baseURL);
  const bare = await startChild("bare", upstream.baseURL);
  try {
    const [key] = (await recording.ask("open 1")).keys as string[];
    const direct = new OpenAI({ baseURL: upstream.baseURL, apiKey: "upstream-key", maxRetries: 0 });
    const proxied = new OpenAI({ baseURL: recording.baseURL, apiKey: key, maxRetries: 0 });
    const forwarded = new OpenAI({ baseURL: bare.baseURL, apiKey: "upstream-key", maxRetries: 0 });
    // Warm-up: every path, until V8 has optimized them.
    for (let i = 0; i < n(300); i++) {
      await call(direct, false, true);
      await call(proxied, false, false);
      await call(forwarded, false, true);
    }
    for (let i = 0; i < n(20); i++) {
      await call(proxied, true, false);
      await call(forwarded, true, true);
    }
    const short = await latency(direct, forwarded, proxied, false, n(600));
    const long = await latency(direct, forwarded, proxied, true, n(60));
    const cpuShort = await cpuPerCall(recording, proxied, false, n(600), false);
    const bareShort = await cpuPerCall(bare, forwarded, false, n(600), true);
    const cpuLong = await cpuPerCall(recording, proxied, true, n(60), false);
    const bareLong = await cpuPerCall(bare, forwarded, true, n(60), true);
    await recording.ask("finish");

    // 1,000 rollouts at once, one call each, through one endpoint.
    const before = (await recording.ask("heap")).heap as number;
    const keys = (await recording.ask(`open ${CONCURRENT}`)).keys as string[];
    const t0 = now();
    const answers = await Promise.allSettled(
      keys.map((k) =>
        call(new OpenAI({ baseURL: recording.baseURL, apiKey: k, maxRetries: 0 }), false, false),
      ),
    );
    const wall = now() - t0;
    const waiting = (await recording.ask("heap")).heap as number;
    const done = await recording.ask("finish");
    const inproc = await recording.ask(`inproc ${CONCURRENT}`);
    const rejected = answers.filter((a) => a.status === "rejected") as PromiseRejectedResult[];
    const failed = rejected.length;
    for (const why of new Set(
      rejected.map((r) => String((r.reason as Error)?.message ?? r.reason)),
    ))
      console.log(`a concurrent call failed: ${why}`);
    console.table([
      {
        row: "64-token answer, p50 per call",
        direct: `${short.direct.toFixed(3)} ms`,
        "bare forwarder": `${short.bare.toFixed(3)} ms`,
        "via t.baseURL": `${short.proxied.toFixed(3)} ms`,
        "added vs direct": `${(short.proxied - short.direct).toFixed(3)} ms`,
        "added vs forwarder": `${(short.proxied - short.bare).toFixed(3)} ms`,
      },
      {
        row: "2,000-token top-5 logprobs, p50 per call",
        direct: `${long.direct.toFixed(2)} ms`,
        "bare forwarder": `${long.bare.toFixed(2)} ms`,
        "via t.baseURL": `${long.proxied.toFixed(2)} ms`,
        "added vs direct": `${(((long.proxied - long.direct) / long.direct) * 100).toFixed(1)} %`,
        "added vs forwarder": `${(((long.proxied - long.bare) / long.bare) * 100).toFixed(1)} %`,
      },
    ]);
    console.table([
      {
        row: "server CPU per call, 64 tokens",
        "bare forwarder": `${bareShort.toFixed(3)} ms`,
        "recording endpoint": `${cpuShort.toFixed(3)} ms`,
        ratio: `${(cpuShort / bareShort).toFixed(2)}x`,
      },
      {
        row: "server CPU per call, 2,000 top-5",
        "bare forwarder": `${bareLong.toFixed(3)} ms`,
        "recording endpoint": `${cpuLong.toFixed(3)} ms`,
        ratio: `${(cpuLong / bareLong).toFixed(2)}x`,
      },
    ]);
    console.table([
      {
        row: `${CONCURRENT} concurrent rollouts through one endpoint`,
        "calls failed": failed,
        "trajectories / Choices recorded": `${done.trajectories} / ${done.choices}`,
        "wall time": `${wall.toFixed(0)} ms`,
        "heap per waiting token": `${((waiting - before) / done.tokens).toFixed(0)} B`,
        "same calls in process": `${inproc.bytesPerToken.toFixed(0)} B`,
      },
    ]);
    console.log(`Node ${process.version}`);
  } finally {
    recording.proc.kill();
    bare.proc.kill();
    upstream.server.closeAllConnections();
    upstream.server.close();
  }
  await benchConversation();
}

const TURNS = 4;
type Message = { role: string; content: string };

/**
 * One conversation of {@link TURNS} calls, the caller asking for logprobs
 * (top 5), each call carrying the answers so far as an agent loop does;
 * `direct` adds what the endpoint adds upstream, so both sides send the
 * upstream the same body. Returns each call's time.
 */
async function conversation(client: OpenAI, long: boolean, direct: boolean): Promise<number[]> {
  const messages: Message[] = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "hi" },
  ];
  const times: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    const t0 = now();
    const answer = (await client.chat.completions.create({
      model: "m",
      messages,
      max_tokens: long ? 2000 : 64,
      logprobs: true,
      top_logprobs: 5,
      ...(direct ? training : {}),
    } as never)) as unknown as { choices: Array<{ message: { content: string } }> };
    times.push(now() - t0);
    messages.push(
      { role: "assistant", content: answer.choices[0]?.message.content ?? "" },
      { role: "user", content: `go on (${turn + 1})` },
    );
  }
  return times;
}

/** A side of the conversation rows: a server process and how to reach it. */
interface Side {
  name: string;
  child: Child;
  /** A client per conversation (a recording endpoint: a rollout's key each). */
  client(i: number): OpenAI;
  direct: boolean;
  /** Rollouts opened before a batch and finished after it (recording endpoints). */
  open?(count: number): Promise<void>;
  finish?(): Promise<void>;
}

function recordingSide(name: string, child: Child): Side {
  let keys: string[] = [];
  return {
    name,
    child,
    direct: false,
    client: (i) => new OpenAI({ baseURL: child.baseURL, apiKey: keys[i] as string, maxRetries: 0 }),
    async open(count) {
      keys = (await child.ask(`open ${count}`)).keys as string[];
    },
    async finish() {
      await child.ask("finish");
    },
  };
}

/** p50 per call of each side's conversations, interleaved in batches (rotating which goes first). */
async function conversationLatency(sides: Side[], long: boolean, conversations: number) {
  const times = sides.map(() => [] as number[]);
  const batch = 10;
  for (let done = 0; done < conversations; done += batch) {
    for (const side of sides) await side.open?.(batch);
    for (let i = 0; i < batch; i++) {
      const order = sides.map((side, k) => [side, k] as const);
      for (let r = 0; r < (done + i) % sides.length; r++) order.push(order.shift() as never);
      for (const [side, k] of order)
        times[k]?.push(...(await conversation(side.client(i), long, side.direct)));
    }
    for (const side of sides) await side.finish?.();
  }
  return times.map(median);
}

/** Process CPU per call of one side: its rollouts opened, conversed and finished inside the reading. */
async function conversationCpu(side: Side, long: boolean, conversations: number) {
  const before = (await side.child.ask("cpu")).cpu;
  await side.open?.(conversations);
  for (let i = 0; i < conversations; i++) await conversation(side.client(i), long, side.direct);
  await side.finish?.();
  const after = (await side.child.ask("cpu")).cpu;
  return (cpuMs(after) - cpuMs(before)) / (conversations * TURNS);
}

/** The conversation rows (the endpoint targets read these). */
async function benchConversation(): Promise<void> {
  const load = loadavg()[0] as number;
  const upstream = await startUpstream();
  const bare = await startChild("bare", upstream.baseURL);
  const sdk = await startChild("sdk", upstream.baseURL);
  const floor = await startChild("floor", upstream.baseURL);
  const beforeDir = process.env.BENCH_PROXY_BEFORE;
  const children: Child[] = [bare, sdk, floor];
  try {
    const sides: Side[] = [
      {
        name: "bare forwarder",
        child: bare,
        direct: true,
        client: () => new OpenAI({ baseURL: bare.baseURL, apiKey: "k", maxRetries: 0 }),
      },
      {
        name: "SDK forwarder",
        child: sdk,
        direct: true,
        client: () => new OpenAI({ baseURL: sdk.baseURL, apiKey: "k", maxRetries: 0 }),
      },
      {
        name: "floor",
        child: floor,
        direct: false,
        client: () => new OpenAI({ baseURL: floor.baseURL, apiKey: "k", maxRetries: 0 }),
      },
    ];
    if (beforeDir) {
      const before = await startChild(
        "recording",
        upstream.baseURL,
        join(beforeDir, "bench/proxy-server.ts"),
        beforeDir,
      );
      children.push(before);
      sides.push(recordingSide("endpoint, before", before));
    }
    const recording = await startChild("recording", upstream.baseURL);
    children.push(recording);
    sides.push(recordingSide(beforeDir ? "endpoint, after" : "endpoint", recording));
    // Warm-up: every side, both sizes, until V8 has optimized them.
    for (const long of [false, true]) {
      const warm = long ? n(10) : n(60);
      for (const side of sides) {
        await side.open?.(warm);
        for (let i = 0; i < warm; i++) await conversation(side.client(i), long, side.direct);
        await side.finish?.();
      }
    }
    const rows: Record<string, string>[] = [];
    for (const long of [false, true]) {
      const size = long ? "2,000 tokens" : "64 tokens";
      const p50 = await conversationLatency(sides, long, long ? n(30) : n(150));
      const cpu: number[] = [];
      for (const side of sides) cpu.push(await conversationCpu(side, long, long ? n(30) : n(150)));
      const bareP50 = p50[0] as number;
      const bareCpu = cpu[0] as number;
      rows.push({
        row: `${size}, p50 per call`,
        ...Object.fromEntries(sides.map((s, k) => [s.name, `${(p50[k] as number).toFixed(3)} ms`])),
        ...Object.fromEntries(
          sides
            .slice(1)
            .map((s, k) => [
              `added (${s.name})`,
              `${((p50[k + 1] as number) - bareP50).toFixed(3)} ms`,
            ]),
        ),
      });
      rows.push({
        row: `${size}, process CPU per call`,
        ...Object.fromEntries(sides.map((s, k) => [s.name, `${(cpu[k] as number).toFixed(3)} ms`])),
        ...Object.fromEntries(
          sides
            .slice(1)
            .map((s, k) => [
              `added (${s.name})`,
              `${((cpu[k + 1] as number) / bareCpu).toFixed(2)}x`,
            ]),
        ),
        "endpoint / SDK forwarder": `${((cpu[sides.length - 1] as number) / (cpu[1] as number)).toFixed(2)}x`,
        "endpoint / floor": `${((cpu[sides.length - 1] as number) / (cpu[2] as number)).toFixed(2)}x`,
      });
    }
    console.log("4-call conversation, the caller asking for logprobs (top 5):");
    console.table(rows);
    console.log(
      `Node ${process.version}; load average ${load.toFixed(1)} before, ${(loadavg()[0] as number).toFixed(1)} after`,
    );
  } finally {
    for (const child of children) child.proc.kill();
    upstream.server.closeAllConnections();
    upstream.server.close();
  }
}
