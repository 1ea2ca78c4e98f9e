// What the claim-check and groups-out tests share: a harness with a Redis
// client per test, a worker whose rollouts can carry a large blob, the
// producer, and a walk over every value Redis holds with its size.
import { Redis } from "ioredis";
import { type PayloadStore, RolloutProducer, RolloutWorker } from "trajectory-recorder/bullmq";
import { afterEach, beforeEach } from "vitest";
import { agent, type Harness, memoryLogger, startHarness } from "./harness.js";

export interface ClaimFixture {
  readonly h: Harness;
  readonly redis: Redis;
  /** Run (in reverse) after each test, before the harness closes. */
  readonly closers: (() => Promise<void>)[];
  /** A worker whose rollouts say the payload's target, then add a `blob` of that many characters. */
  startWorker(options?: {
    payloads?: PayloadStore;
    blob?: number;
    eventsMaxLen?: number;
  }): Promise<RolloutWorker<{ target: string }>>;
  /** Enqueues one group of `rollouts` per id, each with the payload `{ target: "red" }`. */
  enqueue(ids: string[], rollouts: number, eventsMaxLen?: number): Promise<void>;
  /** Every value under the keys matching `pattern` (hash fields, list, set and zset members, stream entries, strings), with its size. */
  values(pattern: string): Promise<{ key: string; field: string; bytes: number }[]>;
}

/** Registers the per-test harness and returns what the tests use from it. */
export function claimFixture(): ClaimFixture {
  let h: Harness | undefined;
  let redis: Redis | undefined;
  const closers: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    h = await startHarness();
    redis = new Redis(h.redis.connection);
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    redis?.disconnect();
    await h?.close();
  });
  const fixture: ClaimFixture = {
    get h() {
      return h as Harness;
    },
    get redis() {
      return redis as Redis;
    },
    closers,
    async startWorker(options = {}) {
      const { recorder, say } = agent(fixture.h.tap.url);
      const w = await RolloutWorker.start<{ target: string }>({
        connection: fixture.h.redis.connection,
        recorder,
        logger: memoryLogger(),
        concurrency: 4,
        lockDurationMs: 10_000,
        stalledIntervalMs: 5_000,
        payloads: options.payloads,
        eventsMaxLen: options.eventsMaxLen,
        rollout: async ({ payload, trajectory, index }) => {
          await say("emulator/toy-bigram", trajectory, payload.target, index);
          if (options.blob) trajectory.metadata.blob = "x".repeat(options.blob);
        },
      });
      closers.push(() => w.close());
      return w;
    },
    async enqueue(ids, rollouts, eventsMaxLen) {
      const producer = new RolloutProducer({
        connection: fixture.h.redis.connection,
        eventsMaxLen,
      });
      closers.push(() => producer.close());
      await producer.enqueue(ids.map((id) => ({ id, payload: { target: "red" }, rollouts })));
    },
    async values(pattern) {
      const r = fixture.redis;
      const out: { key: string; field: string; bytes: number }[] = [];
      const see = (key: string, field: string, v: string | Buffer) =>
        out.push({ key, field, bytes: v.length });
      for (const key of await r.keys(pattern)) {
        const type = await r.type(key);
        if (type === "string") see(key, "", (await r.getBuffer(key)) as Buffer);
        else if (type === "hash")
          for (const [f, v] of Object.entries(await r.hgetallBuffer(key))) see(key, f, v);
        else if (type === "list") for (const v of await r.lrangeBuffer(key, 0, -1)) see(key, "", v);
        else if (type === "set") for (const v of await r.smembersBuffer(key)) see(key, "", v);
        else if (type === "zset")
          for (const v of await r.zrange(key, "0", "-1")) see(key, "", String(v));
        else if (type === "stream")
          for (const [id, fields] of await r.xrange(key, "-", "+")) see(key, id, fields.join(""));
      }
      return out;
    },
  };
  return fixture;
}
