// How long the coordinator's keys live. A group that finished (trained,
// handed over, dropped, released, lost) is queued in `release` by the same
// script that marked it; the coordinator deletes its payloads, then times
// its mark to expire `retentionMs` later; the sweep deletes expired marks
// and finished batch records, and a key left holding only finished entries
// expires with the last of them. The run's live keys (counters, step, mode)
// live `retentionMs` past the last coordinator that refreshed them. What
// never expires: groups still waiting (collected, in a batch, uncertain,
// refused, failed), which are work, not history.
import type { Redis } from "ioredis";
import { errorMessage } from "../../util/index.js";
import { deletePayloads, parseRecord, recordKeys } from "./group-record.js";
import { LUA, runScript } from "./lua/index.js";
import type { Cluster } from "./options.js";
import type { PayloadStore } from "./payload-store.js";
import { policyKeys } from "./policy.js";
import type { DistributedLogger } from "./redis.js";
import { storeKeys } from "./store.js";

/** Default of `retentionMs`: a day, as the payloads' own TTL. */
export const DEFAULT_RETENTION_MS = 86_400_000;
/** Entries released or swept per script call: no one call blocks Redis long. */
const PER_CALL = 200;

export class Retention {
  readonly #client: Redis;
  readonly #cluster: Cluster;
  readonly #payloads: PayloadStore;
  readonly #ms: number;
  readonly #logger: DistributedLogger;
  #sweptAt = 0;

  constructor(
    client: Redis,
    cluster: Cluster,
    payloads: PayloadStore,
    retentionMs: number,
    logger: DistributedLogger,
  ) {
    this.#client = client;
    this.#cluster = cluster;
    this.#payloads = payloads;
    this.#ms = retentionMs;
    this.#logger = logger;
  }

  get ms(): number {
    return this.#ms;
  }

  /**
   * Deletes the payloads of finished groups, then times their marks. An
   * entry whose payloads could not be deleted stays queued and is tried
   * again next time (kept payloads have no expiry of their own).
   */
  async release(): Promise<number> {
    const k = storeKeys(this.#cluster);
    let done = 0;
    for (;;) {
      const entries = await this.#client.lrange(k.release, 0, PER_CALL - 1);
      if (entries.length === 0) return done;
      for (const entry of entries) {
        const cut = entry.indexOf("\n");
        const id = entry.slice(0, cut);
        const record = entry.slice(cut + 1);
        const keys = record === "" ? [] : recordKeys(parseRecord(record));
        const who = `TrainingCoordinator: group ${id}`;
        if (!(await deletePayloads(this.#payloads, keys, this.#logger, who))) return done;
        await runScript(
          this.#client,
          LUA.groupFinal,
          [k.release, k.expiringGroups],
          [entry, id, Date.now() + this.#ms],
        );
        done++;
      }
    }
  }

  /**
   * Deletes expired marks and batch records, and refreshes the live keys'
   * TTL; at most every `retentionMs / 10` (and every minute).
   */
  async sweep(): Promise<void> {
    const every = Math.min(60_000, Math.max(50, this.#ms / 10));
    if (Date.now() - this.#sweptAt < every) return;
    this.#sweptAt = Date.now();
    const k = storeKeys(this.#cluster);
    try {
      await runScript(
        this.#client,
        LUA.expireSweep,
        [
          k.groups,
          k.versions,
          k.stale,
          k.expiringGroups,
          k.batches,
          k.expiringBatches,
          k.batchCounter,
        ],
        [Date.now(), PER_CALL],
      );
      await this.#client
        .multi()
        .pexpire(k.stats, this.#ms)
        .pexpire(k.mode, this.#ms)
        .pexpire(policyKeys(this.#cluster).step, this.#ms)
        .exec();
    } catch (error) {
      this.#logger.warn(
        `TrainingCoordinator: could not expire old marks (${errorMessage(error)}); trying again.`,
      );
    }
  }

  /** Times the marks and batch records an older version left without an expiry. */
  async adopt(): Promise<void> {
    const k = storeKeys(this.#cluster);
    await runScript(
      this.#client,
      LUA.expireAdopt,
      [k.groups, k.expiringGroups, k.batches, k.expiringBatches, k.open],
      [Date.now() + this.#ms],
    );
  }
}
