// The recording endpoint's way to its upstream, seen from both ends: how many
// connections reach a node:http upstream under concurrent calls, an event
// stream reaching the agent while the upstream is still writing it, and the
// agent's answer as the upstream's own bytes with only what it did not ask
// for cut out.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { Recorder } from "trajectory-recorder";
import { afterEach, describe, expect, it } from "vitest";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

/** A node:http upstream that counts the connections made to it and the most requests at once. */
async function upstream(handle: Handler) {
  const stats = { connections: 0, inFlight: 0, most: 0 };
  const server = createServer((req, res) => {
    stats.inFlight++;
    stats.most = Math.max(stats.most, stats.inFlight);
    res.once("close", () => stats.inFlight--);
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => handle(req, Buffer.concat(chunks).toString("utf8"), res));
  });
  server.keepAliveTimeout = 30_000;
  server.on("connection", () => stats.connections++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  );
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, stats };
}

function recorderFor(baseURL: string, endpoint: Record<string, unknown> = {}) {
  const recorder = new Recorder({
    upstream: { baseURL, apiKey: "upstream-key-0123456789" },
    endpoint: { logger: { warn: () => {} }, ...endpoint },
  });
  closers.push(() => recorder.close());
  return recorder;
}

const post = (t: { baseURL: string; apiKey: string }, body: object) =>
  fetch(`${t.baseURL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const messages = [{ role: "user", content: "hi" }];

const completion = (content: string) => ({
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [
    { index: 0, message: { role: "assistant", content }, finish_reason: "stop", logprobs: null },
  ],
});

describe("connections to the upstream", () => {
  it("keeps at most maxUpstreamConnections open while 12 calls are in flight, answers every call, and reuses them afterwards", async () => {
    const up = await upstream((_req, _body, res) => {
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(completion("ok")));
      }, 40);
    });
    const recorder = recorderFor(up.baseURL, { maxUpstreamConnections: 3 });
    const t = await recorder.rollout(async (t) => {
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => post(t, { model: "m", messages })),
      );
      for (const a of answers) expect((await a.json()).choices[0].message.content).toBe("ok");
      for (let i = 0; i < 4; i++)
        expect((await post(t, { model: "m", messages })).status).toBe(200);
    });
    expect(up.stats.most).toBeLessThanOrEqual(3);
    expect(up.stats.connections).toBeLessThanOrEqual(3);
    const recorded = [
      t.messages_and_choices,
      ...t.additional_histories.map((h) => h.messages_and_choices),
    ]
      .flat()
      .filter((m) => "finish_reason" in (m as object));
    expect(recorded).toHaveLength(16);
  });

  it("refuses a maxUpstreamConnections that is not a whole number of at least 1, naming it", () => {
    for (const bad of [0, 1.5, "4"])
      expect(
        () =>
          new Recorder({
            upstream: { baseURL: "http://127.0.0.1:9/v1" },
            endpoint: { maxUpstreamConnections: bad as number },
          }),
      ).toThrow(/endpoint\.maxUpstreamConnections/);
  });

  it("hands the agent a gzipped answer decoded, as fetch would", async () => {
    const up = await upstream((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify(completion("zipped"))));
    });
    const recorder = recorderFor(up.baseURL);
    await recorder.rollout(async (t) => {
      const r = await post(t, { model: "m", messages, logprobs: true, return_token_ids: true });
      expect(r.headers.get("content-encoding")).toBeNull();
      expect((await r.json()).choices[0].message.content).toBe("zipped");
    });
  });
});

describe("an event stream", () => {
  it("reaches the agent event by event while the upstream is still writing it", async () => {
    let agentSaw!: () => void;
    const seen = new Promise<void>((r) => (agentSaw = r));
    const chunk = (content: string, finish: string | null = null) =>
      `data: ${JSON.stringify({
        id: "s",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: { content }, finish_reason: finish }],
      })}\n\n`;
    let lateWritten = false;
    const up = await upstream((_req, _body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("first"));
      // The rest waits for the agent to have the first event (or gives up, and the test fails).
      const rest = () => {
        lateWritten = true;
        res.end(`${chunk(" second")}${chunk("", "stop")}data: [DONE]\n\n`);
      };
      Promise.race([seen, new Promise((r) => setTimeout(r, 3000))]).then(rest);
    });
    const recorder = recorderFor(up.baseURL);
    const t = await recorder.rollout(async (t) => {
      const r = await post(t, { model: "m", messages, stream: true, logprobs: true });
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (!text.includes('"first"')) {
        const step = await reader.read();
        if (step.done) break;
        text += decoder.decode(step.value, { stream: true });
      }
      expect(text).toContain('"first"');
      expect(lateWritten).toBe(false);
      agentSaw();
      for (let step = await reader.read(); !step.done; step = await reader.read())
        text += decoder.decode(step.value, { stream: true });
      expect(text).toContain('" second"');
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    });
    const choice = t.messages_and_choices.find((m) => "finish_reason" in m) as {
      message: { content: string };
    };
    expect(choice.message.content).toBe("first second");
  });
});

describe("the agent's answer", () => {
  // Python's json.dumps spacing, token id lists first, last and in between,
  // and a content that quotes the key: only the members themselves go.
  const upstreamText = [
    '{"id": "c", "prompt_token_ids": [1, 2, 3], "object": "chat.completion", "created": 1, "model": "m",',
    ' "choices": [{"token_ids": [7, 8], "index": 0, "message": {"role": "assistant",',
    ' "content": "say \\"token_ids\\": [1]"}, "finish_reason": "stop",',
    ' "logprobs": {"content": [{"token": "token_id:7", "logprob": -0.5, "bytes": [115], "top_logprobs": []},',
    ' {"token": "token_id:8", "logprob": -0.25, "bytes": [97], "top_logprobs": []}]}},',
    ' {"index": 1, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop",',
    ' "logprobs": null, "token_ids": [9]}],',
    ' "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}',
  ].join("");

  it("is the upstream's own bytes with the token id lists it did not ask for cut out, when it asked for logprobs", async () => {
    const up = await upstream((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(upstreamText);
    });
    const recorder = recorderFor(up.baseURL);
    const t = await recorder.rollout(async (t) => {
      const r = await post(t, { model: "m", messages, logprobs: true, n: 2 });
      expect(await r.text()).toBe(
        upstreamText
          .replace(' "prompt_token_ids": [1, 2, 3],', "")
          .replace('"token_ids": [7, 8],', "")
          .replace(', "token_ids": [9]', ""),
      );
    });
    // The trajectory keeps what the agent was not handed.
    const choice = t.messages_and_choices.find((m) => "finish_reason" in m) as {
      token_ids?: number[];
      logprobs: { content: unknown[] };
      message: { content: string };
    };
    expect(choice.token_ids).toEqual([7, 8]);
    // Recorded as the upstream sent them (read from its text, not the agent's copy).
    expect(JSON.parse(JSON.stringify(choice.logprobs))).toEqual({
      ...JSON.parse(upstreamText).choices[0].logprobs,
      refusal: null,
    });
    expect(choice.message.content).toBe('say "token_ids": [1]');
  });

  it("is written again from the parsed answer when a token_ids key sits where no Choice holds it", async () => {
    const odd = upstreamText.replace('"usage": {', '"usage": {"token_ids": [5], ');
    const up = await upstream((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(odd);
    });
    const recorder = recorderFor(up.baseURL);
    await recorder.rollout(async (t) => {
      const got = await (await post(t, { model: "m", messages, logprobs: true, n: 2 })).json();
      const want = JSON.parse(odd);
      delete want.prompt_token_ids;
      for (const c of want.choices) delete c.token_ids;
      expect(got).toEqual(want);
    });
  });

  it("leaves out logprobs and token ids an agent did not ask for, keeping every other field", async () => {
    const up = await upstream((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(upstreamText);
    });
    const recorder = recorderFor(up.baseURL);
    await recorder.rollout(async (t) => {
      const got = await (await post(t, { model: "m", messages, n: 2 })).json();
      const want = JSON.parse(upstreamText);
      delete want.prompt_token_ids;
      for (const c of want.choices) {
        delete c.token_ids;
        c.logprobs = null;
      }
      expect(got).toEqual(want);
    });
  });
});
