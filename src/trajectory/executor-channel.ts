// The hand-over between an executor and the one loop that collects from it:
// an outcome counts as delivered only once the consumer asks for the next
// one (its loop body ran), so an engine that records delivery (BullMQ's
// hand-off marks) never marks a group the consumer had not finished with.
import { TrajectoryRecorderError } from "../util/error-family.js";
import type { RolloutOutcome } from "./executor.js";

interface Entry {
  outcome: RolloutOutcome;
  done: () => void;
  refused: (error: Error) => void;
}

/** One producer side (`push`), one consumer at a time (`iterate`). */
export class OutcomeChannel {
  readonly #owner: string;
  readonly #queue: Entry[] = [];
  /** The entry the consumer holds now: done once it asks for more. */
  #held: Entry | undefined;
  readonly #waiters = new Set<() => void>();
  #consuming = false;
  /** Raised by each return(): a next() still waiting from before takes nothing. */
  #generation = 0;
  #closed = false;

  constructor(owner: string) {
    this.#owner = owner;
  }

  /** Outcomes pushed and not yet taken. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Queues an outcome. Resolves once the consumer is done with it; rejects
   * if the channel closes before it was taken.
   */
  push(outcome: RolloutOutcome): Promise<void> {
    if (this.#closed)
      return Promise.reject(new TrajectoryRecorderError(`${this.#owner}: closed; not collected.`));
    return new Promise<void>((done, refused) => {
      this.#queue.push({ outcome, done, refused });
      this.#wakeAll();
    });
  }

  /**
   * Ends iteration and refuses every outcome not taken; returns how many
   * there were (the caller says where they went).
   */
  close(): number {
    if (this.#closed) return 0;
    this.#closed = true;
    this.#release();
    const left = this.#queue.splice(0);
    const error = new TrajectoryRecorderError(
      `${this.#owner}: closed before this group was collected.`,
    );
    for (const entry of left) entry.refused(error);
    this.#wakeAll();
    return left.length;
  }

  /** The outcomes as they come; a second consumer while one is iterating is refused. */
  iterate(): AsyncIterable<RolloutOutcome> {
    return {
      [Symbol.asyncIterator]: () => {
        if (this.#consuming)
          throw new TrajectoryRecorderError(
            `${this.#owner}.collect(): another loop is collecting already; one consumer at a time.`,
          );
        this.#consuming = true;
        const generation = this.#generation;
        return {
          next: () => this.#next(generation),
          return: async () => {
            if (generation === this.#generation) {
              this.#release();
              this.#consuming = false;
              this.#generation++;
              this.#wakeAll();
            }
            return { done: true, value: undefined };
          },
        };
      },
    };
  }

  async #next(generation: number): Promise<IteratorResult<RolloutOutcome>> {
    // An iterator whose loop left (return) takes nothing, then or later.
    const current = () => generation === this.#generation;
    if (!current()) return { done: true, value: undefined };
    this.#release();
    while (this.#queue.length === 0 && !this.#closed && current()) {
      await new Promise<void>((wake) => {
        this.#waiters.add(wake);
      });
    }
    if (!current()) return { done: true, value: undefined };
    const entry = this.#queue.shift();
    if (!entry) {
      this.#consuming = false;
      return { done: true, value: undefined };
    }
    this.#held = entry;
    return { done: false, value: entry.outcome };
  }

  #wakeAll(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  #release(): void {
    const held = this.#held;
    this.#held = undefined;
    held?.done();
  }
}
