import type { ConnectionOptions, QueueOptions } from "bullmq";
import { Redis, type RedisOptions } from "ioredis";
import { errorMessage } from "../../util/index.js";
import { RedisUnavailableError } from "./errors.js";
import type { Cluster } from "./options.js";

/** Where log lines go; `console` by default. */
export interface DistributedLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * `host:port` for messages, never with credentials: a Redis URL passed as
 * `host` (`redis://:secret@h:6379`) is reduced to its host and port.
 */
export function where(connection: RedisOptions): string {
  const host = connection.host ?? "127.0.0.1";
  if (host.includes("://") || host.includes("@")) {
    try {
      const url = new URL(host.includes("://") ? host : `redis://${host}`);
      return `${url.hostname}:${url.port || connection.port || 6379}`;
    } catch {
      return `${host.slice(host.lastIndexOf("@") + 1)}:${connection.port ?? 6379}`;
    }
  }
  return `${host}:${connection.port ?? 6379}`;
}

/** An error's message with any `user:password@` of a URL in it removed. */
function clean(error: unknown): string {
  return errorMessage(error).replace(/\/\/[^/@\s]*@/g, "//");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One try: connect and PING within `ms`, or the reason it did not. */
async function probeOnce(cluster: Cluster, ms: number): Promise<unknown> {
  const probe = new Redis({
    ...cluster.connection,
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: Math.max(1, ms),
  });
  // The socket's error (ECONNREFUSED, ...) says more than connect()'s rejection.
  let cause: unknown;
  probe.on("error", (error) => {
    cause ??= error;
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${ms} ms (a Redis that accepts and never answers)`)),
      Math.max(1, ms),
    );
  });
  try {
    await Promise.race([
      (async () => {
        await probe.connect();
        await probe.ping();
      })(),
      deadline,
    ]);
    return undefined;
  } catch (error) {
    return cause ?? error;
  } finally {
    clearTimeout(timer);
    probe.disconnect();
  }
}

/**
 * Waits for Redis at start, trying again until `connectTimeoutMs` elapsed
 * (a Redis restarting, a worker started before it), then fails with a
 * sentence: BullMQ and ioredis would otherwise retry forever without a word.
 * A Redis that accepts connections and never answers (frozen, a wrong port)
 * fails the same way, after the same bounded wait.
 */
export async function assertReachable(cluster: Cluster, who: string): Promise<void> {
  const end = Date.now() + cluster.connectTimeoutMs;
  let cause: unknown;
  for (let attempt = 0; ; attempt++) {
    const left = end - Date.now();
    cause = await probeOnce(cluster, Math.max(50, left));
    if (cause === undefined) return;
    const pause = Math.min(500, 50 * 2 ** attempt);
    if (Date.now() + pause >= end) break;
    await sleep(pause);
  }
  throw unavailable(cluster, who, `${clean(cause)}`, "nothing was started", cause);
}

export function unavailable(
  cluster: Cluster,
  who: string,
  reason: string,
  consequence: string,
  cause?: unknown,
): RedisUnavailableError {
  return new RedisUnavailableError(
    `${who}: cannot reach Redis at ${where(cluster.connection)} (${reason}); ${consequence}. Start Redis (e.g. \`redis-server --appendonly yes\`) or fix options.connection.`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Resolves like `work`, or rejects with {@link RedisUnavailableError} when
 * Redis has not answered within `connectTimeoutMs` (it went away, or froze,
 * after the start check). `work` is not cancelled.
 */
export async function bounded<T>(
  cluster: Cluster,
  who: string,
  consequence: string,
  work: Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const ms = cluster.connectTimeoutMs;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(unavailable(cluster, who, `no answer within ${ms} ms`, consequence)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const CONNECTION_ERROR =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|Connection is closed|connect ETIMEDOUT|Stream isn't writeable/;

/** Whether a BullMQ or ioredis error is the connection's (an outage), not a command's. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    (typeof code === "string" && CONNECTION_ERROR.test(code)) ||
    CONNECTION_ERROR.test(errorMessage(error))
  );
}

/**
 * One line when Redis is lost and one when it is back, however many clients
 * and BullMQ queues of the process see the outage and however often they
 * retry.
 */
export class OutageLog {
  readonly #who: string;
  readonly #where: string;
  readonly #logger: DistributedLogger;
  #down = false;

  constructor(cluster: Cluster, who: string, logger: DistributedLogger) {
    this.#who = who;
    this.#where = where(cluster.connection);
    this.#logger = logger;
  }

  get down(): boolean {
    return this.#down;
  }

  lost(error: unknown): void {
    if (this.#down) return;
    this.#down = true;
    this.#logger.warn(
      `${this.#who}: lost Redis at ${this.#where} (${clean(error)}); waiting for it to come back.`,
    );
  }

  back(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#logger.info(`${this.#who}: Redis at ${this.#where} is back.`);
  }

  /** The `error` listener of a BullMQ queue or worker: an outage once, other errors each time. */
  listener(): (error: Error) => void {
    return (error) => {
      if (isConnectionError(error)) this.lost(error);
      else this.#logger.warn(`${this.#who}: ${clean(error)}`);
    };
  }
}

/**
 * A client for this run's own keys. Commands wait through a lost connection
 * (ioredis reconnects) instead of failing, and each loss is logged once (by
 * `outage`, shared with the process's BullMQ queues).
 */
export function openClient(cluster: Cluster, outage: OutageLog): Redis {
  const client = new Redis({ ...cluster.connection, maxRetriesPerRequest: null });
  let lastError: unknown = new Error("connection closed");
  client.on("error", (error) => {
    lastError = error;
  });
  // Only a connection ioredis will try again; not our own disconnect().
  client.on("reconnecting", () => outage.lost(lastError));
  client.on("ready", () => outage.back());
  return client;
}

/** BullMQ's workers need commands that never give up (`maxRetriesPerRequest: null`). */
export function bullConnection(cluster: Cluster): ConnectionOptions {
  // BullMQ declares its own (looser) copy of ioredis's options type.
  return { ...cluster.connection, maxRetriesPerRequest: null } as ConnectionOptions;
}

/**
 * A BullMQ Queue's options for this run. Every Queue writes its events cap
 * into the queue's meta hash when it opens (BullMQ's default is 10000), so
 * each one we open must carry ours.
 */
export function queueOptions(
  cluster: Cluster,
  connection: QueueOptions["connection"] = bullConnection(cluster),
): QueueOptions {
  return {
    connection,
    prefix: cluster.prefix,
    streams: { events: { maxLen: cluster.eventsMaxLen } },
  };
}

/**
 * Writes the events cap of both queues (a worker opens no Queue, and the
 * cap BullMQ's scripts trim to is read from the meta hash).
 */
export async function eventsMaxLen(client: Redis, cluster: Cluster): Promise<void> {
  const max = String(cluster.eventsMaxLen);
  await client
    .multi()
    .hset(`${cluster.prefix}:${cluster.rolloutQueue}:meta`, "opts.maxLenEvents", max)
    .hset(`${cluster.prefix}:${cluster.groupQueue}:meta`, "opts.maxLenEvents", max)
    .exec();
}

/** BullMQ's per-minute metrics: their `count` is the total of finished rollouts, removed or not. */
export const rolloutMetrics = { maxDataPoints: 60 };
