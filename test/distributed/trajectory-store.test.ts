// The Redis trajectory store behind the recording proxy: a session recorded
// call by call (appends, not rewrites), feedback by id from another proxy
// and another connection (idempotent, 409 naming the field, 404), bounds
// that drop the oldest unrewarded first and count it, a call cut by a
// stopped process kept as far as it got, and a proxy (and Redis) restart
// that loses nothing. Against a real redis-server.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import OpenAI from "openai";
import { RedisTrajectoryStore } from "trajectory-recorder/bullmq";
import { type RecordingProxy, startRecordingProxy } from "trajectory-recorder/proxy";
import {
  FeedbackConflictError,
  FeedbackNotFoundError,
  type TrajectoryWire,
} from "trajectory-recorder/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedis } from "./redis-server.js";

const KEY = "control-key-0123456789";
let redis: RedisServer;
let raw: Redis;
let upstream: Server;
let upstreamURL: string;

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.connection);
  raw.on("error", () => {});
  upstream = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const { model, messages } = JSON.parse(body);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 1,
          model,
          choices: [
            {
              index: 0,
              finish_reason: "stop",
              message: { role: "assistant", content: `answer ${messages.length}` },
              logprobs: null,
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamURL = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  raw.disconnect();
  await redis.close();
  await new Promise<void>((r) => upstream.close(() => r()));
});

const url = () => `redis://127.0.0.1:${redis.port}/0`;
const quiet = () => {
  const lines: string[] = [];
  return { lines, logger: { warn: (m: string) => lines.push(m), info: () => {} } };
};

async function proxyOn(
  prefix: string,
): Promise<{ proxy: RecordingProxy; store: RedisTrajectoryStore }> {
  const store = await RedisTrajectoryStore.open({
    connection: url(),
    prefix,
    logger: quiet().logger,
  });
  const proxy = await startRecordingProxy({
    upstream: { baseURL: upstreamURL },
    apiKey: KEY,
    store,
    logger: { warn: () => {} },
  });
  return { proxy, store };
}

const post = (to: string, body: unknown) =>
  fetch(to, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
    body: JSON.stringify(body),
  });

async function chat(proxy: RecordingProxy, session: string, turns: string[]): Promise<string> {
  const client = new OpenAI({
    baseURL: proxy.baseURL,
    apiKey: KEY,
    maxRetries: 0,
    defaultHeaders: { "x-trajectory-session": session },
  });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
  let id = "";
  for (const text of turns) {
    messages.push({ role: "user", content: text });
    const { data, response } = await client.chat.completions
      .create({ model: "m", messages })
      .withResponse();
    id = response.headers.get("x-trajectory-id") as string;
    messages.push({ role: "assistant", content: data.choices[0]?.message.content ?? "" });
  }
  return id;
}

describe("the proxy with the Redis store", () => {
  it("records a session call by call, appending each call rather than rewriting the trajectory", async () => {
    const { proxy, store } = await proxyOn("rec");
    try {
      const id = await chat(proxy, "s-rec", ["one", "two", "three"]);
      expect(id).toMatch(/^trj_/);
      const res = await fetch(`${proxy.url}/v1/trajectories/${id}`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      expect(res.status).toBe(200);
      const got = (await res.json()) as {
        session: string;
        calls: number;
        trajectory: { messages_and_choices: { content?: string; message?: { content: string } }[] };
      };
      expect(got.session).toBe("s-rec");
      expect(got.calls).toBe(3);
      const texts = got.trajectory.messages_and_choices.map((m) => m.content ?? m.message?.content);
      expect(texts).toEqual(["one", "answer 1", "two", "answer 3", "three", "answer 5"]);
      // The first call put the state; the later two were appended to it.
      expect(await raw.llen(`rec:a:${id}`)).toBe(2);
      expect((await store.sessions()).map((s) => s.session)).toEqual(["s-rec"]);
      expect(await store.list({ session: "s-rec" })).toMatchObject([
        { id, calls: 3, reward: null },
      ]);
    } finally {
      await proxy.close();
      await store.close();
    }
  });

  it("takes feedback by id on another proxy and another connection: idempotent, 409 naming the field, 404", async () => {
    const a = await proxyOn("fb");
    const b = await proxyOn("fb");
    const other = await RedisTrajectoryStore.open({ connection: url(), prefix: "fb" });
    try {
      const id = await chat(a.proxy, "s-fb", ["hello"]);
      await a.proxy.recorder.getSession("s-fb")?.saved();
      const body = { trajectory_id: id, reward: 1, comment: "solved", idempotency_key: "k-1" };
      const first = await post(`${b.proxy.url}/v1/feedback`, body);
      expect(first.status).toBe(201);
      const stored = ((await first.json()) as { feedback: { feedback_id: string } }).feedback;
      const again = await post(`${b.proxy.url}/v1/feedback`, body);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ created: false, feedback: stored });
      const resent = await other.addFeedback(body);
      expect(resent).toEqual({ created: false, feedback: stored });
      const conflict = await post(`${a.proxy.url}/v1/feedback`, { ...body, reward: 0 });
      expect(conflict.status).toBe(409);
      expect(await conflict.json()).toMatchObject({
        error: { code: "idempotency_conflict", param: "reward" },
      });
      await expect(other.addFeedback({ ...body, comment: "other" })).rejects.toBeInstanceOf(
        FeedbackConflictError,
      );
      const unknown = await post(`${b.proxy.url}/v1/feedback`, {
        trajectory_id: "trj_nope",
        reward: 1,
      });
      expect(unknown.status).toBe(404);
      await expect(other.addFeedback({ trajectory_id: "trj_nope" })).rejects.toBeInstanceOf(
        FeedbackNotFoundError,
      );
      // A second feedback from the other connection: the latest reward wins.
      expect((await other.addFeedback({ trajectory_id: id, reward: 0.5 })).created).toBe(true);
      const read = await other.get(id);
      expect(read?.trajectory.reward).toBe(0.5);
      expect(read?.feedback.map((f) => f.n)).toEqual([1, 2]);
      expect(await other.list({ rewarded: true })).toMatchObject([
        { id, reward: 0.5, eligible: true, feedback: 2 },
      ]);
    } finally {
      await Promise.all([a.proxy.close(), b.proxy.close()]);
      await Promise.all([a.store.close(), b.store.close(), other.close()]);
    }
  });

  it("loses nothing when the proxy restarts on the same Redis, nor when Redis itself restarts", async () => {
    const first = await proxyOn("restart");
    const id = await chat(first.proxy, "s-restart", ["a", "b"]);
    await first.proxy.close();
    await first.store.close();
    await redis.kill();
    await redis.start();
    const second = await proxyOn("restart");
    try {
      const id2 = await chat(second.proxy, "s-restart", ["c"]);
      expect(id2).not.toBe(id);
      const res = await post(`${second.proxy.url}/v1/feedback`, { trajectory_id: id, reward: 1 });
      expect(res.status).toBe(201);
      const before = await second.store.get(id);
      expect(before).toMatchObject({ status: "finished", calls: 2, reward: 1, interrupted: false });
      expect(before?.trajectory.messages_and_choices).toHaveLength(4);
    } finally {
      await second.proxy.close();
      await second.store.close();
    }
  });
});

describe("RedisTrajectoryStore", () => {
  const trajectory = (n: number, pad = ""): TrajectoryWire => ({
    messages_and_choices: Array.from({ length: n }, (_, i) => ({
      role: "user" as const,
      content: `m${i}${pad}`,
    })) as TrajectoryWire["messages_and_choices"],
    tools: null,
    additional_histories: [],
    reward: 0,
    initial_policy_version: null,
    final_policy_version: null,
    metrics: {},
    metadata: {},
    logs: [],
  });

  it("drops the oldest unrewarded trajectories past maxBytes, counts them and says so", async () => {
    const { lines, logger } = quiet();
    const store = await RedisTrajectoryStore.open({
      connection: url(),
      prefix: "bounds",
      maxBytes: 20_000,
      logger,
    });
    try {
      const pad = "x".repeat(900);
      for (let i = 0; i < 6; i++) {
        await store.put({
          id: `t${i}`,
          session: null,
          status: "finished",
          trajectory: trajectory(2, pad),
          calls: 1,
        });
        if (i === 0 || i === 2) await store.addFeedback({ trajectory_id: `t${i}`, reward: 1 });
      }
      expect(lines).toEqual([]);
      for (let i = 6; i < 12; i++)
        await store.put({
          id: `t${i}`,
          session: null,
          status: "finished",
          trajectory: trajectory(2, pad),
          calls: 1,
        });
      const kept = new Set((await store.list()).map((s) => s.id));
      // The oldest unrewarded went first; the rewarded ones, older still, stayed.
      expect(kept.has("t0") && kept.has("t2")).toBe(true);
      expect(kept.has("t1")).toBe(false);
      const stats = await store.stats();
      expect(stats.dropped).toBeGreaterThan(0);
      expect(stats.dropped).toBe(12 - stats.trajectories);
      expect(stats.bytes).toBeLessThanOrEqual(20_000);
      expect(lines.join("\n")).toMatch(
        /dropped \d+ trajector(y|ies) \(\d+ unrewarded, then 0 of the oldest\) to keep within maxBytes \(20000 bytes\)/,
      );
      await expect(store.addFeedback({ trajectory_id: "t1", reward: 1 })).rejects.toBeInstanceOf(
        FeedbackNotFoundError,
      );
    } finally {
      await store.close();
    }
  });

  it("keeps a call cut by a stopped process as far as it got, once that process's lease is gone", async () => {
    const dying = new Redis(redis.connection);
    const crashed = await RedisTrajectoryStore.open({ connection: dying, prefix: "crash" });
    const live = await RedisTrajectoryStore.open({ connection: url(), prefix: "crash" });
    try {
      await crashed.put({
        id: "t-cut",
        session: "s-cut",
        status: "open",
        trajectory: trajectory(0),
        calls: 0,
      });
      const messages = [{ role: "user", content: "tell me" }];
      await crashed.beginCall("t-cut", 1, { model: "m", messages });
      await crashed.progressCall("t-cut", 1, { content: "half an ans" });
      await live.beginCall("t-live", 1, { model: "m", messages });
      // The process stops: no close, its lease runs out.
      dying.disconnect();
      const leases = await raw.keys("crash:owner:*");
      for (const k of leases) if (k !== `crash:owner:${await liveOwner(leases)}`) await raw.del(k);
      const { lines, logger } = quiet();
      const next = await RedisTrajectoryStore.open({ connection: url(), prefix: "crash", logger });
      try {
        const got = await next.get("t-cut");
        expect(got).toMatchObject({ interrupted: true, calls: 1, session: "s-cut" });
        expect(got?.trajectory.messages_and_choices).toEqual([
          { role: "user", content: "tell me" },
          { role: "assistant", content: "half an ans" },
        ]);
        expect(got?.trajectory.logs.at(-1)).toMatch(/call 1 was interrupted/);
        expect(lines.join("\n")).toMatch(/1 call was interrupted/);
        // The live store's call in flight is left alone.
        expect(await next.has("t-live")).toBe(false);
        expect(await raw.hget("crash:begun", "t-live")).toBe("1");
      } finally {
        await next.close();
      }
    } finally {
      await live.close();
    }

    async function liveOwner(keys: string[]): Promise<string> {
      const call = await raw.hget("crash:c:t-live", "owner");
      return (keys.find((k) => k.endsWith(call ?? "?")) ?? "").slice("crash:owner:".length);
    }
  });
});
