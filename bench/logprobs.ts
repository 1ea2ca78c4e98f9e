// Calls whose answers carry logprobs, as every call of an RL rollout does:
// a wrapped client in a rollout against a raw one, interleaved in one run
// against a loopback server. The server answers as vLLM does: each token's
// `bytes` are its text's UTF-8, with five alternatives per token; one row
// gives mismatched bytes (a character split over tokens) for the slow path.
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
// Not public (the shipper's own writer), so taken from the sources.
import { groupWirePieces, type WireIssue } from "../src/trajectory/wire-writer.js";

const TOP = 5;
const LOOP_TOKENS = 64;
const LOOP_TURNS = 4;
const LONG_TOKENS = 2000;
const CHUNKS = 200;
const CONCURRENT = 500;
/** BENCH_LOGPROBS_SCALE=0.3 runs a third of the samples (a loaded machine takes minutes). */
const SCALE = Number(process.env.BENCH_LOGPROBS_SCALE ?? 1);
const n = (rounds: number) => Math.max(2, Math.round(rounds * SCALE));

// Token texts from a vocabulary of a few thousand, as a tokenizer's repeat.
// The recorder asks for `return_tokens_as_token_ids`, so vLLM spells each
// token `token_id:N` and sends that text's UTF-8 as its bytes.
const vocab = Array.from({ length: 4096 }, (_, i) => `token_id:${i * 37}`);
let seed = 7;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = () => vocab[Math.floor(rand() * vocab.length)] as string;

/** A token as vLLM writes it; `split`: bytes that are not its text's UTF-8. */
function token(split: boolean) {
  const text = pick();
  const bytes = [...Buffer.from(text)];
  return { token: text, logprob: -rand() * 12, bytes: split ? bytes.slice(1) : bytes };
}
const tokens = (n: number, split = false) =>
  Array.from({ length: n }, () => ({
    ...token(split),
    top_logprobs: Array.from({ length: TOP }, () => token(split)),
  }));

function completion(n: number, split = false): string {
  const content = tokens(n, split);
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
        message: { role: "assistant", content: content.map((t) => t.token).join("") },
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: n, total_tokens: n + 1 },
  });
}

const streamed = `${Array.from(
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
          logprobs: { content: tokens(1), refusal: null },
          finish_reason: i === CHUNKS - 1 ? "stop" : null,
        },
      ],
    })}\n\n`,
).join("")}data: [DONE]\n\n`;

// Answers made once: the server's share of each call is sending them.
const answers: Record<string, string> = {
  loop: completion(LOOP_TOKENS),
  long: completion(LONG_TOKENS),
  split: completion(LONG_TOKENS, true),
};

const server = createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    const body = JSON.parse(raw);
    const stream = body.stream === true;
    res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
    res.end(stream ? streamed : answers[body.model as string]);
  });
});

const now = () => Number(process.hrtime.bigint()) / 1000;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0;
const median = (xs: number[]) => pct(xs, 0.5);

interface Times {
  raw: number[];
  rec: number[];
}

/** `rounds` pairs of (raw, recorded), alternating which goes first. */
async function paired(
  rounds: number,
  raw: () => Promise<number>,
  rec: () => Promise<number>,
): Promise<Times> {
  const out: Times = { raw: [], rec: [] };
  for (let i = 0; i < rounds; i++) {
    if (i % 2) {
      out.raw.push(await raw());
      out.rec.push(await rec());
    } else {
      out.rec.push(await rec());
      out.raw.push(await raw());
    }
  }
  return out;
}

/** The median of the paired differences (each recorded sample against the raw one beside it). */
const added = (t: Times, per = 1) => median(t.rec.map((r, i) => (r - (t.raw[i] ?? r)) / per));

export async function benchLogprobs(): Promise<Record<string, { value: string }>> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const recorder = new Recorder();
  const raw = new OpenAI({ apiKey: "k", baseURL });
  const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));

  /** A 4-turn agent loop; each call timed on its own, the recorded one in a rollout. */
  const loop = async (client: OpenAI, into: number[]) => {
    const messages: ChatCompletionMessageParam[] = [{ role: "system", content: "be brief" }];
    for (let turn = 0; turn < LOOP_TURNS; turn++) {
      messages.push({ role: "user", content: `question ${turn}` });
      const t0 = now();
      const res = await client.chat.completions.create({ model: "loop", messages });
      into.push(now() - t0);
      messages.push({ role: "assistant", content: res.choices[0]?.message.content ?? "" });
    }
  };
  const loops = async (rounds: number) => {
    const out: Times = { raw: [], rec: [] };
    for (let i = 0; i < rounds; i++) {
      const rawFirst = i % 2 === 1;
      if (rawFirst) await loop(raw, out.raw);
      await recorder.rollout(() => loop(wrapped, out.rec));
      if (!rawFirst) await loop(raw, out.raw);
    }
    return out;
  };

  /**
   * Times `work` alone, as the caller of the call sees it; when recorded, it
   * runs in a rollout and the rollout's end (where the rollout compacts the
   * logprobs it recorded) goes to `ends`.
   */
  const timed = async (work: () => Promise<unknown>, recorded: boolean, ends: number[]) => {
    if (!recorded) {
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
    ends.push(now() - ended);
    return took;
  };
  const ends: Record<"long" | "split" | "stream", number[]> = { long: [], split: [], stream: [] };

  const one = (client: OpenAI, model: "long" | "split", recorded: boolean) => () =>
    timed(
      () => client.chat.completions.create({ model, messages: [{ role: "user", content: "go" }] }),
      recorded,
      ends[model],
    );

  const stream = (client: OpenAI, recorded: boolean) => () =>
    timed(
      async () => {
        const s = await client.chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "go" }],
          stream: true,
        });
        for await (const _ of s);
      },
      recorded,
      ends.stream,
    );

  /** A whole rollout (its start and end included) against the same work raw. */
  const whole = (work: (client: OpenAI) => Promise<unknown>) => ({
    raw: async () => {
      const t0 = now();
      await work(raw);
      return now() - t0;
    },
    rec: async () => {
      const t0 = now();
      await recorder.rollout(() => work(wrapped));
      return now() - t0;
    },
  });
  const longCall = (client: OpenAI) =>
    client.chat.completions.create({ model: "long", messages: [{ role: "user", content: "go" }] });
  const wholeLong = whole(longCall);
  const wholeLoop = whole((client) => loop(client, []));

  /**
   * Process CPU (user + system, server included: it is the same for both) of
   * `calls` 2000-token calls; recorded, each in its rollout, and the
   * trajectories written to their wire JSON by the shipper's writer.
   */
  const cpu = async (recorded: boolean, calls: number) => {
    const c0 = process.cpuUsage();
    if (!recorded) for (let i = 0; i < calls; i++) await longCall(raw);
    else {
      const ts = [];
      for (let i = 0; i < calls; i++) ts.push(await recorder.rollout(() => longCall(wrapped)));
      const issues: WireIssue[] = [];
      let bytes = 0;
      for (const piece of groupWirePieces(new TrajectoryGroup(ts), issues)) bytes += piece.length;
      if (bytes === 0 || issues.length) throw new Error("wire writer failed");
    }
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / calls;
  };

  /** Wall ms of `CONCURRENT` 4-turn loops at once. */
  const concurrent = async (recorded: boolean) => {
    const sink: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENT }, () =>
        recorded ? recorder.rollout(() => loop(wrapped, sink)) : loop(raw, sink),
      ),
    );
    return performance.now() - t0;
  };

  // Warm-up: every path until V8 has optimized the recorder's functions.
  await loops(n(200));
  await paired(n(60), one(raw, "long", false), one(wrapped, "long", true));
  await paired(n(30), one(raw, "split", false), one(wrapped, "split", true));
  await paired(n(60), stream(raw, false), stream(wrapped, true));
  await paired(n(30), wholeLong.raw, wholeLong.rec);
  await paired(n(60), wholeLoop.raw, wholeLoop.rec);
  await paired(
    n(4),
    () => cpu(false, 10),
    () => cpu(true, 10),
  );
  await concurrent(false);
  await concurrent(true);

  for (const list of Object.values(ends)) list.length = 0;
  const loopTimes = await loops(n(300));
  const long = await paired(n(120), one(raw, "long", false), one(wrapped, "long", true));
  const split = await paired(n(60), one(raw, "split", false), one(wrapped, "split", true));
  const streams = await paired(n(150), stream(raw, false), stream(wrapped, true));
  const wholeLongTimes = await paired(n(120), wholeLong.raw, wholeLong.rec);
  const wholeLoopTimes = await paired(n(300), wholeLoop.raw, wholeLoop.rec);
  const cpus = await paired(
    n(12),
    () => cpu(false, 10),
    () => cpu(true, 10),
  );
  const walls: Times = { raw: [], rec: [] };
  for (let i = 0; i < n(6); i++) {
    if (i % 2) {
      walls.raw.push(await concurrent(false));
      walls.rec.push(await concurrent(true));
    } else {
      walls.rec.push(await concurrent(true));
      walls.raw.push(await concurrent(false));
    }
  }
  server.close();

  const us = (n: number) => `${n.toFixed(1)} µs`;
  const ratio = (t: Times, perMs = 1000) =>
    `${median(t.rec.map((r, i) => r / (t.raw[i] ?? r))).toFixed(3)}× raw (raw ${(median(t.raw) / perMs).toFixed(2)} ms)`;
  return {
    [`logprobs: ${LOOP_TURNS}-turn loop, ${LOOP_TOKENS} tokens top ${TOP} per call, p50 (added)`]: {
      value: `${us(added(loopTimes))} (raw ${us(median(loopTimes.raw))}); target ≤ 60 µs on Node 24`,
    },
    [`logprobs: one ${LONG_TOKENS}-token top-${TOP} call, p50 (added)`]: {
      value: `${us(added(long))}, ${ratio(long)}; target ≤ 1.05×`,
    },
    "logprobs: the same, bytes not the text's UTF-8 (slow path)": {
      value: `${us(added(split))}, ${ratio(split)}`,
    },
    [`logprobs: the rollout's end after one ${LONG_TOKENS}-token call (compacting), p50`]: {
      value: `${us(median(ends.long))}; with mismatched bytes ${us(median(ends.split))}; target ≤ 500 µs`,
    },
    [`logprobs: whole rollout, one ${LONG_TOKENS}-token top-${TOP} call (rollout end included), p50`]:
      {
        value: `${ratio(wholeLongTimes)}; target ≤ 1.10×`,
      },
    [`logprobs: whole ${LOOP_TURNS}-call rollout, ${LOOP_TOKENS} tokens top ${TOP} per call, p50`]:
      {
        value: `${ratio(wholeLoopTimes)}; target ≤ 1.10×`,
      },
    [`logprobs: process CPU per ${LONG_TOKENS}-token call, recording and wire JSON included`]: {
      value: `${median(cpus.rec.map((r, i) => r / (cpus.raw[i] ?? r))).toFixed(3)}× raw (raw ${(median(cpus.raw) / 1000).toFixed(2)} ms, recorded ${(median(cpus.rec) / 1000).toFixed(2)} ms); target ≤ 1.15×`,
    },
    [`logprobs: per streamed chunk (1 token, top ${TOP}), p50 (added)`]: {
      value: `${us(added(streams, CHUNKS))}; target ≤ 2.5 µs (the rollout's end: ${us(median(ends.stream))})`,
    },
    [`logprobs: ${CONCURRENT} concurrent ${LOOP_TURNS}-turn rollouts, wall`]: {
      value: `${ratio(walls, 1)}; target ≤ 1.0×`,
    },
  };
}
