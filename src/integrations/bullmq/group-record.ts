// A collected group as `…:tr:groups` holds it: a small record of where its
// trajectories are in the payload store (the rollouts' own payloads, or the
// scored copies `afterEach` made), never the trajectories themselves, so
// Redis holds a few hundred bytes per waiting group whatever its size. The
// coordinator reads the trajectories back one at a time just before
// training or handing the group over. Entries of the old shape (the group's
// whole JSON) are still read, so a running deployment upgrades.
import { randomUUID } from "node:crypto";
import { errorMessage } from "../../util/index.js";
import type { PayloadStore } from "./payload-store.js";
import type { DistributedLogger } from "./redis.js";

/** The rest of a group's JSON: everything but its trajectories. */
export type GroupRest = Record<string, unknown>;

export interface GroupRecord {
  /** The format's version; the first key, so that Lua can tell a record by its first bytes. */
  ref: 1;
  /** The payload keys of its trajectories, in order. */
  t: string[];
  /** Its exceptions, metadata, metrics and logs, when small. */
  rest?: GroupRest;
  /** Or the payload key they were written to, when large. */
  restKey?: string;
  /** The trajectories' total size in bytes (for logs and the docs' sums). */
  bytes: number;
}

/** Records start so; a mark (`trained:3`, `handed`) never does, old-shape JSON neither. */
const RECORD_HEAD = '{"ref":';
/** Past this, a group's other fields go to the payload store too. */
const INLINE_REST_BYTES = 8192;

export const isRecord = (value: string): boolean => value.startsWith(RECORD_HEAD);

export function parseRecord(value: string): GroupRecord {
  return JSON.parse(value) as GroupRecord;
}

/** Every payload key the record holds. */
export function recordKeys(record: GroupRecord): string[] {
  return record.restKey === undefined ? [...record.t] : [...record.t, record.restKey];
}

/** The record's JSON, writing `rest` to the store when it is large. */
export async function writeRecord(
  store: PayloadStore,
  groupId: string,
  t: string[],
  bytes: number,
  rest: GroupRest,
): Promise<{ json: string; written: string[] }> {
  const restJson = JSON.stringify(rest);
  if (restJson.length <= INLINE_REST_BYTES) {
    return { json: JSON.stringify({ ref: 1, t, rest, bytes } satisfies GroupRecord), written: [] };
  }
  const restKey = `${groupId}.rest.${randomUUID().slice(0, 13)}`;
  await store.put(restKey, restJson);
  return {
    json: JSON.stringify({ ref: 1, t, restKey, bytes } satisfies GroupRecord),
    written: [restKey],
  };
}

/**
 * Keeps each key past the store's expiry (`keep`); returns the keys that
 * are gone. A store without `keep` is read instead, to know.
 */
export async function keepPayloads(store: PayloadStore, keys: string[]): Promise<Set<string>> {
  const found = await Promise.all(
    keys.map((key) =>
      store.keep ? store.keep(key) : store.get(key).then((body) => body !== undefined),
    ),
  );
  return new Set(keys.filter((_, i) => !found[i]));
}

/** Deletes payloads; what fails is logged (a kept payload has no expiry left) and returned. */
export async function deletePayloads(
  store: PayloadStore,
  keys: string[],
  logger: DistributedLogger,
  who: string,
): Promise<boolean> {
  const out = await Promise.allSettled(keys.map((key) => store.delete(key)));
  const failed = out.filter((r) => r.status === "rejected");
  if (failed.length > 0) {
    logger.warn(
      `${who}: ${failed.length} of ${keys.length} payloads could not be deleted (${errorMessage(failed[0]?.reason)}).`,
    );
  }
  return failed.length === 0;
}

/** The group's wire JSON as an object, or the payload keys that are gone. */
export type ReadGroup =
  | { group: Record<string, unknown>; missing?: undefined }
  | { group?: undefined; missing: string[] };

/**
 * Reads a stored group: old-shape JSON as it is; a record's trajectories one
 * payload at a time (each its own string, parsed on its own: no string of
 * the whole group's size is ever made).
 */
export async function readGroup(store: PayloadStore, value: string): Promise<ReadGroup> {
  if (!isRecord(value)) return { group: JSON.parse(value) as Record<string, unknown> };
  const record = parseRecord(value);
  const missing: string[] = [];
  const trajectories: unknown[] = [];
  for (const key of record.t) {
    const body = await store.get(key);
    if (body === undefined) missing.push(key);
    else if (missing.length === 0) trajectories.push(JSON.parse(body));
  }
  let rest = record.rest;
  if (record.restKey !== undefined) {
    const body = await store.get(record.restKey);
    if (body === undefined) missing.push(record.restKey);
    else rest = JSON.parse(body) as GroupRest;
  }
  if (missing.length > 0) return { missing };
  return { group: { trajectories, ...rest } };
}
