// The store of production trajectories in Redis: the same behaviour as the
// embedded TrajectoryStore (appends, begun calls, feedback, bounds), for
// proxies and workers that share one Redis. See docs/production.md.
import { randomBytes, randomUUID } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import {
  aggregateFeedback,
  applyAppend,
  type CallProgress,
  type CallRequest,
  checkWrite,
  FeedbackConflictError,
  type FeedbackInput,
  FeedbackNotFoundError,
  type FeedbackRecord,
  firstDifference,
  InvalidFeedbackError,
  type ListFilter,
  lengthsAfter,
  type ProductionStore,
  type PutRecord,
  parseFeedback,
  progressRecord,
  type StoreAppend,
  StoreClosedError,
  type StoredTrajectory,
  type StoreEntry,
  type StoreLogger,
  type StoreStats,
  type TrajectorySummary,
} from "../../store/index.js";
import { InvalidArgumentError, keepClassName } from "../../util/index.js";
import { LUA, runScript } from "./lua/index.js";
import { where } from "./redis.js";
import { enforceBounds } from "./trajectory-store-bounds.js";
import {
  DEFAULT_STORE_PREFIX,
  SUMMARY_FIELDS,
  summaryOf,
  type TrajectoryKeys,
  trajectoryKeys,
} from "./trajectory-store-keys.js";
import { recoverCalls } from "./trajectory-store-recover.js";

/** Options of {@link RedisTrajectoryStore.open}. */
export interface RedisTrajectoryStoreOptions {
  /**
   * The Redis to use: a URL (`redis://host:6379/0`), ioredis options, or a
   * connected ioredis client (not closed by `close()`). Default `redis://127.0.0.1:6379`.
   */
  connection?: string | RedisOptions | Redis;
  /** The prefix of every key. Default `"trajectory-recorder:store"`. */
  prefix?: string;
  /**
   * The most bytes of trajectory JSON and feedback kept; past it the oldest
   * unrewarded trajectories are dropped, then the oldest (logged, counted in
   * `stats().dropped`). Default 256 MiB (Redis holds it in memory).
   */
  maxBytes?: number;
  /** How long a trajectory is kept after its last write or feedback, in ms. Default 30 days. */
  maxAgeMs?: number;
  /** Receives a line for every drop and every recovery. Default: `console.warn`. */
  logger?: StoreLogger;
}

const MiB = 1024 ** 2;
const DAY = 86_400_000;
/** How long a store's lease lives without renewal: a stopped process's calls are recovered after it. */
const LEASE_MS = 30_000;

/**
 * The store of production trajectories in Redis, for the BullMQ mode and for
 * several proxies behind one load balancer: any process reads a trajectory
 * and adds its feedback, whichever process recorded it. Behaves as the
 * embedded `TrajectoryStore` (appends per call, a call cut by a stopped
 * process kept as far as it got, idempotent feedback with 409 on a conflict
 * and 404 for an unknown id, bounds by size and age that log and count what
 * they drop), with every method returning a promise.
 *
 * @example
 * import { RedisTrajectoryStore } from "trajectory-recorder/bullmq";
 * import { startRecordingProxy } from "trajectory-recorder/proxy";
 * const store = await RedisTrajectoryStore.open({ connection: "redis://127.0.0.1:6379/0" });
 * const proxy = await startRecordingProxy({ upstream, store });
 * await store.addFeedback({ trajectory_id: "trj_...", reward: 1, idempotency_key: "ticket-42" });
 */
export class RedisTrajectoryStore implements ProductionStore {
  /** The prefix of its keys. */
  readonly prefix: string;
  /** `host:port` of its Redis, for messages (never with credentials). */
  readonly where: string;
  readonly #redis: Redis;
  readonly #owned: boolean;
  /** A connection of its own for feedback's WATCH/MULTI, one transaction at a time. */
  readonly #tx: Redis;
  #txQueue: Promise<unknown> = Promise.resolve();
  readonly #keys: TrajectoryKeys;
  readonly #logger: StoreLogger;
  readonly #maxBytes: number;
  readonly #maxAgeMs: number;
  readonly #owner = randomUUID();
  readonly #lease: NodeJS.Timeout;
  /** Main-history lengths of the trajectories this process writes: a begun call leaves those messages out. */
  readonly #mains = new Map<string, number>();
  #enforcing: Promise<void> | undefined;
  #closed = false;

  private constructor(redis: Redis, owned: boolean, options: RedisTrajectoryStoreOptions) {
    this.#redis = redis;
    this.#owned = owned;
    this.#tx = redis.duplicate();
    this.prefix = options.prefix ?? DEFAULT_STORE_PREFIX;
    this.where = where(redis.options);
    this.#keys = trajectoryKeys(this.prefix);
    this.#logger = options.logger ?? { warn: (m: string) => console.warn(m) };
    this.#maxBytes = options.maxBytes ?? 256 * MiB;
    this.#maxAgeMs = options.maxAgeMs ?? 30 * DAY;
    this.#lease = setInterval(() => {
      this.#renew().catch(() => {});
    }, LEASE_MS / 3);
    this.#lease.unref();
  }

  /**
   * Connects, takes a lease (so other processes leave its calls in flight
   * alone), keeps every call a stopped process left begun as far as it got,
   * and applies the bounds.
   *
   * @example
   * const store = await RedisTrajectoryStore.open({ connection: process.env.REDIS_URL, prefix: "shop" });
   */
  static async open(options: RedisTrajectoryStoreOptions = {}): Promise<RedisTrajectoryStore> {
    const call = "RedisTrajectoryStore.open";
    for (const name of ["maxBytes", "maxAgeMs"] as const) {
      const v = options[name];
      if (v !== undefined && !(typeof v === "number" && v > 0))
        throw new InvalidArgumentError(call, `options.${name}`, "a positive number", v);
    }
    if (options.prefix !== undefined && (typeof options.prefix !== "string" || !options.prefix))
      throw new InvalidArgumentError(call, "options.prefix", "a non-empty string", options.prefix);
    const given = options.connection;
    const owned = !(given instanceof Redis);
    const redis =
      given instanceof Redis
        ? given
        : typeof given === "string"
          ? new Redis(given, { maxRetriesPerRequest: 3 })
          : new Redis({ maxRetriesPerRequest: 3, ...given });
    const store = new RedisTrajectoryStore(redis, owned, options);
    try {
      await store.#renew();
      await recoverCalls(store.#recovery());
      await store.#afterWrite(undefined);
      return store;
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  #renew(): Promise<unknown> {
    return this.#redis.set(this.#keys.owner(this.#owner), "1", "PX", LEASE_MS);
  }

  #recovery() {
    return {
      redis: this.#redis,
      keys: this.#keys,
      logger: this.#logger,
      where: this.#where(),
      put: (record: PutRecord) => this.#put(record, true),
      state: (id: string) => this.#state(id),
    };
  }

  #where(): string {
    return `redis ${this.where}, prefix ${this.prefix}`;
  }

  #check(method: string): void {
    if (this.#closed) throw new StoreClosedError(method, this.#where());
  }

  #scriptKeys(id: string): string[] {
    const k = this.#keys;
    return [k.trajectory(id), k.appends(id), k.order, k.meta, k.begun, k.call(id)];
  }

  /**
   * Records a trajectory's full current state (its appends are folded into it).
   *
   * @example
   * await store.put({ id, session: "s1", status: "open", trajectory, calls: 1 });
   */
  async put(entry: StoreEntry): Promise<void> {
    this.#check("put");
    checkWrite("RedisTrajectoryStore.put", entry);
    if (typeof entry.trajectory !== "object" || entry.trajectory === null)
      throw new InvalidArgumentError(
        "RedisTrajectoryStore.put",
        "entry.trajectory",
        "a trajectory's JSON",
        entry.trajectory,
      );
    // Serialized now: the caller's trajectory may grow before Redis answers.
    const json = JSON.stringify(entry.trajectory);
    const t = JSON.parse(json) as PutRecord["trajectory"];
    const now = Date.now();
    await this.#put(
      {
        k: "put",
        id: entry.id,
        session: entry.session ?? null,
        status: entry.status,
        calls: entry.calls,
        model: entry.model ?? null,
        ...(entry.metadata ? { metadata: entry.metadata } : {}),
        created_at: now,
        updated_at: now,
        trajectory: t,
      },
      false,
      json,
    );
    await this.#afterWrite(entry.id);
  }

  async #put(record: PutRecord, interrupted: boolean, json?: string): Promise<void> {
    const t = record.trajectory;
    const lengths = {
      main: t.messages_and_choices?.length ?? 0,
      histories: (t.additional_histories ?? []).map((h) => h.messages_and_choices?.length ?? 0),
    };
    if (record.status === "open") this.#mains.set(record.id, lengths.main);
    else this.#mains.delete(record.id);
    await runScript(this.#redis, LUA.storePut, this.#scriptKeys(record.id), [
      record.id,
      record.session ?? "",
      record.status,
      record.calls,
      record.model ?? "",
      record.metadata ? JSON.stringify(record.metadata) : "",
      record.updated_at,
      json ?? JSON.stringify(t),
      lengths.main,
      JSON.stringify(lengths),
      interrupted ? 1 : 0,
      record.created_at,
    ]);
  }

  /**
   * Records what an open trajectory gained since its latest write (see
   * `StoreAppend`); resolves to false, writing nothing, when the stored state
   * is not the one it continues (then `put` the full state).
   *
   * @example
   * if (!(await store.append(delta))) await store.put(full);
   */
  async append(entry: StoreAppend): Promise<boolean> {
    this.#check("append");
    const call = "RedisTrajectoryStore.append";
    checkWrite(call, entry);
    if (entry.status !== "open")
      throw new InvalidArgumentError(call, "entry.status", '"open"', entry.status);
    const from = entry.from;
    if (!Number.isInteger(from?.main) || !Array.isArray(from.histories))
      throw new InvalidArgumentError(call, "entry.from", "{ main, histories } lengths", from);
    if (!Array.isArray(entry.main) || !Array.isArray(entry.histories))
      throw new InvalidArgumentError(call, "entry.main", "arrays of items", entry.main);
    const record = {
      k: "append" as const,
      id: entry.id,
      session: entry.session ?? null,
      status: "open" as const,
      calls: entry.calls,
      model: entry.model ?? null,
      ...(entry.metadata ? { metadata: entry.metadata } : {}),
      updated_at: Date.now(),
      from: { main: from.main, histories: [...from.histories] },
      main: entry.main,
      histories: entry.histories,
      fields: entry.fields,
    };
    const after = lengthsAfter(record.from, record);
    const result = await runScript(this.#redis, LUA.storeAppend, this.#scriptKeys(entry.id), [
      entry.id,
      record.session ?? "",
      entry.calls,
      record.model ?? "",
      entry.metadata ? JSON.stringify(entry.metadata) : "",
      record.updated_at,
      JSON.stringify(record.from),
      JSON.stringify(after),
      after.main,
      JSON.stringify(record),
    ]);
    if (Number(result) < 0) return false;
    this.#mains.set(entry.id, after.main);
    await this.#afterWrite(entry.id);
    return true;
  }

  /**
   * Records that call `call` of trajectory `id` began, with its request: if
   * this process stops before a write covers it, the next store opened on
   * this Redis keeps the call as far as it got.
   *
   * @example
   * await store.beginCall(id, 3, { model, messages, tools });
   */
  async beginCall(
    id: string,
    call: number,
    request: CallRequest,
    options?: { session?: string | null },
  ): Promise<void> {
    this.#check("beginCall");
    const name = "RedisTrajectoryStore.beginCall";
    if (typeof id !== "string" || id === "" || id.length > 200)
      throw new InvalidArgumentError(name, "id", "a string of 1 to 200 characters", id);
    if (!Number.isInteger(call) || call < 1)
      throw new InvalidArgumentError(name, "call", "an integer of 1 or more", call);
    if (!Array.isArray(request?.messages))
      throw new InvalidArgumentError(name, "request.messages", "an array", request?.messages);
    const skipped = Math.min(this.#mains.get(id) ?? 0, request.messages.length);
    const record = {
      k: "call",
      id,
      call,
      session: options?.session ?? null,
      at: Date.now(),
      skipped,
      request: {
        model: request.model,
        messages: request.messages.slice(skipped),
        tools: request.tools ?? null,
      },
    };
    await this.#redis
      .multi()
      .del(this.#keys.call(id))
      .hset(this.#keys.call(id), {
        call,
        owner: this.#owner,
        record: JSON.stringify(record),
      })
      .hset(this.#keys.begun, id, call)
      .exec();
  }

  /**
   * Records how far call `call`'s answer has arrived (the whole answer so far).
   *
   * @example
   * await store.progressCall(id, 3, { content: textSoFar });
   */
  async progressCall(id: string, call: number, partial: CallProgress): Promise<void> {
    this.#check("progressCall");
    const record = progressRecord("RedisTrajectoryStore.progressCall", id, call, partial);
    await runScript(
      this.#redis,
      LUA.storeProgress,
      [this.#keys.call(id)],
      [call, JSON.stringify(record)],
    );
  }

  /**
   * Adds feedback to a stored trajectory, atomically (a Redis transaction,
   * retried when another process wrote the trajectory meanwhile). Rules as
   * `TrajectoryStore.addFeedback`: a resend with the same `idempotency_key`
   * and content resolves to the first with `created: false`; other content
   * rejects with `FeedbackConflictError` (409, naming the field); an unknown
   * or dropped id with `FeedbackNotFoundError` (404).
   *
   * @example
   * const { created } = await store.addFeedback({ trajectory_id: id, reward: 1, idempotency_key: "k1" });
   */
  addFeedback(input: FeedbackInput): Promise<{ feedback: FeedbackRecord; created: boolean }> {
    this.#check("addFeedback");
    const body = parseFeedback(input);
    // One transaction at a time on the connection: WATCH is the connection's.
    const run = this.#txQueue.then(() => this.#feedback(body));
    this.#txQueue = run.catch(() => {});
    return run.then(async (result) => {
      if (result.created) await this.#afterWrite(body.trajectory_id);
      return result;
    });
  }

  async #feedback(body: FeedbackInput): Promise<{ feedback: FeedbackRecord; created: boolean }> {
    const k = this.#keys;
    const id = body.trajectory_id;
    const key = body.idempotency_key;
    for (let attempt = 0; attempt < 50; attempt++) {
      await this.#tx.watch(k.idempotency, k.trajectory(id), k.feedback(id));
      try {
        if (key !== undefined) {
          const stored = await this.#storedFeedback(key);
          if (stored) {
            await this.#tx.unwatch();
            const field = firstDifference(stored, body);
            if (field) throw new FeedbackConflictError(key, field);
            return { feedback: stored, created: false };
          }
        }
        const [calls, updated, bytes] = await this.#tx.hmget(
          k.trajectory(id),
          "calls",
          "updated",
          "status",
        );
        if (bytes === null) throw new FeedbackNotFoundError(id);
        const held = Number(calls);
        const beyond = (body.turns ?? []).findIndex((t) => t.call > held);
        if (beyond !== -1)
          throw new InvalidFeedbackError([
            `turns[${beyond}].call: the trajectory has ${held} call${held === 1 ? "" : "s"}, not ${body.turns?.[beyond]?.call}`,
          ]);
        const prior = (await this.#tx.lrange(k.feedback(id), 0, -1)).map(
          (raw) => JSON.parse(raw) as FeedbackRecord,
        );
        const now = Date.now();
        const feedback: FeedbackRecord = {
          ...body,
          feedback_id: `fb_${randomUUID()}`,
          n: prior.length + 1,
          created_at: new Date(now).toISOString(),
        };
        const json = JSON.stringify(feedback);
        const size = Buffer.byteLength(json);
        const outcome = aggregateFeedback([...prior, feedback]);
        const at = Math.max(Number(updated ?? 0), now);
        const tx = this.#tx
          .multi()
          .rpush(k.feedback(id), json)
          .hset(k.trajectory(id), {
            reward: outcome.reward === null ? "" : String(outcome.reward),
            eligible: outcome.eligible === null ? "" : outcome.eligible ? "1" : "0",
            nfb: feedback.n,
            updated: at,
          })
          .hincrby(k.trajectory(id), "bytes", size)
          .hincrby(k.meta, "bytes", size)
          .zadd(k.order, at, id);
        if (key !== undefined) tx.hset(k.idempotency, key, JSON.stringify({ id, n: feedback.n }));
        if (await tx.exec()) return { feedback, created: true };
      } catch (error) {
        await this.#tx.unwatch();
        throw error;
      }
    }
    throw new Error(
      `RedisTrajectoryStore.addFeedback: trajectory ${id} kept changing under 50 attempts; try again.`,
    );
  }

  /** The feedback stored under an idempotency key, when its trajectory is still kept. */
  async #storedFeedback(key: string): Promise<FeedbackRecord | undefined> {
    const ref = await this.#tx.hget(this.#keys.idempotency, key);
    if (!ref) return undefined;
    const { id, n } = JSON.parse(ref) as { id: string; n: number };
    const raw = await this.#tx.lindex(this.#keys.feedback(id), n - 1);
    return raw ? (JSON.parse(raw) as FeedbackRecord) : undefined;
  }

  /** The trajectory's state with its appends applied, as a put would write it. */
  async #state(
    id: string,
  ): Promise<{ record: PutRecord; hash: Record<string, string> } | undefined> {
    const replies = await this.#redis
      .multi()
      .hgetall(this.#keys.trajectory(id))
      .lrange(this.#keys.appends(id), 0, -1)
      .exec();
    const hash = (replies?.[0]?.[1] ?? {}) as Record<string, string>;
    const appends = (replies?.[1]?.[1] ?? []) as string[];
    if (hash.state === undefined) return undefined;
    let record: PutRecord = {
      k: "put",
      id,
      session: hash.session || null,
      status: hash.status === "finished" ? "finished" : "open",
      calls: Number(hash.calls),
      model: hash.model || null,
      ...(hash.metadata ? { metadata: JSON.parse(hash.metadata) } : {}),
      created_at: Number(hash.created),
      updated_at: Number(hash.updated),
      trajectory: JSON.parse(hash.state),
    };
    for (const raw of appends) record = applyAppend(record, JSON.parse(raw));
    return { record, hash };
  }

  /**
   * The trajectory stored under `id` with its feedback applied, or undefined.
   *
   * @example
   * const stored = await store.get(id);
   */
  async get(id: string): Promise<StoredTrajectory | undefined> {
    this.#check("get");
    const [state, raw] = await Promise.all([
      this.#state(id),
      this.#redis.lrange(this.#keys.feedback(id), 0, -1),
    ]);
    if (!state) return undefined;
    const { record, hash } = state;
    const feedback = raw.map((r) => JSON.parse(r) as FeedbackRecord);
    const outcome = aggregateFeedback(feedback);
    const summary = summaryOf(
      id,
      SUMMARY_FIELDS.map((f) => hash[f] ?? null),
    ) as TrajectorySummary;
    const { feedback: _n, bytes: _b, ...rest } = summary;
    return {
      ...rest,
      trajectory: {
        ...record.trajectory,
        reward: outcome.reward ?? record.trajectory.reward,
        metrics: { ...record.trajectory.metrics, ...outcome.metrics },
      },
      feedback,
      metadata: record.metadata ?? null,
    };
  }

  /** Whether a trajectory is stored under `id`. */
  async has(id: string): Promise<boolean> {
    this.#check("has");
    return (await this.#redis.exists(this.#keys.trajectory(id))) === 1;
  }

  /**
   * Summaries of the stored trajectories that match `filter`, the most recently written first.
   *
   * @example
   * await store.list({ rewarded: false, limit: 20 });
   */
  async list(filter: ListFilter = {}): Promise<TrajectorySummary[]> {
    this.#check("list");
    const when = (t: Date | number) => (typeof t === "number" ? t : t.getTime());
    const max = filter.until === undefined ? "+inf" : `(${when(filter.until)}`;
    const min = filter.since === undefined ? "-inf" : String(when(filter.since));
    const limit = filter.limit ?? Infinity;
    const out: TrajectorySummary[] = [];
    for (let offset = 0; out.length < limit; offset += 200) {
      const ids = await this.#redis.zrevrangebyscore(
        this.#keys.order,
        max,
        min,
        "LIMIT",
        offset,
        200,
      );
      for (const s of await this.#summaries(ids)) {
        if (out.length >= limit) break;
        if (filter.session !== undefined && s.session !== filter.session) continue;
        if (filter.eligible !== undefined && (s.eligible === true) !== filter.eligible) continue;
        if (filter.rewarded !== undefined && (s.reward !== null) !== filter.rewarded) continue;
        out.push(s);
      }
      if (ids.length < 200) break;
    }
    return out;
  }

  /** @internal The summaries of `ids` still stored, in their order. */
  async #summaries(ids: string[]): Promise<TrajectorySummary[]> {
    if (ids.length === 0) return [];
    const pipe = this.#redis.pipeline();
    for (const id of ids) pipe.hmget(this.#keys.trajectory(id), ...SUMMARY_FIELDS);
    const replies = (await pipe.exec()) ?? [];
    return ids.flatMap((id, i) => {
      const s = summaryOf(id, (replies[i]?.[1] ?? []) as (string | null)[]);
      return s ? [s] : [];
    });
  }

  /**
   * The sessions of the stored trajectories, the most recently written first,
   * each with its trajectories' ids (newest first).
   *
   * @example
   * for (const s of await store.sessions()) console.log(s.session, s.trajectories.length);
   */
  async sessions(): Promise<{ session: string; trajectories: string[]; updated_at: string }[]> {
    this.#check("sessions");
    const out = new Map<string, { session: string; trajectories: string[]; updated_at: string }>();
    for (const s of await this.list()) {
      if (s.session === null) continue;
      const known = out.get(s.session);
      if (known) known.trajectories.push(s.id);
      else
        out.set(s.session, { session: s.session, trajectories: [s.id], updated_at: s.updated_at });
    }
    return [...out.values()];
  }

  /** How many trajectories and bytes it holds (`segments` is 0: Redis has none) and how many its bounds dropped. */
  async stats(): Promise<StoreStats> {
    const [count, meta] = await Promise.all([
      this.#redis.zcard(this.#keys.order),
      this.#redis.hmget(this.#keys.meta, "bytes", "dropped"),
    ]);
    return {
      trajectories: count,
      bytes: Number(meta[0] ?? 0),
      segments: 0,
      dropped: Number(meta[1] ?? 0),
    };
  }

  /**
   * The secret signed feedback URLs are made with: one per prefix, made by
   * the first proxy that needs it, so every proxy on this Redis verifies the others' URLs.
   */
  async feedbackSecret(): Promise<string> {
    this.#check("feedbackSecret");
    await this.#redis.hsetnx(this.#keys.meta, "secret", randomBytes(32).toString("base64url"));
    return (await this.#redis.hget(this.#keys.meta, "secret")) as string;
  }

  /** Applies the bounds after a write (one pass at a time per store). */
  async #afterWrite(keep: string | undefined): Promise<void> {
    if (this.#enforcing) return;
    this.#enforcing = enforceBounds({
      redis: this.#redis,
      keys: this.#keys,
      maxBytes: this.#maxBytes,
      maxAgeMs: this.#maxAgeMs,
      keep,
      logger: this.#logger,
      where: this.#where(),
      drop: (id) =>
        runScript(
          this.#redis,
          LUA.storeDrop,
          [
            this.#keys.trajectory(id),
            this.#keys.appends(id),
            this.#keys.feedback(id),
            this.#keys.call(id),
            this.#keys.order,
            this.#keys.meta,
            this.#keys.idempotency,
            this.#keys.begun,
          ],
          [id],
        ).then((n) => {
          if (Number(n) === 1) this.#mains.delete(id);
          return Number(n) === 1;
        }),
    }).finally(() => {
      this.#enforcing = undefined;
    });
    await this.#enforcing;
  }

  /** Gives up its lease and closes its connections (a client it was given stays open). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#lease);
    await this.#txQueue;
    await this.#redis.del(this.#keys.owner(this.#owner)).catch(() => {});
    this.#tx.disconnect();
    if (this.#owned) await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(RedisTrajectoryStore, "RedisTrajectoryStore");
