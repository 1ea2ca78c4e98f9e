import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { InvalidArgumentError } from "../../util/argument-error.js";
import type { PayloadStore } from "./payload-store.js";

/** Options of {@link DirectoryPayloadStore}. */
export interface DirectoryPayloadStoreOptions {
  /** A directory every worker and the collector see (NFS, a shared volume); created when missing. */
  dir: string;
  /**
   * Payloads older than this, in ms, are deleted by the next sweep (one
   * per `put` at most every minute): what no collector deleted, because its
   * group was abandoned or an attempt lost its lock. Default 86400000 (a day).
   */
  ttlMs?: number;
}

const SWEEP_EVERY_MS = 60_000;
/** Payloads of collected groups: never swept, deleted by the coordinator. */
const KEPT = "kept";

/**
 * A {@link PayloadStore} in a directory on shared disk: one file per payload,
 * written to a temporary name and renamed, so a reader sees all of it or
 * nothing.
 *
 * @example
 * const payloads = new DirectoryPayloadStore({ dir: "/mnt/shared/payloads" });
 * await RolloutWorker.start({ connection, recorder, rollout, payloads });
 * await TrainingCoordinator.start({ connection, model, trainEvery: { groups: 8 }, payloads });
 */
export class DirectoryPayloadStore implements PayloadStore {
  readonly #dir: string;
  readonly #ttlMs: number;
  #made = false;
  #sweptAt = 0;

  constructor(options: DirectoryPayloadStoreOptions) {
    if (!options || typeof options.dir !== "string" || options.dir === "") {
      throw new InvalidArgumentError(
        "DirectoryPayloadStore",
        "options.dir",
        "a directory path",
        options?.dir,
      );
    }
    const ttl = options.ttlMs ?? 86_400_000;
    if (!(ttl > 0)) {
      throw new InvalidArgumentError(
        "DirectoryPayloadStore",
        "options.ttlMs",
        "a positive number",
        ttl,
      );
    }
    this.#dir = options.dir;
    this.#ttlMs = ttl;
  }

  async put(key: string, body: string): Promise<void> {
    if (!this.#made) {
      await mkdir(this.#dir, { recursive: true });
      this.#made = true;
    }
    const file = this.#file(key);
    const tmp = `${file}.${randomUUID()}.tmp`;
    await writeFile(tmp, body, { flush: true });
    await rename(tmp, file);
    if (Date.now() - this.#sweptAt > SWEEP_EVERY_MS) {
      this.#sweptAt = Date.now();
      void this.sweep().catch(() => {});
    }
  }

  async get(key: string): Promise<string | undefined> {
    for (const file of [this.#file(key), this.#kept(key)]) {
      try {
        return await readFile(file, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    return undefined;
  }

  async delete(key: string): Promise<void> {
    for (const file of [this.#file(key), this.#kept(key)]) {
      await unlink(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    }
  }

  /**
   * Moves the payload into `kept/`, which the sweep does not enter: its
   * group was collected and waits for training; the coordinator deletes it.
   */
  async keep(key: string): Promise<boolean> {
    await mkdir(path.join(this.#dir, KEPT), { recursive: true });
    try {
      await rename(this.#file(key), this.#kept(key));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // Kept already (a collector run again), or gone.
      return (await stat(this.#kept(key)).catch(() => undefined)) !== undefined;
    }
  }

  /** Deletes payloads (and temporary files) older than `ttlMs`; returns how many. */
  async sweep(): Promise<number> {
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    const before = Date.now() - this.#ttlMs;
    let deleted = 0;
    for (const name of names) {
      const file = path.join(this.#dir, name);
      const info = await stat(file).catch(() => undefined);
      if (info?.isFile() && info.mtimeMs < before) {
        await unlink(file).catch(() => {});
        deleted++;
      }
    }
    return deleted;
  }

  #file(key: string): string {
    // One flat directory: `/` and `..` in a key cannot leave it.
    return path.join(this.#dir, encodeURIComponent(key).replace(/\./g, "%2E"));
  }

  #kept(key: string): string {
    return path.join(this.#dir, KEPT, path.basename(this.#file(key)));
  }
}
