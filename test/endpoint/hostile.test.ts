// The recording endpoint under hostile and ordinary use, from the wire: a raw
// HTTP client and curl that send paths and headers exactly as written, and an
// upstream that shows what reached it.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, request } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import { afterEach, describe, expect, it } from "vitest";

const UPSTREAM_KEY = "upstream-key-0123456789";
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const COMPLETION = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "m",
  prompt_token_ids: [1, 2, 3],
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "hello" },
      finish_reason: "stop",
      logprobs: {
        content: [{ token: "token_id:7", logprob: -0.25, bytes: [104], top_logprobs: [] }],
      },
      token_ids: [7],
    },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

/** An upstream that keeps every request as it arrived and answers `answer` (default: a completion). */
async function upstream(answer?: (seen: Seen, res: import("node:http").ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const s: Seen = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(s);
      if (answer) return answer(s, res);
      const body = JSON.stringify(
        req.method === "GET" ? { id: "m", object: "model", url: req.url } : COMPLETION,
      );
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  );
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

function recorderFor(baseURL: string, endpoint: Record<string, unknown> = {}) {
  const warnings: string[] = [];
  const recorder = new Recorder({
    upstream: { baseURL, apiKey: UPSTREAM_KEY },
    endpoint: { logger: { warn: (m: string) => warnings.push(m) }, ...endpoint },
  });
  closers.push(() => recorder.close());
  return { recorder, warnings };
}

interface RawAnswer {
  status: number;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A request sent with `path` exactly as written (node:http does not normalise it). */
function rawRequest(
  root: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<RawAnswer> {
  const u = new URL(root);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
    req.on("error", reject);
    if (headers.expect) req.on("continue", () => req.end(body));
    else req.end(body);
  });
}

/** curl, with the status on the last line. */
async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await promisify(execFile)(
    "curl",
    ["-s", "-S", "-w", "\n%{http_code}", ...args],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const cut = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

const chatBody = (content = "hi") =>
  JSON.stringify({ model: "m", messages: [{ role: "user", content }] });

describe("paths", () => {
  const ATTACKS = [
    "/v1/models/../preview/models/ID/checkpoints",
    "/v1/models/%2e%2e/preview/models/ID/checkpoints",
    "/v1/models/%2e%2e",
    "/v1/models/%2E%2E",
    "/v1/models/.",
    "/v1/models/..%2fpreview%2fmodels%2fID%2fcheckpoints",
    "/v1/models/a%2F..%2F..%2Fpreview",
    "/v1/models/..%5cpreview",
    "/v1/models/..",
    "/v1//models",
    "//v1/models",
    "/v1/./models",
    "/v1/models/",
    "/v1/models/%zz",
    "/v1/chat/completions/..",
  ];

  it("refuses dot segments (raw and percent-encoded), empty segments and unlisted paths: nothing reaches the upstream", async () => {
    const up = await upstream();
    const { recorder } = recorderFor(up.baseURL);
    await recorder.rollout(async (t) => {
      const root = new URL(t.baseURL).origin;
      const auth = { authorization: `Bearer ${t.apiKey}` };
      for (const path of ATTACKS) {
        const r = await rawRequest(root, "GET", path, auth);
        expect(r.status, path).toBe(404);
        expect(JSON.parse(r.body).error.code, path).toBe("unknown_url");
      }
      for (const path of ["/v1/models/../preview/models/ID/checkpoints", "/v1/models/%2e%2e"]) {
        const r = await curl([
          "--path-as-is",
          "-H",
          `authorization: Bearer ${t.apiKey}`,
          `${root}${path}`,
        ]);
        expect(r.status, path).toBe(404);
      }
      expect(up.seen).toEqual([]);
      // What docs/proxy.md lists still passes, a name with an encoded slash as one segment.
      const listed = await rawRequest(root, "GET", "/v1/models/Qwen%2FQwen3-4B", auth);
      expect(listed.status).toBe(200);
      const models = await rawRequest(root, "GET", "/v1/models", auth);
      expect(models.status).toBe(200);
    });
    expect(up.seen.map((s) => s.url)).toEqual(["/v1/models/Qwen%2FQwen3-4B", "/v1/models"]);
    expect(up.seen.every((s) => s.headers.authorization === `Bearer ${UPSTREAM_KEY}`)).toBe(true);
  });
});

describe("headers and bodies", () => {
  it("answers Expect: 100-continue itself and forwards a body over 1 MiB from curl, with no hop-by-hop header upstream", async () => {
    const up = await upstream();
    const { recorder } = recorderFor(up.baseURL);
    const dir = mkdtempSync(join(tmpdir(), "endpoint-"));
    const file = join(dir, "big.json");
    const big = chatBody("x".repeat(1_200_000));
    writeFileSync(file, big);
    const t = await recorder.rollout(async (t) => {
      const r = await curl([
        "-H",
        `authorization: Bearer ${t.apiKey}`,
        "-H",
        "content-type: application/json",
        "-H",
        "x-agent-tag: kept",
        "-H",
        "upgrade: h2c",
        "-H",
        "http2-settings: AAMAAABkAARAAAAAAAIAAAAA",
        "-H",
        "proxy-authorization: Basic c2VjcmV0",
        "-H",
        "te: trailers",
        "-H",
        "connection: keep-alive, x-hop",
        "-H",
        "x-hop: dropped",
        "--data-binary",
        `@${file}`,
        `${t.baseURL}/chat/completions`,
      ]);
      expect(r.status, r.body).toBe(200);
      expect(JSON.parse(r.body).choices[0].message.content).toBe("hello");
      // A raw client that waits for 100 Continue before sending the body.
      const raw = await rawRequest(
        new URL(t.baseURL).origin,
        "POST",
        "/v1/chat/completions",
        {
          authorization: `Bearer ${t.apiKey}`,
          "content-type": "application/json",
          expect: "100-continue",
          "content-length": String(Buffer.byteLength(chatBody("small"))),
        },
        chatBody("small"),
      );
      expect(raw.status, raw.body).toBe(200);
    });
    expect(up.seen).toHaveLength(2);
    const first = up.seen[0] as Seen;
    expect(JSON.parse(first.body).messages[0].content).toHaveLength(1_200_000);
    expect(first.headers["x-agent-tag"]).toBe("kept");
    for (const name of [
      "expect",
      "upgrade",
      "http2-settings",
      "proxy-authorization",
      "te",
      "x-hop",
    ])
      expect(first.headers[name], name).toBeUndefined();
    expect(up.seen[1]?.headers.expect).toBeUndefined();
    expect(t.messages_and_choices).toHaveLength(2);
    expect(t.additional_histories).toHaveLength(1);
  });

  it("decodes a gzipped (or deflate, br) body before it is re-serialised, and refuses an unknown encoding with 415", async () => {
    const up = await upstream();
    const { recorder } = recorderFor(up.baseURL, { maxBodyBytes: 100_000 });
    const dir = mkdtempSync(join(tmpdir(), "endpoint-"));
    const file = join(dir, "body.json.gz");
    writeFileSync(file, gzipSync(chatBody("zipped")));
    const t = await recorder.rollout(async (t) => {
      const auth = [
        "-H",
        `authorization: Bearer ${t.apiKey}`,
        "-H",
        "content-type: application/json",
      ];
      const r = await curl([
        ...auth,
        "-H",
        "content-encoding: gzip",
        "--data-binary",
        `@${file}`,
        `${t.baseURL}/chat/completions`,
      ]);
      expect(r.status, r.body).toBe(200);
      const zstd = await curl([
        ...auth,
        "-H",
        "content-encoding: zstd",
        "--data-binary",
        `@${file}`,
        `${t.baseURL}/chat/completions`,
      ]);
      expect(zstd.status).toBe(415);
      expect(JSON.parse(zstd.body).error).toMatchObject({ code: "unsupported_encoding" });
      expect(JSON.parse(zstd.body).error.message).toContain('"zstd"');
      // Not gzip at all: a clear 400, not the binary quoted in a parser's message.
      const liar = await curl([
        ...auth,
        "-H",
        "content-encoding: gzip",
        "--data-binary",
        chatBody(),
        `${t.baseURL}/chat/completions`,
      ]);
      expect(liar.status).toBe(400);
      expect(JSON.parse(liar.body).error.code).toBe("invalid_encoding");
      // A small body that unpacks past maxBodyBytes.
      writeFileSync(file, gzipSync(chatBody("y".repeat(500_000))));
      const bomb = await curl([
        ...auth,
        "-H",
        "content-encoding: gzip",
        "--data-binary",
        `@${file}`,
        `${t.baseURL}/chat/completions`,
      ]);
      expect(bomb.status).toBe(413);
    });
    expect(up.seen).toHaveLength(1);
    expect(up.seen[0]?.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(up.seen[0]?.body ?? "").messages[0].content).toBe("zipped");
    expect((t.messages_and_choices[0] as { content: string }).content).toBe("zipped");
  });

  it("refuses a body the recorder cannot record with 400 naming the field, before anything is sent upstream", async () => {
    const up = await upstream();
    const { recorder, warnings } = recorderFor(up.baseURL);
    const t = await recorder.rollout(async (t) => {
      const cases: Array<[unknown, string]> = [
        [{ model: "m" }, "messages"],
        [{ model: "m", messages: "hi" }, "messages"],
        [{ model: "m", messages: [{ role: "user", content: "hi" }], stream: "yes" }, "stream"],
        [{ model: "m", messages: [{ content: "hi" }] }, "messages.0.role"],
      ];
      for (const [body, param] of cases) {
        const r = await rawRequest(
          new URL(t.baseURL).origin,
          "POST",
          "/v1/chat/completions",
          { authorization: `Bearer ${t.apiKey}`, "content-type": "application/json" },
          JSON.stringify(body),
        );
        expect(r.status, JSON.stringify(body)).toBe(400);
        const error = JSON.parse(r.body).error;
        expect(error).toMatchObject({ code: "invalid_value", param });
        expect(error.message).toContain(param);
      }
    });
    expect(up.seen).toEqual([]);
    expect(warnings.join("\n")).not.toMatch(/Cannot read properties/);
    expect(t.logs.join("\n")).not.toMatch(/Cannot read properties/);
  });
});

describe("retries", () => {
  it("sends a chat completion once when the upstream resets the connection after reading it", async () => {
    let attempts = 0;
    const server = createTcpServer((socket) => {
      socket.once("data", () => {
        attempts++;
        socket.resetAndDestroy();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise((r) => server.close(r)));
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const { recorder } = recorderFor(baseURL, { maxRetries: 2 });
    const t = await recorder.rollout(async (t) => {
      const r = await rawRequest(
        new URL(t.baseURL).origin,
        "POST",
        "/v1/chat/completions",
        { authorization: `Bearer ${t.apiKey}`, "content-type": "application/json" },
        chatBody(),
      );
      expect(r.status).toBe(502);
      expect(JSON.parse(r.body).error.code).toBe("upstream_unreachable");
    });
    expect(attempts).toBe(1);
    expect(t.logs.length).toBeGreaterThan(0);
  });

  it("tries a refused connection again (the call never left)", async () => {
    const probe = createTcpServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const { recorder } = recorderFor(`http://127.0.0.1:${port}/v1`, { maxRetries: 1 });
    let answered: Promise<RawAnswer> | undefined;
    const started = Date.now();
    await recorder.rollout(async (t) => {
      answered = rawRequest(
        new URL(t.baseURL).origin,
        "POST",
        "/v1/chat/completions",
        { authorization: `Bearer ${t.apiKey}`, "content-type": "application/json" },
        chatBody(),
      );
      // The upstream comes up while the endpoint waits to try again.
      await new Promise((r) => setTimeout(r, 100));
      const late = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(COMPLETION));
      });
      await new Promise<void>((r) => late.listen(port, "127.0.0.1", r));
      closers.push(() => new Promise((r) => late.close(r)));
      const r = await answered;
      expect(r.status, r.body).toBe(200);
    });
    expect(Date.now() - started).toBeGreaterThan(300);
  });
});

describe("answers", () => {
  const post = (t: { baseURL: string; apiKey: string }, body: unknown) =>
    fetch(`${t.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("logs a 200 with cut-off JSON or HTML as a failed call saying what was wrong, and hands the agent the upstream's bytes", async () => {
    const answers = [
      ["application/json", '{"id":"x","choices":[{"ind'],
      ["text/html", "<html><body>bad gateway</body></html>"],
      ["application/json", '{"object":"error"}'],
    ];
    let i = 0;
    const up = await upstream((_s, res) => {
      const [type, text] = answers[i++] as [string, string];
      res.writeHead(200, { "content-type": type });
      res.end(text);
    });
    const { recorder } = recorderFor(up.baseURL);
    const t = await recorder.rollout(async (t) => {
      for (const [, text] of answers) {
        const r = await post(t, { model: "m", messages: [{ role: "user", content: "hi" }] });
        expect(r.status).toBe(200);
        expect(await r.text()).toBe(text);
      }
    });
    const logs = t.logs.join("\n");
    expect(logs).not.toMatch(/had not finished/);
    expect(logs).toMatch(/JSON that does not parse/);
    expect(logs).toMatch(/content-type text\/html/);
    expect(logs).toMatch(/no choices list/);
  });

  it("hands an agent that did not ask for logprobs or token ids an answer without them, as a wrapped client does, streamed or not; the trajectory keeps them", async () => {
    const chunk = (delta: object, extra: object = {}) =>
      `data: ${JSON.stringify({
        id: "c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta, finish_reason: null, ...extra }],
      })}\n\n`;
    const up = await upstream((s, res) => {
      if (!JSON.parse(s.body).stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(COMPLETION));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const lp = {
        logprobs: {
          content: [{ token: "token_id:7", logprob: -0.25, bytes: [104], top_logprobs: [] }],
        },
        token_ids: [7],
      };
      const first = chunk({ role: "assistant", content: "hel" }, lp);
      // An event split across writes.
      res.write(first.slice(0, 30));
      setTimeout(() => {
        res.write(first.slice(30));
        res.write(`${chunk({ content: "lo" }, lp).replace("\n\n", "\r\n\r\n")}`);
        res.end(`${chunk({}, { finish_reason: "stop" })}data: [DONE]\n\n`);
      }, 20);
    });
    const { recorder } = recorderFor(up.baseURL);
    const messages = [{ role: "user", content: "hi" }];
    const t = await recorder.rollout(async (t) => {
      const plain = await (await post(t, { model: "m", messages })).json();
      expect(plain.choices[0].logprobs).toBeNull();
      expect(plain.choices[0].token_ids).toBeUndefined();
      expect(plain.prompt_token_ids).toBeUndefined();
      expect(plain.choices[0].message.content).toBe("hello");
      const asked = await (
        await post(t, { model: "m", messages, logprobs: true, return_token_ids: true })
      ).json();
      expect(asked.choices[0].logprobs.content).toHaveLength(1);
      expect(asked.choices[0].token_ids).toEqual([7]);
      const text = await (await post(t, { model: "m", messages, stream: true })).text();
      expect(text).not.toContain('"logprobs":{');
      expect(text).not.toContain("token_id");
      expect(text).toContain('"content":"hel"');
      expect(text).toContain('"content":"lo"');
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
      // The openai SDK through t.baseURL reads the stripped stream as it would the upstream's.
      const openai = new OpenAI({ baseURL: t.baseURL, apiKey: t.apiKey });
      let content = "";
      for await (const c of await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }))
        content += c.choices[0]?.delta.content ?? "";
      expect(content).toBe("hello");
    });
    const choices = [
      t.messages_and_choices,
      ...t.additional_histories.map((h) => h.messages_and_choices),
    ]
      .flat()
      .filter((m) => "finish_reason" in (m as object)) as Array<{ logprobs: unknown }>;
    expect(choices.length).toBe(4);
    for (const c of choices) expect(c.logprobs).not.toBeNull();
  });
});

describe("the address handed out", () => {
  it("hands out publicURL when given (checked), and loopback rather than 0.0.0.0", async () => {
    const up = await upstream();
    const { recorder } = recorderFor(up.baseURL, {
      host: "0.0.0.0",
      allowRemote: true,
    });
    await recorder.rollout(async (t) => {
      expect(t.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const r = await rawRequest(
        new URL(t.baseURL).origin,
        "POST",
        "/v1/chat/completions",
        {
          authorization: `Bearer ${t.apiKey}`,
          "content-type": "application/json",
        },
        chatBody(),
      );
      expect(r.status).toBe(200);
    });
    const { recorder: behind } = recorderFor(up.baseURL, {
      host: "0.0.0.0",
      allowRemote: true,
      publicURL: "https://gateway.example/recorder/",
    });
    await behind.rollout(async (t) => {
      expect(t.baseURL).toBe("https://gateway.example/recorder/v1");
    });
    for (const bad of ["ftp://x", "http://a/v1", "http://u:p@a", "http://a/?q=1", "not a url", 5])
      expect(
        () =>
          new Recorder({
            upstream: { baseURL: up.baseURL },
            endpoint: { publicURL: bad as string },
          }),
        String(bad),
      ).toThrow(/endpoint\.publicURL/);
  });
});
