// What the report costs: `writeReport` from a JSONL file of recorded-sized
// trajectories (a tool call and its result, then an answer; 48 sampled tokens
// a Choice as vLLM token ids with 5 alternatives each, as the recorder's
// defaults record them), per 1,000 trajectories: build time and HTML size.
// BENCH_REPORT_TRAJECTORIES sets how many (default 4000, in groups of 8).
import { mkdtemp, open, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { writeReport } from "trajectory-recorder/report";

const TOTAL = Number(process.env.BENCH_REPORT_TRAJECTORIES ?? 4_000);
const GROUP = 8;
const TOKENS = 48;

function choice(content: string | null, calls: unknown[] | undefined, seed: number) {
  return {
    index: 0,
    finish_reason: calls ? "tool_calls" : "stop",
    logprobs: {
      content: Array.from({ length: TOKENS }, (_, i) => ({
        token: `token_id:${(seed + i) % 30000}`,
        logprob: -((seed + i) % 7) / 5,
        bytes: [...Buffer.from(`token_id:${(seed + i) % 30000}`)],
        top_logprobs: Array.from({ length: 5 }, (_, k) => ({
          token: `token_id:${k}`,
          logprob: -k - 0.5,
          bytes: [...Buffer.from(`token_id:${k}`)],
        })),
      })),
      refusal: null,
    },
    token_ids: Array.from({ length: TOKENS }, (_, i) => (seed + i) % 30000),
    message: { role: "assistant", content, ...(calls ? { tool_calls: calls } : {}) },
  };
}

function trajectory(i: number) {
  const words = Array.from(
    { length: TOKENS },
    (_, k) => (k ? " " : "") + ["three", "apples", "left", "in", "stock"][(i + k) % 5],
  ).join("");
  const call = {
    id: `c${i}`,
    type: "function",
    function: { name: "check_stock", arguments: '{"fruit":"apple"}' },
  };
  return {
    messages_and_choices: [
      { role: "system", content: "You keep a fruit stall. Check the stock before answering." },
      { role: "user", content: `how many apples are left (${i})` },
      choice(null, [call], i),
      { role: "tool", tool_call_id: `c${i}`, content: "three left" },
      choice(words, undefined, i + 1),
    ],
    tools: [
      { type: "function", function: { name: "check_stock", parameters: { type: "object" } } },
    ],
    reward: (i % 3) / 2,
    metrics: { turns: 2 },
    metadata: { scenario: `s${Math.floor(i / GROUP) % 40}` },
  };
}

export async function benchReport(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-report-"));
  try {
    const file = path.join(dir, "groups.jsonl");
    const handle = await open(file, "w");
    for (let g = 0; g < TOTAL / GROUP; g++) {
      const trajectories = Array.from({ length: GROUP }, (_, k) => trajectory(g * GROUP + k));
      await handle.write(`${JSON.stringify({ step: Math.floor(g / 50), trajectories })}\n`);
    }
    await handle.close();
    const input = (await stat(file)).size;
    const out = path.join(dir, "report.html");
    await writeReport({ groupsFile: file, out }); // warm-up
    const runs: number[] = [];
    let bytes = 0;
    for (let r = 0; r < 3; r++) {
      const t0 = performance.now();
      bytes = (await writeReport({ groupsFile: file, out })).bytes;
      runs.push(performance.now() - t0);
    }
    const ms = runs.sort((a, b) => a - b)[1] as number;
    const per = 1000 / TOTAL;
    console.table({
      [`report of ${TOTAL} trajectories: build time per 1,000 (median of 3)`]: {
        value: `${(ms * per).toFixed(0)} ms`,
      },
      "report: HTML size per 1,000 trajectories": {
        value: `${((bytes * per) / 1024 / 1024).toFixed(2)} MiB`,
      },
      "  JSONL read per 1,000 trajectories (reference)": {
        value: `${((input * per) / 1024 / 1024).toFixed(2)} MiB`,
      },
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
