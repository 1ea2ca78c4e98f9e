// The server side of bench/production.ts, in its own process: the recording
// proxy with sessions, its store on (`store`, a TrajectoryStore in a fresh
// directory) or off (`memory`). Commands on stdin: `cpu`, `stats`.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { startRecordingProxy } from "../src/proxy/index.js";
import { TrajectoryStore } from "../src/store/index.js";

const [mode, upstream] = process.argv.slice(2) as ["store" | "memory", string];
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
const store =
  mode === "store"
    ? await TrajectoryStore.open({ dir: mkdtempSync(path.join(tmpdir(), "trr-bench-store-")) })
    : undefined;
const proxy = await startRecordingProxy({
  upstream: { baseURL: upstream, apiKey: "upstream-key" },
  store,
  // Sessions end as the bench moves on (4 calls each), as conversations do.
  sessions: { maxOpen: 64 },
});
say({ ready: true, baseURL: proxy.baseURL });
createInterface({ input: process.stdin }).on("line", (line) => {
  const name = line.trim();
  if (name === "cpu") say({ cpu: process.cpuUsage() });
  if (name === "stats") say({ stats: store?.stats() ?? null, open: proxy.recorder.openSessions });
});
