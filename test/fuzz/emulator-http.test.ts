// Property-based requests to the emulator's HTTP surface: whatever the
// method, path, key and body, it answers below 500 with a JSON body naming
// what was wrong, never echoes a key, and keeps serving.
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { anything, check, SECRET } from "./helpers.js";

let emu: Emulator;
let dataDir: string;
let modelId: string;
const warnings: string[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

/** One raw request: any method, path and body, as a hostile client would send. */
function send(
  method: string,
  p: string,
  body: string | undefined,
  key: string | null,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port: emu.port,
      // Raw, as sent on the wire: no URL normalization of "..", "//" or "%".
      path: p.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c)),
      method,
      headers: {
        ...(key !== null ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined
          ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
          : {}),
      },
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

beforeAll(async () => {
  process.on("unhandledRejection", onUnhandled);
  dataDir = await mkdtemp(path.join(tmpdir(), "fuzz-emu-"));
  emu = await startEmulator({
    port: 0,
    apiKeys: { [SECRET]: "fuzz" },
    dataDir,
    maxBodyBytes: 256 * 1024,
    onWarning: (m) => warnings.push(m),
  });
  const r = await send(
    "POST",
    "/v1/preview/models",
    JSON.stringify({ project: "fuzz", name: "m", base_model: "b" }),
    SECRET,
  );
  modelId = JSON.parse(r.text).id;
  expect(modelId).toMatch(/^[0-9a-f-]{36}$/);
});
afterAll(async () => {
  await emu.close();
  await rm(dataDir, { recursive: true, force: true });
  process.off("unhandledRejection", onUnhandled);
  expect(unhandled).toEqual([]);
  expect(warnings).toEqual([]);
});

/** JSON text nested `depth` levels, built as text. */
const nested = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

const segment = fc.oneof(
  fc.constantFrom(
    "MODEL",
    "JOB",
    "x",
    "",
    "..",
    "%00",
    "%2F",
    "00000000-0000-0000-0000-000000000000",
  ),
  fc.string({ maxLength: 8 }),
);
const route = fc.oneof(
  fc.constantFrom(
    "/health",
    "/system-check",
    "/chat/completions",
    "/preview/models",
    "/preview/models/MODEL",
    "/preview/models/MODEL/checkpoints",
    "/preview/models/MODEL/log",
    "/preview/training-jobs",
    "/preview/sft-training-jobs",
    "/preview/training-jobs/JOB",
    "/preview/training-jobs/JOB/events",
  ),
  fc.array(segment, { maxLength: 4 }).map((parts) => `/preview/${parts.join("/")}`),
);
const query = fc.oneof(
  fc.constant(""),
  fc
    .dictionary(
      fc.constantFrom("after", "limit", "order", "x"),
      fc.oneof(fc.string(), fc.integer().map(String)),
    )
    .map((q) => `?${new URLSearchParams(q)}`),
);
const json = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.constant(nested(5_000)),
  anything.map((v) => {
    try {
      return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? Number(x) : x)) ?? "null";
    } catch {
      return "{";
    }
  }),
  fc.string(),
);
const chatBody = fc
  .record(
    {
      model: fc.oneof(fc.string(), fc.constant("wandb-artifact:///fuzz/fuzz/m"), anything),
      messages: fc.oneof(
        fc.array(
          fc.record({ role: fc.constantFrom("user", "assistant", "system"), content: fc.string() }),
          {
            minLength: 1,
            maxLength: 2,
          },
        ),
        anything,
      ),
      n: fc.oneof(fc.integer({ min: -2, max: 200 }), fc.constant(5_000_000), anything),
      max_tokens: fc.oneof(fc.integer({ min: -2, max: 40 }), fc.constant(10_000_000), anything),
      logprobs: fc.oneof(fc.boolean(), anything),
      top_logprobs: fc.oneof(fc.integer({ min: -1, max: 100 }), anything),
      stream: fc.boolean(),
      tool_choice: fc.oneof(fc.constantFrom("auto", "required", "none"), anything),
    },
    { requiredKeys: ["model", "messages"] },
  )
  .map((b) => JSON.stringify(b, (_k, x) => (typeof x === "bigint" ? Number(x) : x)));
/** Trajectory groups as logged or trained, with metadata from plain to 6,000 levels deep. */
const groupsBody = fc
  .record({
    split: fc.oneof(fc.constant("val"), fc.string()),
    reward: fc.oneof(fc.double(), fc.integer()),
    content: fc.string(),
    metadata: fc.oneof(
      fc.json({ maxDepth: 3 }),
      fc.integer({ min: 1, max: 6_000 }).map((d) => `${'{"a":'.repeat(d)}1${"}".repeat(d)}`),
    ),
  })
  .map(
    ({ split, reward, content, metadata }) =>
      `{"model_id":"MODEL","split":${JSON.stringify(split)},"trajectory_groups":[{"trajectories":[{"messages_and_choices":[{"role":"user","content":${JSON.stringify(content)}}],"reward":${JSON.stringify(reward)},"metadata":${metadata}},{"messages_and_choices":[],"reward":0}]}]}`,
  );
const anyRequest = fc.record({
  method: fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH"),
  route,
  query,
  body: fc.oneof(fc.constant(undefined), json, chatBody, groupsBody),
  key: fc.oneof(
    fc.constant(SECRET),
    fc.constant(SECRET),
    fc.constant(null),
    fc.string({ maxLength: 12 }),
  ),
});

async function expectCleanAnswer(r: {
  method: string;
  route: string;
  query: string;
  body: string | undefined;
  key: string | null;
}) {
  const p = `/v1${r.route.replace("MODEL", modelId).replace("JOB", modelId)}`;
  const res = await send(r.method, `${p}${r.query}`, r.body?.replace("MODEL", modelId), r.key);
  expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
  expect(res.text).not.toContain(SECRET);
  if (res.status < 400) return;
  const body = JSON.parse(res.text);
  if (body.error) {
    expect(typeof body.error.message).toBe("string");
  } else if (Array.isArray(body.detail)) {
    for (const item of body.detail) {
      expect(Array.isArray(item.loc)).toBe(true);
      expect(["body", "query", "path"]).toContain(item.loc[0]);
      expect(typeof item.msg).toBe("string");
    }
  } else {
    expect(typeof body.detail).toBe("string");
  }
}

it("answers every request below 500 with JSON naming the problem, never echoes the key, and keeps serving", async () => {
  await check(anyRequest, expectCleanAnswer, 500);
  expect((await send("GET", "/v1/health", undefined, null)).status).toBe(200);
});

it("takes any trajectory groups, chat request or JSON on the routes that write, and keeps its data dir", async () => {
  const writes = fc.record({
    method: fc.constant("POST"),
    route: fc.constantFrom(
      "/preview/models/MODEL/log",
      "/preview/training-jobs",
      "/preview/sft-training-jobs",
      "/chat/completions",
      "/preview/models",
    ),
    query: fc.constant(""),
    body: fc.oneof(groupsBody, groupsBody, chatBody, json),
    key: fc.constant(SECRET),
  });
  await check(writes, expectCleanAnswer, 300);
  expect((await send("GET", "/v1/health", undefined, null)).status).toBe(200);
});
