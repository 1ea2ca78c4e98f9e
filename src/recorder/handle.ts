// One rollout, held open by whoever opened it: `recorder.rollout(fn)` opens
// and finishes one around `fn`; the recording endpoint (the proxy's rollouts,
// sessions) keeps one open across requests and finishes it when told.

import { randomBytes } from "node:crypto";
import { context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { History, type MessageOrChoice } from "../trajectory/index.js";
import { errorMessage } from "../util/error-message.js";
import type { RecordedCompletion, RolloutOptions } from "./active-rollout.js";
import { runInRollout } from "./context.js";
import { RolloutState } from "./rollout-state.js";
import { RolloutTrajectory, setTrajectoryId } from "./rollout-trajectory.js";
import { tracer } from "./spans.js";

/**
 * Where a recorder writes what its rollouts record as they go (a
 * `TrajectoryStore` of `trajectory-recorder/store` fits): the trajectory's
 * state after each recorded call and at its end, and each call as it starts,
 * so that a process killed mid-call keeps what came before.
 */
export interface RolloutStore {
  /**
   * Writes the trajectory's current state; when it returns (or the promise it
   * returns resolves), the record is durable. A store that answers with a
   * promise (`RedisTrajectoryStore`) has its writes made one after another,
   * per trajectory, in the order they were recorded.
   */
  put(entry: {
    id: string;
    session: string | null;
    status: "open" | "finished";
    trajectory: ReturnType<RolloutTrajectory["toJSON"]>;
    calls: number;
    model?: string | null;
    metadata?: Record<string, unknown>;
  }): void | Promise<void>;
  /**
   * Writes only what an open trajectory gained since the previous write
   * (`TrajectoryStore.append` describes the fields); returns false when the
   * store cannot take it, and the full state is `put` instead. Optional: a
   * store without it gets a `put` after every call.
   */
  append?(entry: {
    id: string;
    session: string | null;
    status: "open";
    calls: number;
    model?: string | null;
    metadata?: Record<string, unknown>;
    from: { main: number; histories: number[] };
    main: unknown[];
    histories: { index: number; items: unknown[]; tools?: unknown[] | null }[];
    fields: Record<string, unknown>;
  }): boolean | Promise<boolean>;
  /** A call started (written before it is sent upstream). */
  beginCall?(
    id: string,
    call: number,
    request: { model?: string; messages: unknown[]; tools?: unknown[] | null },
    options?: { session?: string | null },
  ): void | Promise<void>;
}

// Random bytes for ids, drawn 256 ids at a time: one `randomBytes` (a system
// call) per rollout showed among the recorder's top samples.
const ID_BYTES = 12;
let idPool = Buffer.alloc(0);
let idNext = 0;

/** A new trajectory id: `trj_` and 24 hex digits (96 random bits). */
export function newTrajectoryId(): string {
  if (idNext + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 256);
    idNext = 0;
  }
  const id = idPool.toString("hex", idNext, idNext + ID_BYTES);
  idNext += ID_BYTES;
  return `trj_${id}`;
}

/** What {@link RolloutHandle} is opened with. */
export interface HandleInit {
  id?: string;
  session?: string | null;
  metadata?: Record<string, unknown>;
  options: RolloutOptions;
  traced: boolean;
  store?: RolloutStore;
  logger: { warn(message: string): void };
  /** Where the handle keeps its store writes in flight, for `recorder.close()` to wait on. */
  writes?: Set<Promise<void>>;
}

/**
 * A rollout held open: record into it with {@link RolloutHandle.run} (every
 * wrapped call made inside records here), read its trajectory at any time,
 * and {@link RolloutHandle.finish} it once. `recorder.open()` makes one;
 * `recorder.rollout(fn)` is `open`, `run(fn)`, `finish()` with abort and
 * timeout handling around it.
 *
 * @example
 * const handle = recorder.open({ metadata: { ticket: "T-1" } });
 * await handle.run(() => openai.chat.completions.create({ model, messages }));
 * const t = handle.finish();
 */
export class RolloutHandle {
  /** The trajectory's receipt id (as `trajectory.id`). */
  readonly id: string;
  /** The session this rollout records, or null for a rollout. */
  readonly session: string | null;
  /** The trajectory it records into. */
  readonly trajectory: RolloutTrajectory;
  readonly #state: RolloutState;
  readonly #span: Span | undefined;
  readonly #store: RolloutStore | undefined;
  readonly #logger: { warn(message: string): void };
  #finished = false;
  #lastActive = Date.now();
  #onFinish: Array<() => void> | undefined;
  #storeFailed = false;
  /** The model the latest call asked for (what the store lists the trajectory under). */
  #model: string | null = null;
  /** A write of the trajectory's state, waiting for the current call's answer to go out. */
  #scheduled: ReturnType<typeof setImmediate> | undefined;
  #whenSaved: { promise: Promise<void>; resolve: () => void } | undefined;
  /** What the latest open write left in the store, for the next one to continue; undefined: put in full. */
  #written: Written | undefined;
  /** The latest of this rollout's writes to a store that answers with promises, while one is in flight. */
  #writing: Promise<void> | undefined;
  readonly #writes: Set<Promise<void>> | undefined;

  /** @internal Use `recorder.open()`. */
  constructor(init: HandleInit) {
    this.id = init.id ?? newTrajectoryId();
    this.session = init.session ?? null;
    this.trajectory = new RolloutTrajectory({ metadata: init.metadata ?? {} });
    setTrajectoryId(this.trajectory, this.id);
    this.#store = init.store;
    this.#logger = init.logger;
    this.#writes = init.writes;
    this.#state = new RolloutState(
      this.trajectory,
      init.options,
      init.traced,
      init.store || init.session ? this.#observer() : undefined,
    );
    this.#span = init.traced
      ? tracer().startSpan(init.session ? "session" : "rollout", {
          attributes: {
            "gen_ai.operation.name": "invoke_agent",
            ...(init.session ? { "gen_ai.conversation.id": init.session } : {}),
          },
        })
      : undefined;
  }

  /** @internal The state every recorded call goes through. */
  get state(): RolloutState {
    return this.#state;
  }

  /** Whether {@link finish} was called. */
  get ended(): boolean {
    return this.#finished;
  }

  /** Calls started in this rollout so far (the number of the latest one). */
  get calls(): number {
    return this.#state.calls;
  }

  /** When the rollout last started or recorded a call (ms since the epoch). */
  get lastActive(): number {
    return this.#lastActive;
  }

  /**
   * Runs `fn` inside this rollout: the calls its wrapped clients make record
   * here, until what `fn` returns settles. Several runs may overlap.
   */
  run<T>(fn: () => T, signal?: AbortSignal): Promise<Awaited<T>> {
    const span = this.#span;
    if (!span) return runInRollout(this.#state, fn, signal);
    return context.with(trace.setSpan(context.active(), span), () =>
      runInRollout(this.#state, fn, signal),
    );
  }

  /** @internal Runs `callback` when the rollout is finished (once). */
  onFinish(callback: () => void): void {
    if (this.#finished) {
      callback();
      return;
    }
    this.#onFinish ??= [];
    this.#onFinish.push(callback);
  }

  /**
   * Ends the rollout (its histories follow the tokens, its logprobs are
   * compacted, calls still open are said in its logs) and returns its
   * trajectory; later calls return it again. `error` marks its span as
   * failed; `why`, when given, is added to the logs.
   */
  finish(error?: unknown, why?: string): RolloutTrajectory {
    if (this.#finished) return this.trajectory;
    this.#finished = true;
    this.#state.end();
    if (why) this.trajectory.log(why);
    for (const callback of this.#onFinish ?? []) callback();
    this.#onFinish = undefined;
    this.flush();
    this.#save("finished");
    const span = this.#span;
    if (span) {
      if (error !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
      } else {
        span.setAttribute("trajectory_recorder.reward", this.trajectory.reward);
        span.addEvent("gen_ai.evaluation.result", {
          "gen_ai.evaluation.name": "reward",
          "gen_ai.evaluation.score.value": this.trajectory.reward,
        });
      }
      span.end();
    }
    return this.trajectory;
  }

  #observer() {
    return {
      callStarted: (call: number, request: RecordedCompletion["request"]) => {
        this.#lastActive = Date.now();
        if (typeof request.model === "string" && request.model !== "") this.#model = request.model;
        try {
          const begun = this.#store?.beginCall?.(
            this.id,
            call,
            { model: request.model, messages: request.messages, tools: request.tools ?? null },
            { session: this.session },
          );
          if (begun) begun.catch((error: unknown) => this.#storeFailure(error));
        } catch (error) {
          this.#storeFailure(error);
        }
      },
      recorded: () => {
        this.#lastActive = Date.now();
        this.#schedule();
      },
    };
  }

  /**
   * Writes the state once the code that awaited the call has run on (the
   * endpoint has sent the answer): the write costs the caller no latency,
   * and calls that record in one turn of the event loop are written once.
   */
  #schedule(): void {
    if (!this.#store || this.#scheduled) return;
    this.#scheduled = setImmediate(() => this.flush());
  }

  /**
   * Writes what the rollout recorded to the store now, rather than right
   * after the current turn of the event loop (as it does after each call).
   * Nothing to do without a store.
   */
  flush(): void {
    if (!this.#scheduled) return;
    clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    if (!this.#finished) this.#save("open");
    const waiting = this.#whenSaved;
    this.#whenSaved = undefined;
    waiting?.resolve();
  }

  /** Resolves once what was recorded so far is in the store (at once when nothing waits). */
  saved(): Promise<void> {
    const written = () => this.#writing ?? Promise.resolve();
    if (!this.#scheduled) return written();
    if (!this.#whenSaved) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#whenSaved = { promise, resolve };
    }
    return this.#whenSaved.promise.then(written);
  }

  /**
   * Writes the trajectory's state to the store, if there is one: while it is
   * open and has only grown since the previous write, just what it gained
   * (an append); otherwise, and always at the end, its full state.
   */
  #save(status: "open" | "finished"): void {
    const store = this.#store;
    if (!store) return;
    const written = this.#written;
    this.#written = undefined;
    const delta = status === "open" && written && store.append ? this.#delta(written) : undefined;
    const put = () =>
      store.put({
        id: this.id,
        session: this.session,
        status,
        // The trajectory itself, not a copy: the store's JSON.stringify calls
        // its toJSON with a key, which shares the recorded tokens' bytes
        // instead of copying them (the same JSON, a fraction of the cost).
        trajectory: this.trajectory as unknown as ReturnType<RolloutTrajectory["toJSON"]>,
        calls: this.#state.calls,
        model: this.#model,
        metadata: this.trajectory.metadata,
      });
    const write = () => writeTo(store, delta, put);
    if (this.#writing) {
      // A write is in flight: this one follows it, so they land in order.
      this.#follow(write);
      if (status === "open") this.#written = writtenNow(this.trajectory);
      return;
    }
    try {
      const pending = write();
      if (pending) this.#follow(() => pending);
      if (status === "open") this.#written = writtenNow(this.trajectory);
    } catch (error) {
      this.#storeFailure(error);
    }
  }

  /** Runs `write` after the writes in flight; a failure is said (once) and the next write is a full put. */
  #follow(write: () => void | Promise<void>): void {
    const next: Promise<void> = (this.#writing ?? Promise.resolve())
      .then(write)
      .catch((error: unknown) => {
        this.#written = undefined;
        this.#storeFailure(error);
      })
      .finally(() => {
        this.#writes?.delete(next);
        if (this.#writing === next) this.#writing = undefined;
      });
    this.#writing = next;
    this.#writes?.add(next);
  }

  /** The caller's call succeeded: a store's failure is said, once per rollout, never thrown. */
  #storeFailure(error: unknown): void {
    if (this.#storeFailed) return;
    this.#storeFailed = true;
    this.#logger.warn(
      `trajectory-recorder: trajectory ${this.id} could not be written to the store: ${errorMessage(error)}`,
    );
    this.trajectory.log(`writing to the store failed: ${errorMessage(error)}`);
  }

  /** What the trajectory gained since `written`, or undefined when it did more than grow. */
  #delta(written: Written): Parameters<NonNullable<RolloutStore["append"]>>[0] | undefined {
    const t = this.trajectory;
    if (!grewFrom(t.messages_and_choices, written.main, written.mainLast)) return undefined;
    if (t.additional_histories.length < written.histories.length) return undefined;
    const histories: { index: number; items: unknown[]; tools?: unknown[] | null }[] = [];
    for (let i = 0; i < t.additional_histories.length; i++) {
      const h = t.additional_histories[i] as History;
      const w = written.histories[i];
      if (w && (w.history !== h || !grewFrom(h.messages_and_choices, w.count, w.last)))
        return undefined;
      const from = w?.count ?? 0;
      const toolsChanged = w ? w.tools !== h.tools : h.tools !== null;
      if (h.messages_and_choices.length > from || toolsChanged || !w)
        histories.push({
          index: i,
          items: h.messages_and_choices.slice(from).map(forStringify),
          ...(toolsChanged ? { tools: h.tools } : {}),
        });
    }
    return {
      id: this.id,
      session: this.session,
      status: "open",
      calls: this.#state.calls,
      model: this.#model,
      metadata: t.metadata,
      from: { main: written.main, histories: written.histories.map((w) => w.count) },
      main: t.messages_and_choices.slice(written.main).map(forStringify),
      histories,
      // Every key but the histories (a RolloutTrajectory has no unknown keys).
      fields: {
        tools: t.tools,
        reward: t.reward,
        initial_policy_version: t.initial_policy_version,
        final_policy_version: t.final_policy_version,
        metrics: t.metrics,
        metadata: t.metadata,
        logs: t.logs,
      },
    };
  }
}

/**
 * Appends `delta` when there is one, else (or when the store refuses it)
 * puts the full state; a promise when the store answers with promises.
 */
function writeTo(
  store: RolloutStore,
  delta: Parameters<NonNullable<RolloutStore["append"]>>[0] | undefined,
  put: () => void | Promise<void>,
): void | Promise<void> {
  const appended = delta && store.append ? store.append(delta) : false;
  if (appended instanceof Promise) return appended.then((ok) => (ok ? undefined : put()));
  if (appended) return;
  return put();
}

/** What a write left in the store: each history's length and last item, by identity. */
type Written = {
  main: number;
  mainLast: unknown;
  histories: { history: History; count: number; last: unknown; tools: unknown }[];
};

function writtenNow(t: RolloutTrajectory): Written {
  return {
    main: t.messages_and_choices.length,
    mainLast: t.messages_and_choices.at(-1),
    histories: t.additional_histories.map((h) => ({
      history: h,
      count: h.messages_and_choices.length,
      last: h.messages_and_choices.at(-1),
      tools: h.tools,
    })),
  };
}

/** Whether `items` still holds what was written (`count` items, the last one `last`), maybe more. */
function grewFrom(items: readonly unknown[], count: number, last: unknown): boolean {
  return items.length >= count && (count === 0 || items[count - 1] === last);
}

/**
 * An item as the trajectory's own JSON.stringify writes it: through a
 * History's toJSON with a key, which shares the recorded tokens' bytes.
 */
function forStringify(item: MessageOrChoice): unknown {
  return {
    toJSON: (key: string) =>
      new History({ messages_and_choices: [item] }).toJSON(key).messages_and_choices[0],
  };
}
