// The coordinator lock: one coordinator trains (or hands off) at a time. A
// key in Redis holding the owner's token, with a time to live the owner keeps
// renewing; one that died is replaced once the key expires.
import type { Redis } from "ioredis";
import { abortableSleep } from "../../client/index.js";
import { LUA, runScript } from "./lua/index.js";
import type { DistributedLogger } from "./redis.js";

export class CoordinatorLock {
  readonly #client: Redis;
  readonly #key: string;
  readonly #token: string;
  readonly #ttl: number;
  readonly #logger: DistributedLogger;
  #renew: NodeJS.Timeout | undefined;

  constructor(client: Redis, key: string, token: string, ttlMs: number, logger: DistributedLogger) {
    this.#client = client;
    this.#key = key;
    this.#token = token;
    this.#ttl = ttlMs;
    this.#logger = logger;
  }

  /** Waits until this process holds the lock, then keeps renewing it; `onLost` when it is lost. */
  async acquire(signal: AbortSignal, onLost: () => void): Promise<void> {
    let told = false;
    while (!(await this.#client.set(this.#key, this.#token, "PX", this.#ttl, "NX"))) {
      if (!told) {
        told = true;
        this.#logger.info(
          `TrainingCoordinator: another coordinator (${await this.#client.get(this.#key)}) holds the lock; waiting for it.`,
        );
      }
      await abortableSleep(Math.max(100, this.#ttl / 4), signal);
    }
    this.#renew = setInterval(
      () => {
        runScript(this.#client, LUA.lockRenew, [this.#key], [this.#token, this.#ttl])
          .then((held) => {
            if (Number(held) === 1) return;
            this.#logger.error("TrainingCoordinator: lost the coordinator lock; stopping.");
            onLost();
          })
          .catch(() => {});
      },
      Math.max(50, this.#ttl / 3),
    );
    this.#renew.unref();
  }

  /** Stops renewing. */
  stop(): void {
    clearInterval(this.#renew);
  }

  /** Stops renewing and frees the lock if this process still holds it. */
  async release(): Promise<void> {
    this.stop();
    await runScript(this.#client, LUA.lockRelease, [this.#key], [this.#token]).catch(() => {});
  }
}
