// The sessions a recorder holds open: found by id across requests, ended when
// told, when idle past their timeout, or when too many are open (the least
// recently active first).
import { errorMessage } from "../util/error-message.js";
import type { RolloutHandle } from "./handle.js";
import type { RolloutTrajectory } from "./rollout-trajectory.js";

/** How sessions (trajectories opened by `recorder.session(id)`) end. */
export interface SessionOptions {
  /** A session that starts no call for this long ends (ms). Default 1,800,000 (30 minutes). */
  idleTimeoutMs?: number;
  /** Sessions open at once; opening one more ends the least recently active. Default 10,000. */
  maxOpen?: number;
  /** Called with each session's trajectory when it ends (by `endSession`, idleness or `maxOpen`). */
  onEnd?: (trajectory: RolloutTrajectory) => void;
}

/** Open sessions by id, with the sweep that ends idle ones. */
export class SessionRegistry {
  readonly #open = new Map<string, RolloutHandle>();
  readonly #options: SessionOptions;
  readonly #logger: { warn(message: string): void };
  #sweep: ReturnType<typeof setInterval> | undefined;

  constructor(options: SessionOptions, logger: { warn(message: string): void }) {
    this.#options = options;
    this.#logger = logger;
  }

  /** Sessions open now. */
  get size(): number {
    return this.#open.size;
  }

  /** The open session `id`, if any. */
  get(id: string): RolloutHandle | undefined {
    const handle = this.#open.get(id);
    return handle && !handle.ended ? handle : undefined;
  }

  /** Opens session `id` with `open()`, first ending the least recently active one when `maxOpen` are open. */
  add(id: string, open: () => RolloutHandle): RolloutHandle {
    const max = this.#options.maxOpen ?? 10_000;
    if (this.#open.size >= max) {
      let oldest: RolloutHandle | undefined;
      for (const h of this.#open.values())
        if (!oldest || h.lastActive < oldest.lastActive) oldest = h;
      if (oldest?.session)
        this.end(oldest.session, `session ended: ${max} sessions were open (sessions.maxOpen)`);
    }
    const handle = open();
    this.#open.set(id, handle);
    this.#startSweep();
    return handle;
  }

  /** Ends session `id` (logging `why`, if given) and returns its trajectory. */
  end(id: string, why?: string): RolloutTrajectory | undefined {
    const handle = this.#open.get(id);
    if (!handle) return undefined;
    this.#open.delete(id);
    if (this.#open.size === 0 && this.#sweep) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
    const t = handle.finish(undefined, why);
    try {
      this.#options.onEnd?.(t);
    } catch (error) {
      this.#logger.warn(
        `trajectory-recorder: sessions.onEnd threw for session ${id}: ${errorMessage(error)}`,
      );
    }
    return t;
  }

  /** Ends every open session. */
  endAll(): void {
    for (const id of [...this.#open.keys()]) this.end(id);
  }

  #startSweep(): void {
    if (this.#sweep) return;
    const idle = this.#options.idleTimeoutMs ?? 30 * 60_000;
    this.#sweep = setInterval(
      () => {
        const now = Date.now();
        for (const [id, h] of this.#open)
          if (now - h.lastActive >= idle)
            this.end(id, `session ended after ${idle} ms without a call (sessions.idleTimeoutMs)`);
      },
      Math.max(10, Math.min(60_000, Math.floor(idle / 4))),
    );
    this.#sweep.unref?.();
  }
}
