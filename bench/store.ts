// What the trajectory store costs per recorded call: `put` of a trajectory's
// full state after each call, as the server does, for an RL loop's calls
// (4 turns of 64 sampled tokens with top-5 logprobs) and for one long answer
// (2,000 tokens, top-5 logprobs); `get` of each; the begun-call records.
// A session's calls are also written as the recorder writes them now: a
// put at its first call, then an append of what each later call added
// (its user message and Choice), per call across a 4-call session, at 64
// and at 2,000 tokens, beside a full put after every call.
// The store's own work only, on the machine's disk, fsync off (the default)
// and on ("always"). The reference is what any recording endpoint does with
// such an answer anyway: JSON.parse of the completion and JSON.stringify of
// the trajectory; the ratio of the store's put to it says how far the store
// can move an endpoint's cost.
//
// BENCH_ONLY=store runs these rows alone; BENCH_STORE_SCALE=0.3 runs fewer samples.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
// Not public yet (the server exposes it), so taken from the sources.
import { TrajectoryStore } from "../src/store/index.js";
import type { ChoiceWire, TrajectoryWire } from "../src/wire/index.js";

const TOP = 5;
const SCALE = Number(process.env.BENCH_STORE_SCALE ?? 1);
const n = (rounds: number) => Math.max(5, Math.round(rounds * SCALE));

let seed = 11;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
// Tokens as vLLM spells them when asked for token ids: `token_id:N`, its UTF-8 as bytes.
const token = () => {
  const text = `token_id:${Math.floor(rand() * 150_000)}`;
  return { token: text, logprob: -rand() * 12, bytes: [...Buffer.from(text)] };
};

/** An OpenAI completion with `count` sampled tokens and their top-5 alternatives. */
function completion(count: number) {
  const content = Array.from({ length: count }, () => ({
    ...token(),
    top_logprobs: Array.from({ length: TOP }, token),
  }));
  return {
    id: "c",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        logprobs: { content, refusal: null },
        message: {
          role: "assistant" as const,
          content: content.map((t) => t.token).join(""),
          refusal: null,
        },
        token_ids: content.map((t) => Number(t.token.slice(9))),
      },
    ],
  };
}

/** A trajectory of `turns` calls, each answered by a `tokens`-token Choice. */
function trajectory(turns: number, tokens: number): TrajectoryWire {
  const messages: TrajectoryWire["messages_and_choices"] = [
    { role: "system", content: "You are a careful assistant. Answer in one paragraph." },
  ];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: "user", content: `Question ${i + 1}: what comes next in the sequence?` });
    messages.push(completion(tokens).choices[0] as TrajectoryWire["messages_and_choices"][number]);
  }
  return {
    messages_and_choices: messages,
    tools: null,
    additional_histories: [],
    reward: 0,
    initial_policy_version: 3,
    final_policy_version: 3,
    metrics: {},
    metadata: { scenario: "bench" },
    logs: [],
  };
}

const now = () => Number(process.hrtime.bigint()) / 1000;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const us = (x: number) => `${x.toFixed(1)} µs`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

type Row = Record<string, { value: string }>;

async function measure(
  fsync: "never" | "always",
): Promise<{ rows: Row; refLong: number; putLong: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-store-"));
  const store = await TrajectoryStore.open({ dir, fsync, logger: { warn() {} } });
  const loop = [1, 2, 3, 4].map((t) => trajectory(t, 64));
  const long = trajectory(1, 2000);
  const longAnswer = JSON.stringify(completion(2000));
  const loopAnswer = JSON.stringify(completion(64));
  const rounds = n(fsync === "always" ? 60 : 200);
  const longRounds = n(fsync === "always" ? 6 : 20);
  const longSession = [1, 2, 3, 4].map((t) => trajectory(t, 2000));

  const putLoop: number[] = [];
  const deltaLoop: number[] = [];
  const sessionFull: number[] = [];
  const sessionDelta: number[] = [];
  const putLong: number[] = [];
  const getLoop: number[] = [];
  const getLong: number[] = [];
  const begin: number[] = [];
  const progress: number[] = [];
  const reference: number[] = [];
  const referenceLoop: number[] = [];
  // What the client sends: plain messages, the answers as text.
  const messages = (loop[3]?.messages_and_choices ?? []).map((m) =>
    "message" in m ? { role: "assistant", content: (m as ChoiceWire).message.content } : m,
  );
  for (let r = 0; r < rounds; r++) {
    const id = `loop-${r}`;
    for (let turn = 1; turn <= 4; turn++) {
      let t = now();
      store.beginCall(id, turn, { model: "m", messages: messages.slice(0, 2 * turn) });
      begin.push(now() - t);
      t = now();
      store.progressCall(id, turn, { content: "partial answer so far" });
      progress.push(now() - t);
      t = now();
      store.put({
        id,
        session: `s${r}`,
        status: "open",
        trajectory: loop[turn - 1] as TrajectoryWire,
        calls: turn,
      });
      putLoop.push(now() - t);
    }
    for (let turn = 1; turn <= 4; turn++) {
      const t = now();
      writeCall(store, `delta-${r}`, loop, turn);
      deltaLoop.push(now() - t);
    }
    let t = now();
    store.get(id);
    getLoop.push(now() - t);
    if (r < longRounds)
      for (let turn = 1; turn <= 4; turn++) {
        t = now();
        store.put({
          id: `long-full-${r}`,
          session: null,
          status: "open",
          trajectory: longSession[turn - 1] as TrajectoryWire,
          calls: turn,
        });
        sessionFull.push(now() - t);
        t = now();
        writeCall(store, `long-delta-${r}`, longSession, turn);
        sessionDelta.push(now() - t);
      }

    t = now();
    store.put({ id: `long-${r}`, session: null, status: "finished", trajectory: long, calls: 1 });
    putLong.push(now() - t);
    t = now();
    store.get(`long-${r}`);
    getLong.push(now() - t);

    t = now();
    JSON.stringify(JSON.parse(loopAnswer).choices[0]);
    referenceLoop.push(now() - t);
    t = now();
    JSON.stringify(JSON.parse(longAnswer));
    JSON.stringify(long);
    reference.push(now() - t);
  }
  const stats = store.stats();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  const tag = fsync === "always" ? " [fsync always]" : "";
  const rows: Row = {
    [`put, 64-token call of a 4-turn trajectory, p50${tag}`]: { value: us(pct(putLoop, 0.5)) },
    [`put, 64-token call of a 4-turn trajectory, p95${tag}`]: { value: us(pct(putLoop, 0.95)) },
    [`put, one 2,000-token answer, p50${tag}`]: { value: us(pct(putLong, 0.5)) },
    [`put, one 2,000-token answer, p95${tag}`]: { value: us(pct(putLong, 0.95)) },
  };
  Object.assign(rows, {
    [`per call of a 4-call session, 64 tokens: put each call / put + appends, p50${tag}`]: {
      value: `${us(pct(putLoop, 0.5))} / ${us(pct(deltaLoop, 0.5))}`,
    },
    [`per call of a 4-call session, 2,000 tokens: put each call / put + appends, p50${tag}`]: {
      value: `${us(pct(sessionFull, 0.5))} / ${us(pct(sessionDelta, 0.5))}`,
    },
    [`the same, mean over the 4 calls${tag}`]: {
      value: `${us(mean(sessionFull))} / ${us(mean(sessionDelta))}`,
    },
  });
  if (fsync === "never")
    Object.assign(rows, {
      "beginCall (its new messages written), p50": { value: us(pct(begin, 0.5)) },
      "progressCall, p50": { value: us(pct(progress, 0.5)) },
      "per 64-token call with beginCall + 1 progressCall + put, p50": {
        value: us(pct(begin, 0.5) + pct(progress, 0.5) + pct(putLoop, 0.5)),
      },
      "get, 4-turn trajectory, p50": { value: us(pct(getLoop, 0.5)) },
      "get, 2,000-token trajectory, p50": { value: us(pct(getLong, 0.5)) },
      "record size: 4-turn / 2,000-token trajectory": {
        value: `${kib(JSON.stringify(loop[3]).length)} / ${kib(JSON.stringify(long).length)}`,
      },
      "reference: parse a 2,000-token answer + stringify its trajectory, p50": {
        value: us(pct(reference, 0.5)),
      },
      "reference: parse a 64-token answer + stringify its Choice, p50": {
        value: us(pct(referenceLoop, 0.5)),
      },
      "put of a 64-token call (4-turn mean) / its reference": {
        value: `${((100 * pct(putLoop, 0.5)) / pct(referenceLoop, 0.5)).toFixed(0)}%`,
      },
      "put of a 2,000-token answer / reference": {
        value: `${((100 * pct(putLong, 0.5)) / pct(reference, 0.5)).toFixed(0)}%`,
      },
      "store after the run": { value: `${stats.segments} segments, ${kib(stats.bytes)}` },
    });
  return { rows, refLong: pct(reference, 0.5), putLong: pct(putLong, 0.5) };
}

/**
 * Call `turn` of a session as the recorder writes it: the full state at the
 * first call, then only what the call added (its user message and Choice).
 */
function writeCall(store: TrajectoryStore, id: string, states: TrajectoryWire[], turn: number) {
  const state = states[turn - 1] as TrajectoryWire;
  const { messages_and_choices, additional_histories: _, ...fields } = state;
  const from = messages_and_choices.length - 2;
  const appended =
    turn > 1 &&
    store.append({
      id,
      session: null,
      status: "open",
      calls: turn,
      from: { main: from, histories: [] },
      main: messages_and_choices.slice(from),
      histories: [],
      fields,
    });
  if (!appended) store.put({ id, session: null, status: "open", trajectory: state, calls: turn });
}

/** The store's rows, for `console.table`. */
export async function benchStore(): Promise<Row> {
  const off = await measure("never");
  const on = await measure("always");
  return { ...off.rows, ...on.rows };
}

if (import.meta.url === `file://${process.argv[1]}`) console.table(await benchStore());
