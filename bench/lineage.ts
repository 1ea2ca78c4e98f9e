// The token lineage check (issue #33): what it costs a 6-turn rollout whose
// prompts are 8,000 tokens, against the same rollout made with a raw client,
// in one run. The check runs when the rollout ends (off the call path): one
// pass over each turn's prompt ids. Two figures:
// - the check alone, timed directly on the recorded trajectory (the source's
//   checkLineage, as the recorder calls it), against the raw rollout's time;
// - recorded rollouts with `lineage: "tokens"` against `lineage: "off"`,
//   interleaved, as a caller sees them (noisier: it also carries the calls).
//
// BENCH_ONLY=lineage runs these rows alone.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { Recorder, type Trajectory } from "trajectory-recorder";
import { checkLineage } from "../src/recorder/lineage.js";
import { Trajectory as SourceTrajectory } from "../src/trajectory/index.js";

const PROMPT = 8000;
const TURNS = 6;
const SAMPLED = 64;
const TOOL_TOKENS = 20;
const ROUNDS = Number(process.env.BENCH_LINEAGE_ROUNDS ?? 40);
const EOS = 2;

const base = Array.from({ length: PROMPT }, (_, i) => 1000 + ((i * 7919) % 50000));
const sampled = (turn: number) => Array.from({ length: SAMPLED }, (_, i) => 60000 + turn * 100 + i);

/** The prompt as a template that renders turns back as sampled would. */
function promptOf(messages: Array<{ role: string }>): number[] {
  const ids = [...base];
  let turn = 0;
  for (const m of messages.slice(2)) {
    if (m.role === "assistant") ids.push(1, 2, ...sampled(turn++), EOS);
    else ids.push(3, ...Array.from({ length: TOOL_TOKENS }, (_, i) => 500 + i), EOS);
  }
  ids.push(1, 2);
  return ids;
}

const server = createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    const body = JSON.parse(raw);
    const turn = body.messages.filter((m: { role: string }) => m.role === "assistant").length;
    const ids = sampled(turn);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        prompt_token_ids: promptOf(body.messages),
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            token_ids: ids,
            logprobs: {
              content: ids.map((id) => ({
                token: `token_id:${id}`,
                logprob: -0.25,
                bytes: null,
                top_logprobs: [],
              })),
              refusal: null,
            },
            message: { role: "assistant", content: `answer ${turn}` },
          },
        ],
        usage: {
          prompt_tokens: PROMPT,
          completion_tokens: SAMPLED,
          total_tokens: PROMPT + SAMPLED,
        },
      }),
    );
  });
});

const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

async function loop(openai: OpenAI): Promise<void> {
  const messages: ChatCompletionMessageParam[] = [
    { role: "system", content: "a long system prompt" },
    { role: "user", content: "go" },
  ];
  for (let t = 0; t < TURNS; t++) {
    const r = await openai.chat.completions.create({ model: "m", messages, logprobs: true });
    messages.push({ role: "assistant", content: r.choices[0]!.message.content });
    messages.push({ role: "user", content: "next" });
  }
}

/**
 * A rollout whose every turn splits (each prompt is the same long prompt
 * with a different end, as a server that repeats its prompt ids answers)
 * against one of the same length whose turns all extend their history: the
 * check's time per split beyond what comparing the tokens costs anyway.
 */
async function perSplit(): Promise<{ splits: number; extraUs: number; joinedUs: number }> {
  let extend = false;
  const fetch = async (_url: unknown, init?: { body?: unknown }) => {
    const body = JSON.parse(String(init?.body));
    const turn = body.messages.filter((m: { role: string }) => m.role === "assistant").length;
    const prompt = extend
      ? [...base, ...Array.from({ length: turn }, (_, k) => [...sampled(k), 3, 4]).flat()]
      : [...base, 7, turn];
    const ids = sampled(turn);
    return new Response(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        prompt_token_ids: prompt,
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            token_ids: ids,
            logprobs: null,
            message: { role: "assistant", content: `answer ${turn}` },
          },
        ],
      }),
      { headers: { "content-type": "application/json" } },
    );
  };
  const recorder = new Recorder({ lineage: "off" });
  const client = recorder.wrap(new OpenAI({ apiKey: "k", baseURL: "http://x/v1", fetch }));
  const record = async () => JSON.stringify(await recorder.rollout(() => loop(client)));
  const splitting = await record();
  extend = true;
  const joining = await record();
  const quiet = { log() {}, logOnce() {} };
  const split: number[] = [];
  const joined: number[] = [];
  let splits = 0;
  for (let i = 0; i < 10 * ROUNDS; i++) {
    // Fresh trajectories (the check splits them in place), their reading untimed.
    const a = SourceTrajectory.fromJSON(splitting);
    const b = SourceTrajectory.fromJSON(joining);
    let start = now();
    checkLineage(a, "tokens", quiet);
    split.push(now() - start);
    start = now();
    checkLineage(b, "tokens", quiet);
    joined.push(now() - start);
    splits = a.additional_histories.length;
    if (b.additional_histories.length > 0)
      throw new Error("bench fixture: the joined rollout split");
  }
  if (splits !== TURNS - 1) throw new Error(`bench fixture: ${splits} splits, not ${TURNS - 1}`);
  const pairs = split.map((x, i) => x - (joined[i] ?? x));
  return { splits, extraUs: (median(pairs) * 1000) / splits, joinedUs: median(joined) * 1000 };
}

export async function benchLineage(): Promise<Record<string, string>> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const raw = new OpenAI({ apiKey: "k", baseURL });
  const tokens = new Recorder({ lineage: "tokens" });
  const off = new Recorder({ lineage: "off" });
  const wrappedTokens = tokens.wrap(new OpenAI({ apiKey: "k", baseURL }));
  const wrappedOff = off.wrap(new OpenAI({ apiKey: "k", baseURL }));
  const timed = async (fn: () => Promise<unknown>) => {
    const start = now();
    await fn();
    return now() - start;
  };
  const run = {
    raw: () => timed(() => loop(raw)),
    tokens: () => timed(() => tokens.rollout(() => loop(wrappedTokens))),
    off: () => timed(() => off.rollout(() => loop(wrappedOff))),
  };
  for (let i = 0; i < 5; i++) for (const f of Object.values(run)) await f();
  const times: Record<keyof typeof run, number[]> = { raw: [], tokens: [], off: [] };
  const order = Object.keys(run) as (keyof typeof run)[];
  for (let i = 0; i < ROUNDS; i++)
    for (let k = 0; k < order.length; k++) {
      const key = order[(i + k) % order.length] as keyof typeof run;
      times[key].push(await run[key]());
    }
  // The check alone, on a recorded trajectory (no split: it is left as it is).
  let recorded: Trajectory | undefined;
  await tokens.rollout(async (t) => {
    await loop(wrappedTokens);
    recorded = t;
  });
  const t = SourceTrajectory.fromJSON(JSON.stringify(recorded));
  const quiet = { log() {}, logOnce() {} };
  for (let i = 0; i < 200; i++) checkLineage(t, "tokens", quiet);
  const checks: number[] = [];
  for (let i = 0; i < 200; i++) {
    const start = now();
    checkLineage(t, "tokens", quiet);
    checks.push(now() - start);
  }
  server.close();
  const every = await perSplit();
  const rawMs = median(times.raw);
  const check = median(checks);
  const pairs = times.tokens.map((x, i) => x - (times.off[i] ?? x));
  return {
    "6-turn rollout, 8,000-token prompts, raw client": `${rawMs.toFixed(2)} ms`,
    "lineage check alone (target ≤ 2% of raw)": `${(check * 1000).toFixed(1)} µs = ${((100 * check) / rawMs).toFixed(2)}%`,
    'recorded, lineage "tokens"': `${median(times.tokens).toFixed(2)} ms`,
    'recorded, lineage "off"': `${median(times.off).toFixed(2)} ms`,
    "every turn splits: the check per split, beyond comparing the tokens (target ≤ 10 µs)": `${every.extraUs.toFixed(1)} µs (${every.splits} splits; the check of a rollout that never splits ${every.joinedUs.toFixed(0)} µs)`,
    '"tokens" − "off", median of paired rounds': `${(median(pairs) * 1000).toFixed(0)} µs = ${((100 * median(pairs)) / rawMs).toFixed(2)}%`,
  };
}
