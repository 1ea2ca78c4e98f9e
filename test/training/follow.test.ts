import http from "node:http";
import type { AddressInfo } from "node:net";
import { TrainingClient, TrainingFailedError } from "trajectory-recorder";
import { afterEach, expect, it } from "vitest";
import { followTrainingJob } from "../../src/training/index.js";

// A scripted events endpoint: `pages(after, poll)` decides what each GET answers.
let server: http.Server | undefined;
async function serve(
  answer: (
    q: URLSearchParams,
    n: number,
  ) => { status?: number; headers?: Record<string, string>; body?: unknown },
) {
  const queries: URLSearchParams[] = [];
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    queries.push(url.searchParams);
    const out = answer(url.searchParams, queries.length);
    res.writeHead(out.status ?? 200, { "content-type": "application/json", ...out.headers });
    res.end(JSON.stringify(out.body ?? {}));
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const client = new TrainingClient({
    apiKey: "k",
    baseURL: `http://127.0.0.1:${port}/v1`,
    maxRetries: 0,
  });
  return { client, queries };
}
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

const JOB_1 = "0b9a4f3e-1c2d-4e5f-8a9b-0c1d2e3f4a51";
const JOB_2 = "0b9a4f3e-1c2d-4e5f-8a9b-0c1d2e3f4a52";
const ev = (id: string, type: string, data: Record<string, unknown> = {}) => ({ id, type, data });
const page = (data: unknown[], has_more = false) => ({ object: "list", data, has_more });

it("keeps the cursor until the first gradient step, pages through has_more, and averages the step metrics", async () => {
  const { client, queries } = await serve((q, n) => {
    const after = q.get("after");
    if (n === 1) return { body: page([ev("s", "training_started", { num_sequences: 3 })]) };
    if (n === 2 && after === null)
      return {
        body: page(
          [
            ev("s", "training_started", { num_sequences: 3 }),
            ev("g1", "gradient_step", { loss: 1, reward: 0.5 }),
          ],
          true,
        ),
      };
    if (after === "g1" && n === 3)
      return { body: page([ev("g2", "gradient_step", { loss: 3, reward: 1.5 })]) };
    if (after === "g2")
      return {
        body: page([
          ev("g3", "gradient_step", { loss: 2 }),
          ev("end", "training_ended"),
          ev("late", "gradient_step", { loss: 99 }),
        ]),
      };
    return { body: page([]) };
  });
  const seen: string[] = [];
  const result = await followTrainingJob(client, JOB_1, {
    pollIntervalMs: 5,
    onEvent: (p) => seen.push(`${p.type}:${p.gradientSteps}/${p.totalSteps}`),
  });
  expect(seen).toEqual([
    "training_started:0/3",
    "gradient_step:1/3",
    "gradient_step:2/3",
    "gradient_step:3/3",
    "training_ended:3/3",
  ]);
  expect(result.metrics).toEqual({ "loss/train": 2, reward: 1, "data/step_num_gradient_steps": 3 });
  expect(result.rawMetrics).toEqual({ loss: 2, reward: 1, num_gradient_steps: 3 });
  expect(queries.map((q) => q.get("after"))).toEqual([null, null, "g1", "g2"]);
  expect(queries.every((q) => q.get("limit") === null)).toBe(true);
});

it("throws TrainingFailedError with the service's message on training_failed", async () => {
  const { client } = await serve(() => ({
    body: page([
      ev("s", "training_started", { num_sequences: 1 }),
      ev("f", "training_failed", { error_message: "GPU on fire" }),
    ]),
  }));
  const err = await followTrainingJob(client, JOB_2, { pollIntervalMs: 1 }).catch((e) => e);
  expect(err).toBeInstanceOf(TrainingFailedError);
  expect(err.message).toBe(`RL training job ${JOB_2} failed: GPU on fire`);
  expect(err.jobId).toBe(JOB_2);
});

it("falls back to ART's message when the failure has none", async () => {
  const { client } = await serve(() => ({ body: page([ev("f", "training_failed")]) }));
  const err = await followTrainingJob(client, JOB_1, { pollIntervalMs: 1, kind: "SFT" }).catch(
    (e) => e,
  );
  expect(err.message).toBe(
    `SFT training job ${JOB_1} failed: Training failed with an unknown error`,
  );
});

it("backs off on 503 and 429 (honouring Retry-After) and then goes on", async () => {
  const { client, queries } = await serve((_q, n) => {
    if (n === 1) return { status: 503, body: { detail: "busy" } };
    if (n === 2)
      return { status: 429, headers: { "retry-after-ms": "20" }, body: { detail: "slow down" } };
    return { body: page([ev("e", "training_ended")]) };
  });
  const started = Date.now();
  const result = await followTrainingJob(client, JOB_1, {
    pollIntervalMs: 1,
    backoff: { initialDelayMs: 5 },
  });
  expect(result.gradientSteps).toBe(0);
  expect(queries).toHaveLength(3);
  expect(Date.now() - started).toBeGreaterThanOrEqual(20);
});

it("gives up after maxPollFailures retryable errors, keeping the error class", async () => {
  const { client, queries } = await serve(() => ({ status: 502, body: { detail: "bad gateway" } }));
  const err = await followTrainingJob(client, JOB_1, {
    pollIntervalMs: 1,
    maxPollFailures: 2,
    backoff: { initialDelayMs: 5 },
  }).catch((e) => e);
  expect(err.name).toBe("InternalServerError");
  expect(queries).toHaveLength(3);
});

it("stops following when the signal aborts", async () => {
  const { client: plain, queries } = await serve(() => ({
    body: page([ev("s", "training_started", { num_sequences: 9 })]),
  }));
  // Polls are counted where they start: a poll already sent when the signal
  // aborts may still reach the server afterwards, which is not a new poll.
  let pollsStarted = 0;
  const client = new TrainingClient({
    apiKey: "k",
    baseURL: plain.baseURL,
    maxRetries: 0,
    fetch: (input, init) => {
      pollsStarted += 1;
      return fetch(input, init);
    },
  });
  const controller = new AbortController();
  const following = followTrainingJob(client, JOB_1, {
    pollIntervalMs: 10,
    signal: controller.signal,
  });
  while (queries.length < 2) await new Promise((r) => setTimeout(r, 5));
  controller.abort(new Error("user stopped"));
  const startedBeforeAbort = pollsStarted;
  await expect(following).rejects.toThrow("user stopped");
  await new Promise((r) => setTimeout(r, 50));
  expect(pollsStarted).toBe(startedBeforeAbort);
});

it("ends with the signal's reason also when the abort cuts a poll short", async () => {
  let held = 0;
  server = http.createServer(() => {
    held += 1; // never answered: the poll is in flight when the signal aborts
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const client = new TrainingClient({
    apiKey: "k",
    baseURL: `http://127.0.0.1:${port}/v1`,
    maxRetries: 0,
  });
  const controller = new AbortController();
  const following = followTrainingJob(client, JOB_1, {
    pollIntervalMs: 1,
    signal: controller.signal,
  });
  while (held === 0) await new Promise((r) => setTimeout(r, 5));
  controller.abort(new Error("user stopped"));
  await expect(following).rejects.toThrow("user stopped");
  server.closeAllConnections();
});
