// The body-read patch and what the caller gets inside a rollout: the SDK's own
// value and error, whatever the answer and whatever object `fetch` returned,
// and no logprobs the caller did not ask for.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { Recorder, type Trajectory } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const TOKENS = [
  { token: "Hi", logprob: -0.5, bytes: [72, 105], top_logprobs: [] },
  { token: "!", logprob: -0.25, bytes: [33], top_logprobs: [] },
];
const LOGPROBS = { content: TOKENS, refusal: null };
const completion = (id = "c1") => ({
  id,
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [
    {
      index: 0,
      finish_reason: "stop",
      logprobs: LOGPROBS,
      message: { role: "assistant", content: "Hi!" },
    },
  ],
});
const RAW = JSON.stringify(completion());
const JSON_HEADERS = { "content-type": "application/json" };
const messages = [{ role: "user" as const, content: "hello" }];
const recorder = new Recorder();

/** A client whose fetch hands back what `answer` makes, counting the requests. */
function clientWith(answer: () => unknown) {
  const sent: unknown[] = [];
  const fetch = async (_url: unknown, init?: { body?: unknown }) => {
    sent.push(init?.body);
    return answer();
  };
  const client = new OpenAI({
    apiKey: "k",
    baseURL: "http://127.0.0.1:9/v1",
    maxRetries: 0,
    fetch: fetch as never,
  });
  return { client, sent };
}

const recordedLogprobs = (t: Trajectory) =>
  [t, ...t.additional_histories].flatMap((h) =>
    JSON.parse(JSON.stringify(h))
      .messages_and_choices.filter((m: object) => "logprobs" in m)
      .map((c: { logprobs: unknown }) => c.logprobs),
  );

describe("a Response the SDK reads inside a rollout", () => {
  it("keeps a reused mock's own text() and json() across calls", async () => {
    const text = async () => RAW;
    const json = async () => JSON.parse(RAW);
    const mock = {
      ok: true,
      status: 200,
      statusText: "OK",
      url: "http://127.0.0.1:9/v1/chat/completions",
      redirected: false,
      type: "basic",
      headers: new Headers(JSON_HEADERS),
      body: null,
      bodyUsed: false,
      text,
      json,
      clone: () => mock,
    };
    const { client } = clientWith(() => mock);
    const wrapped = recorder.wrap(client);
    const answers: OpenAI.ChatCompletion[] = [];
    const t = await recorder.rollout(async () => {
      for (let i = 0; i < 3; i++)
        answers.push(await wrapped.chat.completions.create({ model: "m", messages }));
    });
    expect(mock.text).toBe(text);
    expect(mock.json).toBe(json);
    expect(Object.keys(mock)).toContain("text");
    expect(answers.map((a) => a.choices[0]?.message.content)).toEqual(["Hi!", "Hi!", "Hi!"]);
    // Not asked for by the caller: left out of the answer, kept in the trajectory.
    expect(answers.map((a) => a.choices[0]?.logprobs)).toEqual([null, null, null]);
    expect(recordedLogprobs(t)).toEqual([LOGPROBS, LOGPROBS, LOGPROBS]);
  });

  it("runs a Response subclass's own json() and text()", async () => {
    class Tagged extends Response {
      override async json() {
        return { ...(await super.json()), id: "tagged" };
      }
      override async text() {
        return (await super.text()).replace('"id":"c1"', '"id":"tagged"');
      }
    }
    const { client } = clientWith(() => new Tagged(RAW, { headers: JSON_HEADERS }));
    const wrapped = recorder.wrap(client);
    let answer: OpenAI.ChatCompletion | undefined;
    const t = await recorder.rollout(async () => {
      answer = await wrapped.chat.completions.create({ model: "m", messages });
    });
    expect(answer?.id).toBe("tagged");
    expect(answer?.choices[0]?.logprobs).toBeNull();
    expect(recordedLogprobs(t)).toEqual([LOGPROBS]);
  });

  it("falls back to the objects when text cannot be redefined, or the Response is frozen", async () => {
    const fixed = () => {
      const r = new Response(RAW, { headers: JSON_HEADERS });
      Object.defineProperty(r, "text", { value: Response.prototype.text, configurable: false });
      return r;
    };
    const frozen = () => Object.freeze(new Response(RAW, { headers: JSON_HEADERS }));
    for (const make of [fixed, frozen]) {
      const { client } = clientWith(make);
      const wrapped = recorder.wrap(client);
      const answers: OpenAI.ChatCompletion[] = [];
      const t = await recorder.rollout(async () => {
        answers.push(await wrapped.chat.completions.create({ model: "m", messages }));
        answers.push(
          await wrapped.chat.completions.create({ model: "m", messages, logprobs: true }),
        );
      });
      expect(answers.map((a) => a.choices[0]?.logprobs)).toEqual([null, LOGPROBS]);
      expect(recordedLogprobs(t)).toEqual([LOGPROBS, LOGPROBS]);
    }
  });
});

// Each kind of 2xx answer that is not a chat completion, as a loopback server
// sends it (the SDK's own fetch: node-fetch under openai 4).
const KINDS: Record<string, { status?: number; headers?: Record<string, string>; body?: string }> =
  {
    "text/plain": { headers: { "content-type": "text/plain" }, body: "hello" },
    "no content type": { body: "hello" },
    "text/json": { headers: { "content-type": "text/json" }, body: RAW },
    ndjson: { headers: { "content-type": "application/x-ndjson" }, body: `${RAW}\n${RAW}\n` },
    "JSON null": { headers: JSON_HEADERS, body: "null" },
    "a JSON string": { headers: JSON_HEADERS, body: '"hi"' },
    "204": { status: 204 },
    "an empty JSON body": { headers: { ...JSON_HEADERS, "content-length": "0" }, body: "" },
    "invalid JSON": { headers: JSON_HEADERS, body: "<html>oops</html>" },
  };

const CHUNKS = TOKENS.map((t, i) => ({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [
    {
      index: 0,
      delta: i === 0 ? { role: "assistant", content: t.token } : { content: t.token },
      logprobs: { content: [t], refusal: null },
      finish_reason: i === TOKENS.length - 1 ? "stop" : null,
    },
  ],
}));

const stalled = new Set<string>();
let server: ReturnType<typeof createServer>;
let baseURL = "";
beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const request = JSON.parse(raw);
      // The first answer of each "stall-" model stops halfway for 1.5 s, then
      // ends cut off; the next one comes whole.
      if (String(request.model).startsWith("stall-") && !stalled.has(request.model)) {
        stalled.add(request.model);
        res.writeHead(200, JSON_HEADERS);
        res.write(RAW.slice(0, 40));
        setTimeout(() => res.destroy(), 1500);
        return;
      }
      if (String(request.model).startsWith("stall-")) request.model = "answer";
      if (request.model === "answer") {
        if (request.stream) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(
            `${CHUNKS.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`,
          );
        } else res.writeHead(200, JSON_HEADERS).end(RAW);
        return;
      }
      const kind = KINDS[request.model as string];
      if (!kind) {
        res.writeHead(500).end();
        return;
      }
      res.sendDate = false;
      if (kind.headers === undefined) res.removeHeader("content-type");
      res.writeHead(kind.status ?? 200, kind.headers ?? {});
      res.end(kind.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

type Outcome = { value: unknown } | { error: { class: string; message: string; type?: unknown } };
const outcome = (p: Promise<unknown>): Promise<Outcome> =>
  p.then(
    (value) => ({ value }),
    (e: Error & { type?: unknown }) => ({
      error: { class: e.constructor.name, message: e.message, type: e.type },
    }),
  );

describe("an answer that is not a chat completion, inside a rollout", () => {
  for (const kind of Object.keys(KINDS))
    it(`${kind}: gives the caller what the SDK gives unwrapped, and says so in the trajectory`, async () => {
      const plain = new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 });
      const unwrapped = await outcome(plain.chat.completions.create({ model: kind, messages }));
      const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 }));
      let got: Outcome | undefined;
      const t = await recorder.rollout(async () => {
        got = await outcome(wrapped.chat.completions.create({ model: kind, messages }));
      });
      expect(got).toEqual(unwrapped);
      const logs = t.logs.join("\n");
      expect(logs).not.toMatch(/had not finished/);
      if ("error" in unwrapped) expect(logs).toContain(`error: ${unwrapped.error.message}`);
      else expect(logs).toMatch(/completion error: the server's answer is not a chat completion/);
    });

  it("keeps node-fetch's FetchError for invalid JSON under openai 4", async () => {
    const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 }));
    let got: Outcome | undefined;
    await recorder.rollout(async () => {
      got = await outcome(wrapped.chat.completions.create({ model: "invalid JSON", messages }));
    });
    const major = Number(process.env.OPENAI_MAJOR ?? "6");
    if (major === 4)
      expect(got).toMatchObject({ error: { class: "FetchError", type: "invalid-json" } });
    else expect(got).toMatchObject({ error: { class: "SyntaxError" } });
  });
});

describe("logprobs only the recorder asked for", () => {
  const major = Number(process.env.OPENAI_MAJOR ?? "6");
  const body = { model: "answer", messages };
  type Parse = (b: unknown) => Promise<OpenAI.ChatCompletion> & {
    withResponse: () => Promise<{ data: OpenAI.ChatCompletion }>;
  };
  type Stream = (b: unknown) => { finalChatCompletion: () => Promise<OpenAI.ChatCompletion> };
  const helper = <T>(c: OpenAI, name: string): T => {
    type Completions = Record<string, (...a: unknown[]) => unknown>;
    const o = c as unknown as {
      chat: { completions: Completions };
      beta: { chat: { completions: Completions } };
    };
    const completions = major === 4 ? o.beta.chat.completions : o.chat.completions;
    return (completions[name] as (...a: unknown[]) => unknown).bind(completions) as T;
  };
  const calls: Record<string, (c: OpenAI) => Promise<unknown[]>> = {
    create: async (c) => [(await c.chat.completions.create(body)).choices[0]?.logprobs],
    "create().withResponse()": async (c) => [
      (await c.chat.completions.create(body).withResponse()).data.choices[0]?.logprobs,
    ],
    parse: async (c) => [(await helper<Parse>(c, "parse")(body)).choices[0]?.logprobs],
    "parse().withResponse()": async (c) => [
      (await helper<Parse>(c, "parse")(body).withResponse()).data.choices[0]?.logprobs,
    ],
    "stream: true": async (c) => {
      const seen: unknown[] = [];
      for await (const chunk of await c.chat.completions.create({ ...body, stream: true }))
        seen.push(chunk.choices[0]?.logprobs);
      return seen;
    },
    "stream()": async (c) => [
      (await helper<Stream>(c, "stream")(body).finalChatCompletion()).choices[0]?.logprobs,
    ],
  };
  for (const [name, call] of Object.entries(calls))
    it(`are left out of what ${name} gives the caller, and kept in the trajectory`, async () => {
      const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 }));
      let seen: unknown[] = [];
      const t = await recorder.rollout(async () => {
        seen = await call(wrapped);
      });
      expect(seen.length).toBeGreaterThan(0);
      for (const logprobs of seen) expect(logprobs ?? null).toBeNull();
      expect(recordedLogprobs(t)).toEqual([LOGPROBS]);
    });

  it("are left out of an answer read again after its body timed out (openai 7 retries it)", async () => {
    const options = { apiKey: "k", baseURL, maxRetries: 1, timeout: 400 };
    const strip = (o: Outcome) =>
      "value" in o ? (o.value as OpenAI.ChatCompletion).choices[0]?.logprobs : o.error.class;
    const plain = new OpenAI(options);
    const unwrapped = await outcome(
      plain.chat.completions.create({ model: "stall-plain", messages }),
    );
    const wrapped = recorder.wrap(new OpenAI(options));
    let got: Outcome | undefined;
    const t = await recorder.rollout(async () => {
      got = await outcome(wrapped.chat.completions.create({ model: "stall-wrapped", messages }));
    });
    // Unwrapped, no logprobs were asked for: the server's answer has them
    // anyway here, so compare what each path makes of the same bytes.
    if ("value" in unwrapped) {
      expect(major).toBe(7);
      expect(strip(got as Outcome)).toBeNull();
      expect(recordedLogprobs(t)).toEqual([LOGPROBS]);
    } else expect(strip(got as Outcome)).toBe(unwrapped.error.class);
  });

  it("stay in a body read through asResponse(), as the server sent it (documented)", async () => {
    const wrapped = recorder.wrap(new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 }));
    let answer: OpenAI.ChatCompletion | undefined;
    const t = await recorder.rollout(async () => {
      answer = await (await wrapped.chat.completions.create(body).asResponse()).json();
    });
    expect(answer?.choices[0]?.logprobs).toEqual(LOGPROBS);
    expect(recordedLogprobs(t)).toEqual([LOGPROBS]);
  });
});
