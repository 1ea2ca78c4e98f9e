// Side by side with the five peer recorders (issue #50): LangSmith, Langfuse,
// Braintrust, OpenInference and Traceloop, each wrapped the way its docs
// show, against ours, every caller asking for `logprobs: true,
// top_logprobs: 5` (the only way the six record the same thing). Each system
// runs in a child process of its own (bench/peers-child.ts) beside a raw
// client from an unpatched copy of the SDK, and exports to a loopback sink
// here that answers what each one's exporter needs and counts what it
// receives, so that a system that records nothing shows.
//
// Only when named: BENCH_ONLY=peers npm run bench. The peers are not
// dependencies of the package: the first run installs them into
// .bench/peers (gitignored). BENCH_PEERS=ours,langsmith,... picks systems;
// BENCH_PEERS_SCALE=0.1 takes fewer samples.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { PEER_PACKAGES, RESULT_MARK, VERSION_OF } from "./peers-systems.js";

const ROOT = resolve(import.meta.dirname, "..");
const PREFIX = join(ROOT, ".bench", "peers");
const ALL = ["ours", "langsmith", "langfuse", "braintrust", "openinference", "traceloop"];

/** The version of the repo's `openai`, which the raw side's copy matches. */
function openaiVersion(): string {
  return JSON.parse(readFileSync(join(ROOT, "node_modules", "openai", "package.json"), "utf8"))
    .version;
}

/** Installs the peers into the scratch prefix unless they are there. */
function install(): void {
  const raw = `openai-raw@npm:openai@${openaiVersion()}`;
  const missing = ["openai-raw", ...Object.values(VERSION_OF).flat()].some(
    (name) => !existsSync(join(PREFIX, "node_modules", name, "package.json")),
  );
  if (!missing) return;
  console.log(`Installing the peers into ${PREFIX} (once)`);
  const npm = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      PREFIX,
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
      raw,
      ...PEER_PACKAGES,
    ],
    { stdio: "inherit" },
  );
  if (npm.status !== 0) throw new Error(`npm install of the peers failed (${npm.status})`);
}

const versionOf = (name: string): string =>
  JSON.parse(readFileSync(join(PREFIX, "node_modules", name, "package.json"), "utf8")).version;

/** What the sink received, per path. */
interface Traffic {
  requests: number;
  bytes: number;
  paths: Map<string, number>;
}

/**
 * The loopback sink: takes any request and answers 200, with what the
 * callers need where they read the answer (Braintrust's login and project
 * registration; an empty body for OTLP, which would read JSON as protobuf).
 */
async function startSink(): Promise<{ url: string; traffic: Traffic; stop: () => void }> {
  const traffic: Traffic = { requests: 0, bytes: 0, paths: new Map() };
  let url = "";
  const answer = (path: string): string => {
    if (path.endsWith("/api/apikey/login"))
      return JSON.stringify({
        org_info: [{ id: "org", name: "bench", api_url: url, proxy_url: url, git_metadata: null }],
      });
    if (path.endsWith("/api/project/register"))
      return JSON.stringify({ project: { id: "project", name: "peers" } });
    if (path.endsWith("/v1/traces")) return "";
    return "{}";
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/__count") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ requests: traffic.requests, bytes: traffic.bytes }));
      return;
    }
    let bytes = 0;
    req.on("data", (d: Buffer) => (bytes += d.length));
    req.on("end", () => {
      traffic.requests++;
      traffic.bytes += bytes;
      const key = `${req.method} ${path}`;
      traffic.paths.set(key, (traffic.paths.get(key) ?? 0) + 1);
      const body = answer(path);
      res.writeHead(200, body ? { "content-type": "application/json" } : {});
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, traffic, stop: () => server.close() };
}

/** The child's figures (see bench/peers-child.ts), µs or ratios. */
export interface PeerResult {
  system: string;
  loopAdded: number;
  loopRatio: number;
  loopRaw: number;
  rolloutAdded: number;
  rolloutRatio: number;
  longAdded: number;
  longRatio: number;
  longRaw: number;
  wholeLongRatio: number;
  concurrentRatio: number;
  concurrentRaw: number;
  chunkAdded: number;
  cpuLoopRatio: number;
  cpuLoopAdded: number;
  cpuLongRatio: number;
  cpuLongAdded: number;
  sink: { requests: number; bytes: number };
  /** Calls made through the system's client, and OpenTelemetry's warnings (dropped spans). */
  recordedCalls: number;
  warnings: string[];
  dropped: number;
  rawPatched: boolean;
  systemPatched: boolean;
}

/** Runs one system's child on the same Node, with the same flags, as this process. */
async function runChild(system: string, sink: string): Promise<PeerResult> {
  const child = spawn(process.execPath, [...process.execArgv, "bench/peers-child.ts"], {
    cwd: ROOT,
    env: { ...process.env, PEERS_SYSTEM: system, PEERS_SINK: sink, PEERS_PREFIX: PREFIX },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  const line = out.split("\n").find((l) => l.startsWith(RESULT_MARK));
  for (const l of out.split("\n")) if (l && !l.startsWith(RESULT_MARK)) console.log(`  ${l}`);
  if (code !== 0 || !line) throw new Error(`${system}: the bench's child failed (exit ${code})`);
  return JSON.parse(line.slice(RESULT_MARK.length)) as PeerResult;
}

/** The rows of the comparison: lower is better in every one. */
const ROWS: [string, (r: PeerResult) => number, (x: number) => string][] = [
  ["4-turn loop, 64 top-5 tokens: added per call (µs)", (r) => r.loopAdded, (x) => x.toFixed(0)],
  [
    "the same, per rollout (4 calls + its end): added (µs)",
    (r) => r.rolloutAdded,
    (x) => x.toFixed(0),
  ],
  ["the same, per rollout: ratio to raw", (r) => r.rolloutRatio, (x) => `${x.toFixed(3)}×`],
  [
    "one 2000-token top-5 call, as its caller waits: ratio",
    (r) => r.longRatio,
    (x) => `${x.toFixed(3)}×`,
  ],
  ["the same, added (ms)", (r) => r.longAdded, (x) => (x / 1000).toFixed(2)],
  ["the same, its whole rollout: ratio", (r) => r.wholeLongRatio, (x) => `${x.toFixed(3)}×`],
  [
    "500 concurrent 4-turn rollouts, wall: ratio",
    (r) => r.concurrentRatio,
    (x) => `${x.toFixed(3)}×`,
  ],
  ["per streamed chunk with top-5 logprobs: added (µs)", (r) => r.chunkAdded, (x) => x.toFixed(2)],
  [
    "process CPU per 64-token call, export included: ratio",
    (r) => r.cpuLoopRatio,
    (x) => `${x.toFixed(3)}×`,
  ],
  [
    "process CPU per 2000-token call, export included: ratio",
    (r) => r.cpuLongRatio,
    (x) => `${x.toFixed(3)}×`,
  ],
];

export async function benchPeers(): Promise<void> {
  const chosen = (process.env.BENCH_PEERS ?? ALL.join(",")).split(",").filter(Boolean);
  for (const s of chosen) if (!ALL.includes(s)) throw new Error(`BENCH_PEERS: no system ${s}`);
  install();

  const versions: Record<string, { value: string }> = {
    ours: { value: "this checkout's dist/" },
    "openai (the systems' copy; raw: openai-raw)": {
      value: `${openaiVersion()} / ${versionOf("openai-raw")}`,
    },
  };
  for (const s of chosen)
    if (s !== "ours")
      versions[s] = { value: VERSION_OF[s]?.map((p) => `${p}@${versionOf(p)}`).join(", ") ?? "" };
  versions["@opentelemetry/sdk-trace-node"] = { value: versionOf("@opentelemetry/sdk-trace-node") };
  console.table(versions);

  const results: PeerResult[] = [];
  for (const system of chosen) {
    const sink = await startSink();
    const started = Date.now();
    console.log(`peers: ${system}…`);
    try {
      const r = await runChild(system, sink.url);
      results.push(r);
      const paths = [...sink.traffic.paths].map(([p, k]) => `${p} ×${k}`).join(", ");
      console.log(
        `  ${system}: ${((Date.now() - started) / 1000).toFixed(0)} s; the sink received ${sink.traffic.requests} requests, ${(sink.traffic.bytes / 1e6).toFixed(1)} MB (${paths}); ${r.recordedCalls} recorded calls, ${(sink.traffic.bytes / r.recordedCalls / 1000).toFixed(1)} kB exported per call; spans dropped: ${r.dropped}; raw copy patched: ${r.rawPatched}, the system's copy patched: ${r.systemPatched}`,
      );
      for (const w of r.warnings) console.log(`  ${system} warned: ${w}`);
    } finally {
      sink.stop();
    }
  }

  const table: Record<string, Record<string, string>> = {};
  for (const [label, value, format] of ROWS) {
    const row: Record<string, string> = {};
    for (const r of results) row[r.system] = format(value(r));
    const ours = results.find((r) => r.system === "ours");
    if (ours) {
      const rank = 1 + results.filter((r) => value(r) < value(ours)).length;
      row["rank of ours"] = `${rank} of ${results.length}`;
    }
    table[label] = row;
  }
  const raw: Record<string, string> = {};
  for (const r of results)
    raw[r.system] =
      `${r.loopRaw.toFixed(0)} µs / ${(r.longRaw / 1000).toFixed(2)} ms / ${(r.concurrentRaw / 1000).toFixed(0)} ms`;
  table["raw in its process: 64-token call / 2000-token call / 500 rollouts (reference)"] = raw;
  console.table(table);
  console.log(
    `Node ${process.version}; each system against the raw client of its own process, paired medians; BENCH_PEERS_SCALE=${process.env.BENCH_PEERS_SCALE ?? 1}`,
  );
}
