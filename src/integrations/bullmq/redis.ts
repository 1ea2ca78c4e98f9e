import type { ConnectionOptions } from "bullmq";
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

function where(connection: RedisOptions): string {
  return `${connection.host ?? "127.0.0.1"}:${connection.port ?? 6379}`;
}

/**
 * Fails fast, with a sentence, when Redis is not there at start: BullMQ and
 * ioredis would otherwise retry forever without a word.
 */
export async function assertReachable(cluster: Cluster, who: string): Promise<void> {
  const probe = new Redis({
    ...cluster.connection,
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: cluster.connectTimeoutMs,
  });
  // The socket's error (ECONNREFUSED, ...) says more than connect()'s rejection.
  let cause: unknown;
  probe.on("error", (error) => {
    cause ??= error;
  });
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    cause ??= error;
    throw new RedisUnavailableError(
      `${who}: cannot reach Redis at ${where(cluster.connection)} (${errorMessage(cause)}); nothing was started. Start Redis (e.g. \`redis-server --appendonly yes\`) or fix options.connection.`,
      { cause },
    );
  } finally {
    probe.disconnect();
  }
}

/**
 * A client for this run's own keys. Commands wait through a lost connection
 * (ioredis reconnects) instead of failing, and each loss is logged once.
 */
export function openClient(cluster: Cluster, who: string, logger: DistributedLogger): Redis {
  const client = new Redis({ ...cluster.connection, maxRetriesPerRequest: null });
  let down = false;
  let lastError = "connection closed";
  client.on("error", (error) => {
    lastError = errorMessage(error);
  });
  // Only a connection ioredis will try again; not our own disconnect().
  client.on("reconnecting", () => {
    if (down) return;
    down = true;
    logger.warn(
      `${who}: lost Redis at ${where(cluster.connection)} (${lastError}); waiting for it to come back.`,
    );
  });
  client.on("ready", () => {
    if (!down) return;
    down = false;
    logger.info(`${who}: Redis at ${where(cluster.connection)} is back.`);
  });
  return client;
}

/** BullMQ's workers need commands that never give up (`maxRetriesPerRequest: null`). */
export function bullConnection(cluster: Cluster): ConnectionOptions {
  // BullMQ declares its own (looser) copy of ioredis's options type.
  return { ...cluster.connection, maxRetriesPerRequest: null } as ConnectionOptions;
}
