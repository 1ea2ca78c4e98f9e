import type { RedisOptions } from "ioredis";
import { z } from "zod";
import { InvalidArgumentError } from "../../util/argument-error.js";

/**
 * Where a cluster lives: the Redis connection and a name. Every process of one
 * training run (producer, workers, coordinator, progress readers) passes the
 * same options; two runs on one Redis differ by `name`.
 */
export interface ClusterOptions {
  /** ioredis options: `{ host, port, password, db, tls, ... }`. */
  connection: RedisOptions;
  /** The run's name: its queues are `<name>-rollouts` and `<name>-groups`. Default `"rollouts"`. */
  name?: string;
  /** BullMQ's key prefix. Default `"bull"`. */
  prefix?: string;
  /**
   * How long a process waits for Redis when it starts before it throws
   * {@link RedisUnavailableError}, in ms. Default 5000.
   */
  connectTimeoutMs?: number;
  /**
   * Events kept in each queue's events stream (BullMQ's
   * `streams.events.maxLen`, trimmed approximately). Default 2000: with
   * results of at most 16 KB (references, see `payloads`) the streams stay
   * under 32 MB each; BullMQ's own default is 10000.
   */
  eventsMaxLen?: number;
}

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** The names every component derives from {@link ClusterOptions}. */
export interface Cluster {
  connection: RedisOptions;
  prefix: string;
  name: string;
  rolloutQueue: string;
  groupQueue: string;
  connectTimeoutMs: number;
  eventsMaxLen: number;
  /** A key of this run's own state (collected groups, batches, the policy step). */
  key(part: string): string;
}

export function resolveCluster(options: ClusterOptions, who: string): Cluster {
  if (!options || typeof options !== "object" || !options.connection) {
    throw new InvalidArgumentError(
      who,
      "options.connection",
      "ioredis options such as { host, port }",
      options?.connection,
    );
  }
  const name = options.name ?? "rollouts";
  if (!NAME.test(name)) {
    throw new InvalidArgumentError(
      who,
      "options.name",
      "",
      name,
      'expected 1-100 letters, digits, "_", "." or "-"',
    );
  }
  const prefix = options.prefix ?? "bull";
  const eventsMaxLen = options.eventsMaxLen ?? 2000;
  if (!Number.isInteger(eventsMaxLen) || eventsMaxLen < 1) {
    throw new InvalidArgumentError(who, "options.eventsMaxLen", "a positive integer", eventsMaxLen);
  }
  return {
    connection: options.connection,
    prefix,
    name,
    rolloutQueue: `${name}-rollouts`,
    groupQueue: `${name}-groups`,
    connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    eventsMaxLen,
    key: (part) => `${prefix}:${name}:tr:${part}`,
  };
}

/** A group id: also the parent job's id, so it must be a valid BullMQ custom id. */
export const GroupIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,200}$/, 'letters, digits, "_", "." or "-" (1-200 of them)')
  .refine((id) => !/^\d+$/.test(id), "not only digits (BullMQ keeps those for its own ids)");

export const rolloutJobId = (groupId: string, index: number) => `${groupId}#${index}`;

/** Reads `<group>#<index>` back from a job id or a BullMQ job key (`bull:q:<id>`). */
export function parseRolloutJobId(keyOrId: string): { groupId: string; index: number } | undefined {
  const id = keyOrId.slice(keyOrId.lastIndexOf(":") + 1);
  const m = /^(.+)#(\d+)$/.exec(id);
  return m ? { groupId: m[1] as string, index: Number(m[2]) } : undefined;
}
