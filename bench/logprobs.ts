// Calls whose answers carry logprobs, as every call of an RL rollout does,
// against a loopback server that answers as vLLM does: logprobs only when
// asked (`logprobs: true`), as many alternatives as `top_logprobs` asks for,
// tokens spelled `token_id:N` when `return_tokens_as_token_ids` is set (the
// recorder sets it) and as plain texts otherwise, each token's `bytes` its
// text's UTF-8; one row gives mismatched bytes (a character split over
// tokens) for the slow path.
//
// Every row runs four sides in one run, rotating which goes first:
// - raw-none: a raw client that does not ask for logprobs, and gets none;
// - raw-ask: a raw client that asks (`logprobs: true, top_logprobs: 5`);
// - rec-ask: the wrapped client in a rollout, its caller asking the same
//   (the case every recorder can be compared on: the rows' targets read it);
// - rec-none: the wrapped client, its caller not asking (the recorder asks
//   for logprobs with no alternatives, for training, and strips them).
// rec-ask is compared with raw-ask; rec-none with raw-none, which is what
// recording costs a caller who wants no logprobs (the price of the logprobs
// training needs).
//
// Each call is timed as its caller sees it, inside its rollout; the
// rollout's end, where the recorded logprobs are compacted, is timed apart.
//
// BENCH_ONLY=logprobs runs these rows alone.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { Recorder, TrajectoryGroup } from "trajectory-recorder";
// Not public (the scan and the shipper's own writer), so taken from the sources.
import { scanAnswer } from "../src/logprobs/index.js";
import { groupWirePieces, type WireIssue } from "../src/trajectory/wire-writer.js";

// The rows' sizes (bench/peers.ts runs the same rows with them).
export const TOP = 5;
export const LOOP_TOKENS = 64;
export const LOOP_TURNS = 4;
export const LONG_TOKENS = 2000;
export const CHUNKS = 200;
export const CONCURRENT = 500;
/** BENCH_LOGPROBS_SCALE=0.3 runs a third of the samples (a loaded machine takes minutes). */
const SCALE = Number(process.env.BENCH_LOGPROBS_SCALE ?? 1);
const n = (rounds: number) => Math.max(2, Math.round(rounds * SCALE));

// Token texts from a vocabulary of a few thousand, as a tokenizer's repeat:
// vLLM's `token_id:N` when the request asks for it, plain words otherwise.
const VOCAB = 4096;
let seed = 7;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

/** How the server spells tokens and how many alternatives it sends. */
export interface Ask {
  ids: boolean;
  top: number;
}

/** A token as vLLM writes it; `split`: bytes that are not its text's UTF-8. */
function token(ask: Ask, split: boolean) {
  const i = Math.floor(rand() * VOCAB);
  const text = ask.ids ? `token_id:${i * 37}` : ` w${(i * 7919).toString(36)}`;
  const bytes = [...Buffer.from(text)];
  return { token: text, logprob: -rand() * 12, bytes: split ? bytes.slice(1) : bytes };
}
const tokens = (ask: Ask, n: number, split = false) =>
  Array.from({ length: n }, () => ({
    ...token(ask, split),
    top_logprobs: Array.from({ length: ask.top }, () => token(ask, split)),
  }));

/** A chat completion of `n` tokens as vLLM answers it (`bench/peers.ts` answers with it too). */
export function completion(ask: Ask | null, n: number, split = false): string {
  const content = ask ? tokens(ask, n, split) : null;
  return JSON.stringify({
    id: "c",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        logprobs: content ? { content, refusal: null } : null,
        message: { role: "assistant", content: "x".repeat(n) },
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: n, total_tokens: n + 1 },
  });
}

/** A stream of {@link CHUNKS} one-token chunks as vLLM sends it. */
export function streamed(ask: Ask | null): string {
  return `${Array.from(
    { length: CHUNKS },
    (_, i) =>
      `data: ${JSON.stringify({
        id: "c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [
          {
            index: 0,
            delta: { content: "x" },
            logprobs: ask ? { content: tokens(ask, 1), refusal: null } : null,
            finish_reason: i === CHUNKS - 1 ? "stop" : null,
          },
        ],
      })}\n\n`,
  ).join("")}data: [DONE]\n\n`;
}

// Answers made once per way of asking: the server's share of each call is sending them.
const ASKS = {
  none: null,
  recorder: { ids: true, top: 0 },
  caller: { ids: true, top: TOP },
  plain: { ids: false, top: TOP },
} as const;
type AskName = keyof typeof ASKS;
const answers = new Map<string, string>();
for (const [name, ask] of Object.entries(ASKS)) {
  answers.set(`loop/${name}`, completion(ask, LOOP_TOKENS));
  answers.set(`long/${name}`, completion(ask, LONG_TOKENS));
  answers.set(`split/${name}`, completion(ask, LONG_TOKENS, ask !== null));
  answers.set(`stream/${name}`, streamed(ask));
}

/** Which answer a request asks for, as vLLM reads its fields. */
function askOf(body: {
  logprobs?: boolean;
  top_logprobs?: number;
  return_tokens_as_token_ids?: boolean;
}): AskName {
  if (body.logprobs !== true) return "none";
  if (!body.return_tokens_as_token_ids) return "plain";
  return (body.top_logprobs ?? 0) > 0 ? "caller" : "recorder";
}

const server = createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    const body = JSON.parse(raw);
    const stream = body.stream === true;
    res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
    res.end(answers.get(`${stream ? "stream" : body.model}/${askOf(body)}`));
  });
});

const now = () => Number(process.hrtime.bigint()) / 1000;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0;
const median = (xs: number[]) => pct(xs, 0.5);

const SIDES = ["rawNone", "rawAsk", "recAsk", "recNone"] as const;
type Side = (typeof SIDES)[number];
type Times = Record<Side, number[]>;

/** `rounds` rounds of every side, rotating which goes first. */
async function rotated(rounds: number, run: (side: Side) => Promise<number>): Promise<Times> {
  const out: Times = { rawNone: [], rawAsk: [], recAsk: [], recNone: [] };
  for (let i = 0; i < rounds; i++)
    for (let k = 0; k < SIDES.length; k++) {
      const side = SIDES[(i + k) % SIDES.length] as Side;
      out[side].push(await run(side));
    }
  return out;
}

/** The median of paired differences of `a` against `b` (samples of the same round), per `per`. */
const added = (t: Times, a: Side, b: Side, per = 1) =>
  median(t[a].map((x, i) => (x - (t[b][i] ?? x)) / per));
/** The median of paired ratios of `a` to `b`. */
const ratioOf = (t: Times, a: Side, b: Side) => median(t[a].map((x, i) => x / (t[b][i] ?? x)));

/** What the caller's request adds: the peers' case asks for top-5 logprobs. */
const asking = (side: Side) =>
  side === "rawAsk" || side === "recAsk" ? { logprobs: true, top_logprobs: TOP } : {};

/**
 * The scan of a 2000-token top-5 answer's text (what a caller who did not
 * ask pays for the logprobs, before the SDK parses the rest) against
 * `JSON.parse` of the same text, interleaved: how many times faster the scan is.
 */
function scanSpeed(spelling: "caller" | "plain"): string {
  const text = answers.get(`long/${spelling}`) as string;
  const parse: number[] = [];
  const scan: number[] = [];
  for (let i = 0; i < n(300); i++) {
    const order = i % 2 ? [parse, scan] : [scan, parse];
    for (const into of order) {
      const t0 = now();
      if (into === parse) JSON.parse(text);
      else if (!scanAnswer(text, false)) throw new Error("bench fixture: the scan gave up");
      into.push(now() - t0);
    }
  }
  const faster = median(parse.map((p, i) => p / (scan[i] ?? p)));
  return `${faster.toFixed(2)}× (scan ${(median(scan) / 1000).toFixed(2)} ms, JSON.parse ${(median(parse) / 1000).toFixed(2)} ms)`;
}

export async function benchLogprobs(): Promise<Record<string, { value: string }>> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const recorder = new Recorder();
  const raw = new OpenAI({ apiKey: "k", baseURL });
  const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
  const clientOf = (side: Side) => (side.startsWith("raw") ? raw : wrapped);
  const recorded = (side: Side) => side.startsWith("rec");

  /** A 4-turn agent loop; each call timed on its own, the recorded one in a rollout. */
  const loop = async (side: Side, into: number[]) => {
    const client = clientOf(side);
    const messages: ChatCompletionMessageParam[] = [{ role: "system", content: "be brief" }];
    for (let turn = 0; turn < LOOP_TURNS; turn++) {
      messages.push({ role: "user", content: `question ${turn}` });
      const t0 = now();
      const res = await client.chat.completions.create({
        model: "loop",
        messages,
        ...asking(side),
      });
      into.push(now() - t0);
      messages.push({ role: "assistant", content: res.choices[0]?.message.content ?? "" });
    }
  };
  /** Per-call samples of 4-turn loops, a loop per side per round. */
  const loops = async (rounds: number) => {
    const out: Times = { rawNone: [], rawAsk: [], recAsk: [], recNone: [] };
    await rotated(rounds, async (side) => {
      if (recorded(side)) await recorder.rollout(() => loop(side, out[side]));
      else await loop(side, out[side]);
      return 0;
    });
    return out;
  };

  /**
   * Times `work` alone, as the caller of the call sees it; when recorded, it
   * runs in a rollout and the rollout's end (where the rollout compacts the
   * logprobs it recorded) goes to `ends`.
   */
  const timed = async (side: Side, work: () => Promise<unknown>, ends: number[]) => {
    if (!recorded(side)) {
      const t0 = now();
      await work();
      return now() - t0;
    }
    let took = 0;
    let ended = 0;
    await recorder.rollout(async () => {
      const t0 = now();
      await work();
      took = now() - t0;
      ended = now();
    });
    if (side === "recAsk") ends.push(now() - ended);
    return took;
  };
  const ends: Record<"long" | "split" | "stream", number[]> = { long: [], split: [], stream: [] };

  const call = (side: Side, model: string) =>
    clientOf(side).chat.completions.create({
      model,
      messages: [{ role: "user", content: "go" }],
      ...asking(side),
    });
  const one = (model: "long" | "split") => (side: Side) =>
    timed(side, () => call(side, model), ends[model]);

  const stream = (side: Side) =>
    timed(
      side,
      async () => {
        const s = await clientOf(side).chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "go" }],
          stream: true,
          ...asking(side),
        });
        for await (const _ of s);
      },
      ends.stream,
    );

  /** A whole rollout (its start and end included) against the same work raw. */
  const whole = (work: (side: Side) => Promise<unknown>) => async (side: Side) => {
    const t0 = now();
    if (recorded(side)) await recorder.rollout(() => work(side));
    else await work(side);
    return now() - t0;
  };
  const wholeLong = whole((side) => call(side, "long"));
  const wholeLoop = whole((side) => loop(side, []));

  /**
   * Process CPU (user + system, server included: it is the same for the two
   * sides compared) of `calls` 2000-token calls; recorded, each in its
   * rollout, and the trajectories written to their wire JSON by the
   * shipper's writer.
   */
  const cpu = (calls: number) => async (side: Side) => {
    const c0 = process.cpuUsage();
    if (!recorded(side)) for (let i = 0; i < calls; i++) await call(side, "long");
    else {
      const ts = [];
      for (let i = 0; i < calls; i++) ts.push(await recorder.rollout(() => call(side, "long")));
      const issues: WireIssue[] = [];
      let bytes = 0;
      for (const piece of groupWirePieces(new TrajectoryGroup(ts), issues)) bytes += piece.length;
      if (bytes === 0 || issues.length) throw new Error("wire writer failed");
    }
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / calls;
  };

  /** Wall µs of `CONCURRENT` 4-turn loops at once. */
  const concurrent = async (side: Side) => {
    const sink: number[] = [];
    const t0 = now();
    await Promise.all(
      Array.from({ length: CONCURRENT }, () =>
        recorded(side) ? recorder.rollout(() => loop(side, sink)) : loop(side, sink),
      ),
    );
    return now() - t0;
  };

  // Warm-up: every path until V8 has optimized the recorder's functions.
  await loops(n(100));
  await rotated(n(30), one("long"));
  await rotated(n(15), one("split"));
  await rotated(n(30), stream);
  await rotated(n(15), wholeLong);
  await rotated(n(30), wholeLoop);
  await rotated(n(2), cpu(10));
  await rotated(1, concurrent);

  for (const list of Object.values(ends)) list.length = 0;
  const loopTimes = await loops(n(150));
  const long = await rotated(n(60), one("long"));
  const split = await rotated(n(30), one("split"));
  const streams = await rotated(n(75), stream);
  const wholeLongTimes = await rotated(n(60), wholeLong);
  const wholeLoopTimes = await rotated(n(150), wholeLoop);
  const cpus = await rotated(n(6), cpu(10));
  const walls = await rotated(n(3), concurrent);
  server.close();

  const us = (x: number) => `${x.toFixed(1)} µs`;
  const ms = (x: number) => `${(x / 1000).toFixed(2)} ms`;
  /** The peers' case (callers ask), the "not asking" case, and what asking costs raw. */
  const sides = (t: Times, per = 1, byRatio = true) => {
    const r = (a: Side, b: Side) => (byRatio ? `, ${ratioOf(t, a, b).toFixed(3)}×` : "");
    return {
      ask: `${us(added(t, "recAsk", "rawAsk", per))}${r("recAsk", "rawAsk")}`,
      none: `${us(added(t, "recNone", "rawNone", per))}${r("recNone", "rawNone")}`,
      raw: `raw-none ${ms(median(t.rawNone) / per)}, raw-ask ${ms(median(t.rawAsk) / per)}`,
    };
  };
  const row = (
    t: Times,
    target: string,
    options: { per?: number; byRatio?: boolean } = {},
  ): { value: string } => {
    const s = sides(t, options.per, options.byRatio);
    return {
      value: `callers asking: ${s.ask} (${target}); not asking vs raw that received none: ${s.none}; ${s.raw}`,
    };
  };
  return {
    "logprobs: the scan against JSON.parse of the same 2000-token top-5 text, times faster": {
      value: `token_id:N spelling ${scanSpeed("caller")} (target ≥ 3×); plain texts ${scanSpeed("plain")} (target ≥ 2×)`,
    },
    [`logprobs: ${LOOP_TURNS}-turn loop, ${LOOP_TOKENS} tokens top ${TOP} per call, p50 (added)`]:
      row(loopTimes, "target ≤ 60 µs"),
    [`logprobs: one ${LONG_TOKENS}-token top-${TOP} call, p50 (added)`]: row(
      long,
      "target ≤ 1.05×",
    ),
    "logprobs: the same, bytes not the text's UTF-8 (slow path)": row(split, "no target"),
    [`logprobs: the rollout's end after one ${LONG_TOKENS}-token call (compacting), p50`]: {
      value: `callers asking: ${us(median(ends.long))}; with mismatched bytes ${us(median(ends.split))}; target ≤ 500 µs`,
    },
    [`logprobs: whole rollout, one ${LONG_TOKENS}-token top-${TOP} call (rollout end included), p50`]:
      row(wholeLongTimes, "target ≤ 1.10×; not asking: ≤ 2.5 ms added"),
    [`logprobs: whole ${LOOP_TURNS}-call rollout, ${LOOP_TOKENS} tokens top ${TOP} per call, p50`]:
      row(wholeLoopTimes, "target ≤ 1.10×"),
    [`logprobs: process CPU per ${LONG_TOKENS}-token call, recording and wire JSON included`]: row(
      cpus,
      "target ≤ 1.15×",
    ),
    [`logprobs: per streamed chunk (1 token, top ${TOP}), p50 (added)`]: row(
      streams,
      `target ≤ 2.5 µs; the rollout's end: ${us(median(ends.stream))}`,
      { per: CHUNKS, byRatio: false },
    ),
    [`logprobs: ${CONCURRENT} concurrent ${LOOP_TURNS}-turn rollouts, wall`]: row(
      walls,
      "target ≤ 1.10×",
    ),
  };
}
