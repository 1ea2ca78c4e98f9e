import type { Redis } from "ioredis";
import { InvalidArgumentError } from "../../util/argument-error.js";

/**
 * Where a worker puts each finished trajectory's JSON, so that BullMQ's job
 * result (and its events stream) holds only a reference to it. Workers and
 * the collector (the coordinator's, or your own) must use the same store.
 * Keys are made of letters, digits and `_.#:-`; a value is written once and
 * read back whole.
 *
 * @example
 * // A store on S3-compatible storage (the AWS SDK is yours to install):
 * const s3: PayloadStore = {
 *   put: async (key, body) => void (await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body }))),
 *   get: async (key) => {
 *     try {
 *       const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
 *       return await out.Body?.transformToString();
 *     } catch (e) {
 *       if ((e as { name?: string }).name === "NoSuchKey") return undefined;
 *       throw e;
 *     }
 *   },
 *   delete: async (key) => void (await client.send(new DeleteObjectCommand({ Bucket, Key: key }))),
 * };
 */
export interface PayloadStore {
  /** Stores `body` under `key`; resolves once it is durable enough to be read by another process. */
  put(key: string, body: string): Promise<void>;
  /** The body stored under `key`, or `undefined` when there is none (never written, deleted, expired). */
  get(key: string): Promise<string | undefined>;
  /** Deletes `key`; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Optional: keeps `key` past the store's own expiry, because its group was
   * collected and waits for training (the coordinator deletes it once the
   * group is trained, handed over or dropped). Resolves false when the key is
   * gone. A store without it keeps such payloads only until its own expiry:
   * a group whose payload expired before training is counted in
   * `groups.failed` and logged, never trained in part.
   */
  keep?(key: string): Promise<boolean>;
}

/** Options of {@link RedisPayloadStore}. */
export interface RedisPayloadStoreOptions {
  /** Prepended to every key, e.g. `bull:rollouts:tr:payload:`. */
  prefix: string;
  /**
   * How long a payload lives, in ms, when nobody deletes it (its group was
   * never collected: a group abandoned, a worker's attempt that lost its
   * lock). Default 86400000 (one day).
   */
  ttlMs?: number;
  /** Bytes per list element: a body is written and read in these pieces. Default 262144. */
  chunkBytes?: number;
}

/**
 * A {@link PayloadStore} in Redis: each payload is a list of chunks with a
 * TTL, written in one transaction (so a reader never sees half of one) and
 * read back a few chunks at a time, so that no single command carries the
 * whole body and no Redis string grows to its size.
 *
 * @example
 * const payloads = new RedisPayloadStore(new Redis(6379), { prefix: "bull:rollouts:tr:payload:" });
 * await payloads.put("g1#0", JSON.stringify(trajectory));
 */
export class RedisPayloadStore implements PayloadStore {
  readonly #client: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #chunk: number;

  constructor(client: Redis, options: RedisPayloadStoreOptions) {
    this.#client = client;
    this.#prefix = options.prefix;
    this.#ttlMs = positive(options.ttlMs, 86_400_000, "options.ttlMs");
    this.#chunk = positive(options.chunkBytes, 262_144, "options.chunkBytes");
  }

  async put(key: string, body: string): Promise<void> {
    const k = this.#prefix + key;
    const bytes = Buffer.from(body, "utf8");
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += this.#chunk) {
      chunks.push(bytes.subarray(at, at + this.#chunk));
    }
    if (chunks.length === 0) chunks.push(Buffer.alloc(0));
    // Keys are new for each attempt: no DEL first. The transaction keeps a
    // list from ever existing without its TTL.
    const out = await this.#client
      .multi()
      .rpush(k, ...chunks)
      .pexpire(k, this.#ttlMs)
      .exec();
    const failed = out?.find(([error]) => error);
    if (!out || failed)
      throw failed?.[0] ?? new Error(`RedisPayloadStore: writing ${k} was aborted.`);
  }

  async get(key: string): Promise<string | undefined> {
    const k = this.#prefix + key;
    // The length and the first chunks in one round trip.
    const first = await this.#client.pipeline().llen(k).lrangeBuffer(k, 0, 7).exec();
    const [lengthError, length] = first?.[0] ?? [];
    const [rangeError, head] = first?.[1] ?? [];
    if (lengthError || rangeError) throw lengthError ?? rangeError;
    if (!length) return undefined;
    const parts = [...(head as Buffer[])];
    // A few chunks per read: one 40 MB reply would stall every other client.
    for (let at = 8; at < (length as number); at += 8) {
      parts.push(...(await this.#client.lrangeBuffer(k, at, at + 7)));
    }
    if (parts.length !== length) return undefined; // expired or deleted while being read
    return Buffer.concat(parts).toString("utf8");
  }

  async delete(key: string): Promise<void> {
    await this.#client.unlink(this.#prefix + key);
  }

  /** Drops the key's TTL (PERSIST): a collected group's payloads live until it is trained or dropped. */
  async keep(key: string): Promise<boolean> {
    const k = this.#prefix + key;
    const out = await this.#client.multi().persist(k).exists(k).exec();
    const failed = out?.find(([error]) => error);
    if (!out || failed)
      throw failed?.[0] ?? new Error(`RedisPayloadStore: keeping ${k} was aborted.`);
    return Number(out[1]?.[1]) === 1;
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1) {
    throw new InvalidArgumentError("RedisPayloadStore", name, "a positive integer", value);
  }
  return v;
}
