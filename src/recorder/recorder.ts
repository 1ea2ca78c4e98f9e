import {
  checkUpstream,
  RecordingEndpoint,
  resolveEndpointOptions,
  SESSION_ID,
} from "../endpoint/index.js";
import {
  type GatherOptions,
  gatherTrajectoryGroups,
  type LineageMode,
  stepOfModelName,
  type TrajectoryGroup,
} from "../trajectory/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { errorMessage } from "../util/error-message.js";
import { RolloutAbortedError } from "./errors.js";
import { RolloutHandle } from "./handle.js";
import { type Receipt, receiptOf, sessionHeader } from "./receipts.js";
import {
  checkLineageMode,
  checkSessionOptions,
  isAbortSignal,
  namesPolicy,
  rolloutAbort,
} from "./recorder-checks.js";
import type { RecorderOptions } from "./recorder-options.js";
import { attachEndpoint, type RolloutTrajectory } from "./rollout-trajectory.js";
import { SessionRegistry } from "./sessions.js";
import { tracingEnabled } from "./spans.js";
import { type WrapOptions, wrapWithSessions } from "./wrap.js";

// Shared across the copies of this module (see context.ts): once per process.
const WARNED_EMPTY = Symbol.for("trajectory-recorder.warned-empty-rollout");
const warned = globalThis as { [WARNED_EMPTY]?: boolean };

/**
 * Records the chat completions a wrapped `openai` client makes inside
 * `rollout()` as an ART Trajectory.
 *
 * @example
 * const recorder = new Recorder();
 * const openai = recorder.wrap(new OpenAI());
 * const t = await recorder.rollout(async (t) => {
 *   await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
 *   t.reward = 1;
 * });
 */
export class Recorder {
  /** The options it was made with. */
  readonly options: RecorderOptions;
  #policy: ((model: string) => boolean) | undefined;
  /** Who knows which step a model name serves (`addPolicyVersion`), newest first. */
  #versionSources: Array<(model: string) => number | undefined> = [];
  #endpoint: RecordingEndpoint | undefined;
  readonly #sessions: SessionRegistry;
  /** Store writes in flight (a store that answers with promises), for `close()` to wait on. */
  readonly #writes = new Set<Promise<void>>();

  constructor(options: RecorderOptions = {}) {
    const call = "new Recorder(options)";
    if (options === null || typeof options !== "object")
      throw new InvalidArgumentError(call, "options", "an object", options);
    this.options = options;
    checkLineageMode(call, "options.lineage", options.lineage);
    const policy = options.policy;
    if (policy !== undefined && typeof policy !== "function" && !Array.isArray(policy))
      throw new InvalidArgumentError(
        call,
        "options.policy",
        "an array of model names or a function (model: string) => boolean",
        policy,
      );
    this.#policy = typeof policy === "function" ? policy : policy ? namesPolicy(policy) : undefined;
    const versionOf = options.policyVersion;
    if (versionOf !== undefined && typeof versionOf !== "function")
      throw new InvalidArgumentError(
        call,
        "options.policyVersion",
        "a function (model: string) => number | undefined",
        versionOf,
      );
    if (versionOf) this.#versionSources.push(versionOf);
    if (options.upstream !== undefined) checkUpstream(call, options.upstream);
    // Checked now, started with the first rollout.
    if (options.upstream !== undefined || options.endpoint !== undefined)
      resolveEndpointOptions(call, options.endpoint);
    const store = options.store;
    if (store !== undefined && (!isObjectLike(store) || typeof store.put !== "function"))
      throw new InvalidArgumentError(
        call,
        "options.store",
        "a store with put(entry) (a TrajectoryStore)",
        store,
      );
    if (options.markInfraFailures !== undefined && typeof options.markInfraFailures !== "boolean")
      throw new InvalidArgumentError(
        call,
        "options.markInfraFailures",
        "true or false",
        options.markInfraFailures,
      );
    checkSessionOptions(call, options.sessions);
    this.#sessions = new SessionRegistry(options.sessions ?? {}, options.logger ?? console);
  }

  /**
   * Starts the recording endpoint behind `t.baseURL` (the first rollout
   * does it too) and returns its base URL. Needs `upstream`.
   *
   * @example
   * const recorder = new Recorder({ upstream: { baseURL: "http://127.0.0.1:8000/v1", apiKey } });
   * console.log(await recorder.startEndpoint()); // http://127.0.0.1:41234/v1
   */
  async startEndpoint(): Promise<string> {
    const upstream = this.options.upstream;
    if (upstream === undefined)
      throw new InvalidArgumentError(
        "recorder.startEndpoint()",
        "new Recorder(options).upstream",
        "a TrainableModel or { baseURL, apiKey? }",
        upstream,
      );
    this.#endpoint ??= new RecordingEndpoint({
      upstream,
      host: this,
      options: resolveEndpointOptions("new Recorder(options)", this.options.endpoint),
    });
    await this.#endpoint.start();
    return this.#endpoint.baseURL;
  }

  /**
   * Stops the recording endpoint, if it was started (its connections close,
   * calls in flight are cut off; a later rollout starts it again), and ends
   * every open session.
   */
  async close(): Promise<void> {
    this.#sessions.endAll();
    const endpoint = this.#endpoint;
    this.#endpoint = undefined;
    await endpoint?.close();
    // A store that answers with promises (Redis) may still be writing the ends.
    while (this.#writes.size > 0) await Promise.all(this.#writes);
  }

  /**
   * Whether `model` is the policy being trained (see {@link RecorderOptions.policy}).
   *
   * @example
   * new Recorder({ policy: ["my-model"] }).isPolicy("gpt-4o"); // false
   */
  isPolicy(model: string): boolean {
    return this.#policy ? this.#policy(model) : true;
  }

  /** An unnamed model is the policy only while every model is. */
  #isPolicyOrUnnamed(model: string | undefined): boolean {
    if (!this.#policy) return true;
    return model ? this.#policy(model) : false;
  }

  /**
   * Adds `test` to the policy: with no policy given before, only the models
   * it accepts are the policy from now on. `model.openai({ recorder })`
   * calls it with its own model.
   *
   * @example
   * recorder.addPolicy((m) => m.startsWith("wandb-artifact:///me/demo/agent"));
   */
  addPolicy(test: string | ((model: string) => boolean)): void {
    const added = typeof test === "string" ? (m: string) => m === test : test;
    const before = this.#policy;
    this.#policy = before ? (m) => before(m) || added(m) : added;
  }

  /**
   * Tells the recorder which training step a model name serves, for the
   * trajectories' `initial_policy_version` and `final_policy_version`.
   * `model.openai({ recorder })` calls it with its own model. The source
   * added last is asked first; a name no source knows gets the step it pins
   * (`...:step3`), or no version.
   *
   * @example
   * recorder.addPolicyVersion((m) => (m === "agent-latest" ? currentStep : undefined));
   */
  addPolicyVersion(versionOf: (model: string) => number | undefined): void {
    if (typeof versionOf !== "function")
      throw new InvalidArgumentError(
        "recorder.addPolicyVersion(versionOf)",
        "versionOf",
        "a function (model: string) => number | undefined",
        versionOf,
      );
    // The same source added again (a model's openai() called per step) is asked once.
    if (!this.#versionSources.includes(versionOf)) this.#versionSources.unshift(versionOf);
  }

  /**
   * The training step of the checkpoint `model` names: the sources added
   * with {@link Recorder.addPolicyVersion} (and `options.policyVersion`),
   * else the step the name pins; `undefined` when unknown.
   *
   * @example
   * new Recorder().policyVersion("wandb-artifact:///me/demo/agent:step3"); // 3
   */
  policyVersion(model: string | undefined): number | undefined {
    if (!model) return undefined;
    for (const source of this.#versionSources) {
      const v = source(model);
      if (v !== undefined) return v;
    }
    return stepOfModelName(model);
  }

  /**
   * Makes `client.chat.completions.create` record inside rollouts (and
   * `responses.create`; or, given an `@anthropic-ai/sdk` client, its
   * `messages.create`, `messages.stream()` included); returns the same client. With `{ policy: true }` every completion of this client is
   * the policy's, whatever model name the server answers with.
   */
  wrap<T extends object>(client: T, options: Recorder.WrapOptions = {}): T {
    const bound = isObjectLike(options) ? options.session : undefined;
    if (
      bound !== undefined &&
      typeof bound !== "function" &&
      (typeof bound !== "string" || !SESSION_ID.test(bound))
    )
      throw new InvalidArgumentError(
        "recorder.wrap(client, options)",
        "options.session",
        "a session id (1 to 200 letters, digits or ._:-) or a function returning one",
        bound,
      );
    // Calls outside rollouts look for a session only when the caller can name one.
    const sessionOf = (requestOptions: unknown) => {
      const id = sessionHeader(requestOptions) ?? (typeof bound === "function" ? bound() : bound);
      if (id === undefined) return undefined;
      if (!SESSION_ID.test(id)) {
        (this.options.logger ?? console).warn(
          `trajectory-recorder: a call named session ${JSON.stringify(id.slice(0, 40))}, which is not 1 to 200 letters, digits or ._:-: not recorded`,
        );
        return undefined;
      }
      return this.session(id).state;
    };
    return wrapWithSessions(client, options, sessionOf);
  }

  /**
   * The receipt of a completion a wrapped client returned inside a rollout or
   * session (the `ChatCompletion`, or the `Stream` of a streamed call): the
   * trajectory it was recorded into and its call number there (from 1).
   * `undefined` for anything not recorded.
   *
   * @example
   * const res = await handle.run(() => openai.chat.completions.create(body));
   * recorder.receiptOf(res); // { trajectory_id: "trj_…", call: 1 }
   */
  receiptOf(completion: unknown): Recorder.Receipt | undefined {
    return receiptOf(completion);
  }

  /**
   * Opens a rollout and hands back its handle, for code that cannot put the
   * rollout in one function (a server that records across requests): run
   * calls in it with `handle.run(fn)`, finish it with `handle.finish()`.
   *
   * @example
   * const handle = recorder.open({ metadata: { ticket: "T-1" } });
   * await handle.run(() => openai.chat.completions.create(body));
   * handle.trajectory.reward = 1;
   * const t = handle.finish();
   */
  open(options: Recorder.OpenOptions = {}): Recorder.RolloutHandle {
    const call = "recorder.open(options)";
    if (!isObjectLike(options))
      throw new InvalidArgumentError(call, "options", "an object", options);
    const metadata = options.metadata;
    if (metadata !== undefined && (!isObjectLike(metadata) || Array.isArray(metadata)))
      throw new InvalidArgumentError(call, "options.metadata", "a plain object", metadata);
    checkLineageMode(call, "options.lineage", options.lineage);
    return this.#open(options, null);
  }

  #open(options: Recorder.OpenOptions, session: string | null): Recorder.RolloutHandle {
    const handle = new RolloutHandle({
      session,
      metadata: options.metadata ? { ...options.metadata } : {},
      options: {
        logprobs: this.options.logprobs ?? true,
        tokenIds: this.options.tokenIds ?? true,
        recordContent: this.options.recordContent ?? false,
        lineage: (options.lineage as LineageMode | undefined) ?? this.options.lineage ?? "tokens",
        markInfraFailures: this.options.markInfraFailures !== false,
        // Read at each call, so a policy added after the rollout began counts.
        isPolicy: (m) => this.#isPolicyOrUnnamed(m),
        policyVersion: (m) => this.policyVersion(m),
      },
      // Whether anyone traces is asked once per rollout: no span (nor
      // OpenTelemetry context) when nobody does, see tracingEnabled().
      traced: tracingEnabled(),
      store: this.options.store,
      writes: this.#writes,
      logger: this.options.logger ?? console,
    });
    const endpoint = this.#endpoint;
    if (this.options.upstream !== undefined) {
      let key: string | undefined;
      const open = () => {
        const e = this.#endpoint;
        if (!e?.listening)
          throw new Error(
            "t.baseURL needs the recording endpoint to be listening: await recorder.startEndpoint() first (recorder.rollout() does it).",
          );
        key ??= e.open(handle);
        return { e, key };
      };
      attachEndpoint(handle.trajectory, {
        baseURL: () => open().e.baseURL,
        apiKey: () => open().key,
      });
      handle.onFinish(() => {
        if (key) (this.#endpoint ?? endpoint)?.finish(key);
      });
    }
    return handle;
  }

  /**
   * The open session `id`, opened now when it is not: a trajectory that
   * outlives any one request, for a deployed service. Every call made in
   * `session.run(fn)` records into it (through the recording proxy, a call
   * names its session with the `x-trajectory-session` header instead). It
   * ends with {@link endSession}, or after `sessions.idleTimeoutMs` without
   * a call; with a `store`, it is written after every call.
   *
   * @example
   * const session = recorder.session(conversationId);
   * const res = await session.run(() => openai.chat.completions.create(body));
   * reply(res, { receipt: session.id });
   */
  session(id: string, options: Recorder.OpenOptions = {}): Recorder.RolloutHandle {
    const call = "recorder.session(id, options)";
    if (typeof id !== "string" || !SESSION_ID.test(id))
      throw new InvalidArgumentError(call, "id", "1 to 200 letters, digits or ._:-", id);
    const open = this.#sessions.get(id);
    if (open) return open;
    if (!isObjectLike(options))
      throw new InvalidArgumentError(call, "options", "an object", options);
    const o = options as Recorder.OpenOptions;
    return this.#sessions.add(id, () =>
      this.#open({ ...o, metadata: { ...o.metadata, session_id: id } }, id),
    );
  }

  /** The open session `id`'s handle, or `undefined` (never opens one). */
  getSession(id: string): Recorder.RolloutHandle | undefined {
    return this.#sessions.get(id);
  }

  /** Sessions open now. */
  get openSessions(): number {
    return this.#sessions.size;
  }

  /**
   * Ends session `id` and returns its trajectory (written to the store, and
   * handed to `sessions.onEnd`); `undefined` when no such session is open.
   */
  endSession(id: string): RolloutTrajectory | undefined {
    return this.#sessions.end(id);
  }

  /**
   * Runs `fn` as one rollout and returns its Trajectory. A thrown error is
   * logged on the trajectory and re-thrown.
   *
   * The rollout is found again inside `fn` through AsyncLocalStorage. On
   * Node 20, and on Node 22 without `--experimental-async-context-frame`,
   * that makes every promise run a hook while any rollout runs (tens of µs per
   * `openai` call); Node 24 has no such cost. The store is switched off
   * between rollouts.
   *
   * `options.lineage` overrides the recorder's {@link RecorderOptions.lineage}
   * for this rollout.
   */
  async rollout(
    fn: (trajectory: RolloutTrajectory, context: Recorder.RolloutContext) => unknown,
    options: Recorder.RolloutCallOptions = {},
  ): Promise<RolloutTrajectory> {
    const call = "recorder.rollout(fn, options)";
    if (typeof fn !== "function") throw new InvalidArgumentError(call, "fn", "a function", fn);
    if (!isObjectLike(options))
      throw new InvalidArgumentError(call, "options", "an object", options);
    const metadata = options.metadata;
    if (metadata !== undefined && (!isObjectLike(metadata) || Array.isArray(metadata)))
      throw new InvalidArgumentError(call, "options.metadata", "a plain object", metadata);
    const { signal, timeout } = options;
    if (signal !== undefined && !isAbortSignal(signal))
      throw new InvalidArgumentError(call, "options.signal", "an AbortSignal", signal);
    if (
      timeout !== undefined &&
      (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0)
    )
      throw new InvalidArgumentError(call, "options.timeout", "a positive number of ms", timeout);
    checkLineageMode(call, "options.lineage", options.lineage);
    const { scoreError } = options;
    if (scoreError !== undefined && typeof scoreError !== "function")
      throw new InvalidArgumentError(call, "options.scoreError", "a function", scoreError);
    if (this.options.upstream !== undefined && !this.#endpoint?.listening)
      await this.startEndpoint();
    const handle = this.#open(
      {
        metadata: metadata as Record<string, unknown> | undefined,
        lineage: options.lineage as LineageMode | undefined,
      },
      null,
    );
    const trajectory = handle.trajectory;
    const abort = rolloutAbort(signal, timeout);
    const given: Recorder.RolloutContext = { signal: abort.signal };
    let failed = false;
    let failure: unknown;
    try {
      if (abort.signal.aborted) throw abort.error(trajectory);
      // A rollout that cannot be aborted adds no listener (NEVER is shared by all).
      const running = handle.run(
        () => fn(trajectory, given),
        abort.watched ? abort.signal : undefined,
      );
      if (abort.watched) {
        // Once aborted, how the function ends later is no one's concern.
        running.catch(() => {});
        await Promise.race([running, abort.rejection(trajectory)]);
      } else await running;
    } catch (error) {
      failed = true;
      failure = error;
    } finally {
      abort.dispose();
    }
    if (failed && scoreError && !(failure instanceof RolloutAbortedError)) {
      const scored = scoreFailure(scoreError as RolloutErrorScorer, failure, trajectory);
      if (scored !== undefined) {
        // Kept as a scored trajectory: the rollout resolves, nothing is re-thrown.
        failed = false;
        trajectory.reward = scored;
        trajectory.log(
          `rollout ended in an error, scored ${scored} by options.scoreError: ${errorMessage(failure)}`,
        );
      }
    }
    const why =
      failed && !(failure instanceof RolloutAbortedError)
        ? `rollout failed: ${errorMessage(failure)}`
        : undefined;
    handle.finish(failed ? (failure ?? new Error("rollout failed")) : undefined, why);
    if (handle.state.completions === 0 && !abort.signal.aborted) this.#warnEmpty();
    if (failed) throw failure;
    return trajectory;
  }

  #warnEmpty(): void {
    if (warned[WARNED_EMPTY]) return;
    warned[WARNED_EMPTY] = true;
    (this.options.logger ?? console).warn(
      "trajectory-recorder: a rollout recorded no chat completion (said once per process; see the trajectory's logs). Wrap the client with recorder.wrap(client) or model.openai({ recorder }), and make the calls inside recorder.rollout().",
    );
  }

  /** {@link gatherTrajectoryGroups} with `options.shipper` as the sink. */
  gatherTrajectoryGroups(
    groups: Iterable<GatherOptions.GatherGroupInput>,
    options: GatherOptions = {},
  ): Promise<TrajectoryGroup[]> {
    return gatherTrajectoryGroups(groups, {
      ...options,
      sink: options.sink ?? this.options.shipper,
    });
  }
}

/** The types {@link Recorder}'s methods take, declared in this file (or where they are used) and listed here. */
export declare namespace Recorder {
  export type {
    OpenOptions,
    Receipt,
    RolloutCallOptions,
    RolloutContext,
    RolloutErrorScorer,
    RolloutHandle,
    WrapOptions,
  };
}

/** Options of {@link Recorder.rollout}. */
export interface RolloutCallOptions {
  /** Copied into the trajectory's `metadata`. */
  metadata?: Record<string, unknown>;
  /**
   * Ends the rollout when it aborts: `rollout()` rejects with
   * {@link RolloutAbortedError}, whose `trajectory` holds what was recorded and
   * logs why it ended. Given to `fn` (combined with `timeout`) to pass on to
   * its own calls.
   */
  signal?: AbortSignal;
  /** Ends the rollout after this many milliseconds, as an aborted `signal` does. Default: none. */
  timeout?: number;
  /** How this rollout's histories follow the token ids: overrides {@link RecorderOptions.lineage}. */
  lineage?: RecorderOptions.LineageMode;
  /**
   * Turns an error `fn` throws into a score, for an agent whose failure is
   * its own doing (a framework's max-turns error: a loop is a bad answer, not
   * an accident). When it returns a finite number, `rollout()` resolves with
   * the trajectory recorded so far, that reward, and a line in `logs`; its
   * Choices stay trainable. `undefined` or `null` leaves the error thrown (so
   * a gather counts it as an exception). Not called for
   * {@link RolloutAbortedError}. `trajectory-recorder/openai-agents` has
   * `scoreMaxTurns()` for the Agents SDK.
   *
   * @example
   * await recorder.rollout(fn, { scoreError: (e) => (e instanceof MyLoopError ? 0 : undefined) });
   */
  scoreError?: RolloutErrorScorer;
}

/**
 * What {@link RolloutCallOptions.scoreError} calls: `error` is what `fn`
 * threw. A finite number scores the trajectory recorded so far with it;
 * `undefined` or `null` leaves the error thrown.
 */
export type RolloutErrorScorer = (
  error: unknown,
  trajectory: RolloutTrajectory,
) => number | null | undefined;

/** The scorer's number for `error`, or undefined to throw it (a scorer that fails is logged). */
function scoreFailure(
  scorer: RolloutErrorScorer,
  error: unknown,
  trajectory: RolloutTrajectory,
): number | undefined {
  let scored: unknown;
  try {
    scored = scorer(error, trajectory);
  } catch (thrown) {
    trajectory.log(`options.scoreError threw: ${errorMessage(thrown)}; the rollout's error stands`);
    return undefined;
  }
  if (scored === undefined || scored === null) return undefined;
  if (typeof scored === "number" && Number.isFinite(scored)) return scored;
  trajectory.log(
    `options.scoreError returned ${typeof scored === "number" ? String(scored) : typeof scored}, not a finite number; the rollout's error stands`,
  );
  return undefined;
}

/** What `fn` of {@link Recorder.rollout} is given besides its trajectory. */
export interface RolloutContext {
  /** Aborts when the rollout is aborted (its `signal`, or its `timeout`): pass it on to your own calls. */
  signal: AbortSignal;
}

/** Options of {@link Recorder.open} and {@link Recorder.session}. */
export interface OpenOptions {
  /** Copied into the trajectory's `metadata` (a session adds `session_id`). */
  metadata?: Record<string, unknown>;
  /** How its histories follow the token ids: overrides {@link RecorderOptions.lineage}. */
  lineage?: RecorderOptions.LineageMode;
}
