// Logprobs recorded off the call path: the caller's answer does not wait for
// them at all. The rollout reads the answer's lists when it ends, into the
// compact form, and keeps nothing of the SDK's objects after that.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import OpenAI from "openai";
import { currentRollout, Recorder, Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { recordedChoices, recordedResponse } from "trajectory-recorder/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompactLogprobs, isUtf8Of, MAX_WAITING_TOKENS } from "../../src/logprobs/index.js";
import { toWireGroups } from "../../src/training/index.js";

const utf8 = (s: string) => [...Buffer.from(s)];
const tok = (token: string, logprob: number, bytes: number[] | null = utf8(token)) => ({
  token,
  logprob,
  bytes,
  top_logprobs: [
    { token, logprob, bytes },
    { token: " é", logprob: -2.5, bytes: utf8(" é") },
    { token: "🙂", logprob: -7e-9, bytes: utf8("🙂") },
  ],
});
// Plain, non-ASCII, a character split over two tokens, and null bytes.
const TOKENS = [
  tok("Par", -0.01),
  tok("is", -1e-9),
  tok(" café", -0.3),
  tok("\ufffd", -0.5, [0xe2, 0x82]),
  tok("\ufffd", -0.25, [0xac]),
  tok("<eos>", -0.125, null),
];

let server: ReturnType<typeof createServer>;
let baseURL = "";
beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const body = JSON.parse(raw);
      const base = { id: "c1", created: 1, model: "m" };
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            ...base,
            object: "chat.completion",
            choices: [
              {
                index: 0,
                finish_reason: "stop",
                logprobs: { content: TOKENS, refusal: null },
                message: { role: "assistant", content: "Paris café" },
              },
            ],
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      // One token per chunk; with ?odd, the last chunk's token has an extra key.
      const chunks = TOKENS.map((t, i) => ({
        ...base,
        object: "chat.completion.chunk",
        choices: [
          {
            index: 0,
            delta: { content: i === 0 ? "Paris café" : "" },
            logprobs: {
              content: [body.model === "odd" && i === TOKENS.length - 1 ? { ...t, extra: 1 } : t],
              refusal: null,
            },
            finish_reason: i === TOKENS.length - 1 ? "stop" : null,
          },
        ],
      }));
      res.end(`${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const recorder = new Recorder();
const client = () => recorder.wrap(new OpenAI({ apiKey: "k", baseURL }));
const messages = [{ role: "user" as const, content: "capital of France?" }];
const wireLogprobs = (t: Trajectory) =>
  JSON.parse(JSON.stringify(t)).messages_and_choices[1].logprobs;
const expected = { content: TOKENS, refusal: null };

describe("recorded logprobs", () => {
  it("are the recorder's own as the call returns: editing the parsed answer changes nothing recorded", async () => {
    let answer: OpenAI.ChatCompletion | undefined;
    const t = await recorder.rollout(async () => {
      // Asked for by the caller: the answer keeps them (see the next test).
      answer = await client().chat.completions.create({ model: "m", messages, logprobs: true });
      // Edited inside the rollout, before it ends.
      answer.choices[0]!.logprobs!.content![0]!.logprob = 4;
    });
    const choice = t.messages_and_choices[1] as { logprobs: unknown };
    expect(choice.logprobs).toBeInstanceOf(CompactLogprobs);
    const content = answer!.choices[0]!.logprobs!.content!;
    content[0]!.logprob = 5;
    content[1]!.token = "edited";
    content[2]!.bytes!.push(1);
    content[3]!.bytes!.length = 0;
    content[4]!.top_logprobs.pop();
    content.splice(5, 1);
    expect(wireLogprobs(t)).toEqual(expected);
    expect(answer!.choices[0]!.logprobs!.content![0]!.logprob).toBe(5);
  });

  it("are left out of the answer when only the recorder asked for them, and kept in the trajectory", async () => {
    const asked: (OpenAI.ChatCompletion.Choice["logprobs"] | undefined)[] = [];
    const t = await recorder.rollout(async () => {
      const c = client();
      const plain = await c.chat.completions.create({ model: "m", messages });
      asked.push(plain.choices[0]!.logprobs);
      const { data, response } = await c.chat.completions
        .create({ model: "m", messages })
        .withResponse();
      asked.push(data.choices[0]!.logprobs);
      expect(response.status).toBe(200);
      expect(response.bodyUsed).toBe(true);
      const own = await c.chat.completions.create({ model: "m", messages, logprobs: true });
      asked.push(own.choices[0]!.logprobs);
    });
    expect(asked.slice(0, 2)).toEqual([null, null]);
    expect(asked[2]).toEqual(expected);
    const recorded = [t, ...t.additional_histories].flatMap((h) =>
      JSON.parse(JSON.stringify(h)).messages_and_choices.filter((m: object) => "logprobs" in m),
    );
    expect(recorded.map((c: { logprobs: unknown }) => c.logprobs)).toEqual([
      expected,
      expected,
      expected,
    ]);
  });

  it("hold nothing of the answer once the rollout has ended", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    let collected = false;
    const registry = new FinalizationRegistry<string>(() => {
      collected = true;
    });
    const t = await recorder.rollout(async () => {
      const answer = await client().chat.completions.create({
        model: "m",
        messages,
        logprobs: true,
      });
      registry.register(answer.choices[0]!.logprobs!.content!, "content");
    });
    for (let i = 0; i < 20 && !collected; i++) {
      await nextTurn();
      gc();
    }
    expect(collected).toBe(true);
    // The trajectory itself still reads as the server sent it.
    expect(wireLogprobs(t)).toEqual(expected);
  });

  it("are compact as the call returns when read from the answer's text", async () => {
    const t = await recorder.rollout(async () => {
      await client().chat.completions.create({ model: "m", messages });
      const recorded = currentRollout()!.trajectory.messages_and_choices[1] as {
        logprobs: CompactLogprobs;
      };
      expect(recorded.logprobs.isCompacted()).toBe(true);
    });
    expect(wireLogprobs(t)).toEqual(expected);
  });

  it("asked for by the caller, are copied from the parsed answer (its bytes read once), left as copies when the rollout ends and compacted as they are first written", async () => {
    let answer: OpenAI.ChatCompletion | undefined;
    let recorded: CompactLogprobs | undefined;
    const t = await recorder.rollout(async () => {
      answer = await client().chat.completions.create({ model: "m", messages, logprobs: true });
      recorded = (
        currentRollout()!.trajectory.messages_and_choices[1] as { logprobs: CompactLogprobs }
      ).logprobs;
      // A copy, not a second read of the text: no token is looked up in the table yet.
      expect(recorded.isCompacted()).toBe(false);
      answer.choices[0]!.logprobs!.content![1]!.token = "edited";
      answer.choices[0]!.logprobs!.content!.length = 2;
    });
    // Nothing for the rollout's caller to wait for: the copy is the recorder's own.
    expect(recorded!.isCompacted()).toBe(false);
    answer!.choices[0]!.logprobs!.content![0]!.logprob = 3;
    const group = new TrajectoryGroup([t]);
    expect(toWireGroups([group], "log")).toEqual([JSON.parse(JSON.stringify(group))]);
    expect(recorded!.isCompacted()).toBe(true);
    expect(wireLogprobs(t)).toEqual(expected);
  });

  it("given as objects, are compacted when the rollout ends, never in the turns between its calls", async () => {
    // Work left for "after the call" would run before the SDK sends the next
    // request, on that call's path: the rollout's end is where it waits.
    // Objects are what the framework integrations hand over (recordedChoices).
    const answer = await new OpenAI({ apiKey: "k", baseURL }).chat.completions.create({
      model: "m",
      messages,
      logprobs: true,
    });
    const held: CompactLogprobs[] = [];
    const t = await recorder.rollout(async () => {
      for (let turn = 0; turn < 3; turn++) {
        currentRollout()!.recordCompletion({
          request: { model: "m", messages },
          choices: recordedChoices(answer as never),
          response: recordedResponse(answer as never),
        });
        await nextTurn();
        await nextTurn();
      }
      const recorded = currentRollout()!.trajectory;
      for (const c of [recorded, ...recorded.additional_histories])
        for (const item of c.messages_and_choices)
          if ("logprobs" in item) held.push(item.logprobs as unknown as CompactLogprobs);
      expect(held.length).toBe(3);
      expect(held.map((l) => l.isCompacted())).toEqual([false, false, false]);
    });
    expect(held.map((l) => l.isCompacted())).toEqual([true, true, true]);
    expect(wireLogprobs(t)).toEqual(expected);
  });

  it("are compacted oldest first, in slices, once more than the cap wait and a full collection has kept them", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const big = Array.from({ length: 2000 }, (_, i) => tok(` t${i % 50}`, -i / 1000));
    const perList = big.length * 4; // each token and its three alternatives
    const lists = Array.from(
      { length: Math.ceil(MAX_WAITING_TOKENS / perList) + 2 },
      () => CompactLogprobs.capture({ content: big, refusal: null })!,
    );
    for (const l of lists) l.hold();
    const waiting = () => lists.filter((l) => !l.isCompacted()).length * perList;
    // Not before a full collection has shown they are kept: until then they
    // may be a dropped trajectory's, not worth a token-table lookup each.
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(lists.every((l) => !l.isCompacted())).toBe(true);
    for (let i = 0; i < 500 && waiting() > MAX_WAITING_TOKENS; i++) {
      gc();
      await nextTurn();
    }
    expect(waiting()).toBeLessThanOrEqual(MAX_WAITING_TOKENS);
    expect(lists[0]!.isCompacted()).toBe(true);
    expect(lists[1]!.isCompacted()).toBe(true);
    // Only down to the cap: the newest still wait for their owner.
    expect(lists.at(-1)!.isCompacted()).toBe(false);
    expect(JSON.parse(JSON.stringify(lists[0]))).toEqual(JSON.parse(JSON.stringify(lists.at(-1))));
    for (const l of lists) l.compact();
  });

  it("of trajectories nobody keeps are left to the garbage collector, never compacted past the cap", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const big = Array.from({ length: 2000 }, (_, i) => tok(` t${i % 50}`, -i / 1000));
    const perList = big.length * 4;
    let compacted = 0;
    let freed = 0;
    const registry = new FinalizationRegistry<undefined>(() => {
      freed += 1;
    });
    const dropped = Math.ceil((2 * MAX_WAITING_TOKENS) / perList);
    // Made in a function of their own: nothing of the test's frame keeps one.
    const holdOne = () => {
      const list = CompactLogprobs.capture({ content: big, refusal: null })!;
      const compact = list.compact.bind(list);
      list.compact = () => {
        compacted += 1;
        compact();
      };
      list.hold();
      registry.register(list, undefined);
    };
    for (let i = 0; i < dropped; i++) holdOne();
    // Turns in which the old sweep compacted them, then full collections.
    for (let i = 0; i < 20; i++) await nextTurn();
    for (let i = 0; i < 50 && freed < dropped; i++) {
      await nextTurn();
      gc();
    }
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(freed).toBe(dropped);
    expect(compacted).toBe(0);
  });

  it("read as the SDK's objects at any time, before and after they are compacted", async () => {
    const t = await recorder.rollout(async () => {
      await client().chat.completions.create({ model: "m", messages });
    });
    // Read in the same turn the rollout ended, then again after compaction.
    const read = () =>
      (t.messages_and_choices[1] as { logprobs: { content: unknown } }).logprobs.content;
    expect(read()).toEqual(TOKENS);
    await nextTurn();
    expect(read()).toEqual(TOKENS);
  });

  it("stream in as chunks arrive and serialize as the non-streamed answer does", async () => {
    const plain = await recorder.rollout(async () => {
      await client().chat.completions.create({ model: "m", messages });
    });
    const streamed = await recorder.rollout(async () => {
      const s = await client().chat.completions.create({ model: "m", messages, stream: true });
      for await (const chunk of s) {
        // Chunks edited after they were read change nothing recorded.
        const lp = chunk.choices[0]?.logprobs?.content?.[0];
        if (lp) lp.logprob = 99;
      }
    });
    const choice = streamed.messages_and_choices[1] as { logprobs: unknown };
    expect(choice.logprobs).toBeInstanceOf(CompactLogprobs);
    expect(wireLogprobs(streamed)).toEqual(expected);
    const logprobsText = (t: Trajectory) =>
      JSON.stringify((t.messages_and_choices[1] as { logprobs: unknown }).logprobs);
    expect(logprobsText(streamed)).toBe(logprobsText(plain));
  });

  it("keep a streamed list whose tokens change shape as plain data, losing nothing", async () => {
    const t = await recorder.rollout(async () => {
      const s = await client().chat.completions.create({ model: "odd", messages, stream: true });
      for await (const _ of s);
    });
    const choice = t.messages_and_choices[1] as { logprobs: unknown };
    expect(choice.logprobs).not.toBeInstanceOf(CompactLogprobs);
    const last = TOKENS.at(-1)!;
    expect(wireLogprobs(t).content).toEqual([
      ...TOKENS.slice(0, -1),
      { ...last, top_logprobs: last.top_logprobs, extra: 1 },
    ]);
  });

  it("go through toWireGroups as JSON.stringify writes them", async () => {
    const t = await recorder.rollout(async () => {
      await client().chat.completions.create({ model: "m", messages });
    });
    t.reward = 1;
    const group = new TrajectoryGroup([t, new Trajectory({ messages_and_choices: [] })]);
    expect(toWireGroups([group], "log")).toEqual([JSON.parse(JSON.stringify(group))]);
    t.reward = Number.NaN;
    expect(() => toWireGroups([group], "log")).toThrow(
      /groups\[0\]\.trajectories\[0\]\.reward: is NaN, but JSON has no such number/,
    );
  });
});

it("checks bytes against a text's UTF-8 as TextEncoder writes it", () => {
  const texts = [
    "",
    "abc",
    " é",
    "€",
    "🙂",
    "a\ud83d",
    "\udc00b",
    "日本語",
    "\u0000\u007f\u0080\u07ff\u0800\uffff",
  ];
  for (const text of texts) {
    const bytes = [...new TextEncoder().encode(text)];
    expect(isUtf8Of(text, bytes), text).toBe(true);
    expect(isUtf8Of(text, [...bytes, 0]), text).toBe(false);
    if (bytes.length) expect(isUtf8Of(text, bytes.slice(1)), text).toBe(false);
    if (bytes.length) expect(isUtf8Of(text, [bytes[0]! ^ 1, ...bytes.slice(1)]), text).toBe(false);
  }
});
