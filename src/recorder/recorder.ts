import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import type OpenAI from "openai";
import {
  type GatherOptions,
  type GroupSink,
  gatherTrajectoryGroups,
  LINEAGE_MODES,
  type LineageMode,
  type Trajectory,
  type TrajectoryGroup,
} from "../trajectory/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { errorMessage } from "../util/error-message.js";
import { sameType } from "../wire/same-type.js";
import { RolloutState, runInRollout } from "./context.js";
import { resolveEndpointOptions } from "./endpoint/options.js";
import { attachEndpoint, extraRoutesOf, RolloutTrajectory } from "./endpoint/rollout-trajectory.js";
import { RecordingEndpoint } from "./endpoint/server.js";
import { checkUpstream } from "./endpoint/upstream.js";
import { RolloutAbortedError } from "./errors.js";
import { tracer, tracingEnabled } from "./spans.js";
import { wrapClient } from "./wrap.js";

/** Options of {@link Recorder}. */
export interface RecorderOptions {
  /** Ask for logprobs inside rollouts. Default `true`. */
  logprobs?: boolean;
  /**
   * Ask for the engine's token ids inside rollouts (`return_token_ids` and
   * `return_tokens_as_token_ids`, vLLM extensions the Training Service accepts;
   * turn off for servers that reject unknown parameters). Default `true`.
   */
  tokenIds?: boolean;
  /** Put message content on telemetry spans. Default `false`. */
  recordContent?: boolean;
  /** Where {@link Recorder.gatherTrajectoryGroups} sends finished groups (e.g. a shipper). */
  shipper?: GroupSink;
  /**
   * The models being trained: a list of model names, or a predicate on a
   * model name. A completion is the policy's when its response's model (else
   * its request's) is; any other model's completion is recorded as a plain
   * assistant message (context, never trained on) and the trajectory's logs
   * name that model once. Default: every model is the policy.
   * `model.openai({ recorder })` adds its own model.
   */
  policy?: readonly string[] | ((model: string) => boolean);
  /** Where the recorder warns (once per process, e.g. a rollout that recorded no call). Default `console`. */
  logger?: { warn(message: string): void };
  /**
   * How histories follow the token ids the server returns. `"tokens"`
   * (default): a turn whose `prompt_token_ids` do not start with the previous
   * Choice's `prompt_token_ids` and `token_ids` (a chat template that strips
   * earlier reasoning, re-serializes tool call arguments, ...) goes on in a
   * new additional history, and `logs` say where the tokens diverged.
   * `"text"`: such turns stay in their history when the messages match as
   * text (ART's text-equivalent reconciliation), still said in `logs`.
   * `"off"`: no token check. A rollout may override it.
   */
  lineage?: RecorderOptions.LineageMode;
  /**
   * What `t.baseURL` forwards to (see {@link RolloutTrajectory}): a
   * `TrainableModel` (its latest checkpoint fills in `model: ""`, every
   * completion is the policy's, as `model.openai({ recorder })`), or any
   * OpenAI-compatible server `{ baseURL, apiKey?, model?, policy? }`. The
   * endpoint starts with the first rollout, on loopback; `recorder.close()` stops it.
   */
  upstream?: RecorderOptions.RecordingUpstream;
  /** Where and how the endpoint behind `t.baseURL` listens (loopback, a free port by default). */
  endpoint?: RecorderOptions.EndpointOptions;
}

/** The types {@link RecorderOptions}, {@link ActiveRollout.RolloutOptions} and {@link Recorder.RolloutCallOptions} use. */
export declare namespace RecorderOptions {
  /** Options of the recording endpoint behind `t.baseURL` (and of the standalone proxy). */
  export interface EndpointOptions {
    /**
     * The address to listen on. Default `127.0.0.1`: only this machine can
     * connect. Another address needs `allowRemote: true`.
     */
    host?: string;
    /** TCP port; default 0 (a free one). */
    port?: number;
    /**
     * Lets `host` be an address other machines can reach (a container's
     * interface, `0.0.0.0`). Every call still needs its rollout's key.
     * Default `false`.
     */
    allowRemote?: boolean;
    /** Largest request body read, in bytes; a larger one answers 413. Default 32 MiB. */
    maxBodyBytes?: number;
    /**
     * How long the upstream may take to answer a call (to its headers), in ms,
     * as the `openai` client's `timeout`. Default 600,000 (10 minutes), the
     * SDK's own. Past it the agent gets 504.
     */
    timeoutMs?: number;
    /**
     * Tries again when the upstream could not be reached at all (refused, reset
     * before any answer): up to this many times, with backoff. Answers the
     * upstream gave (429, 500, ...) go back to the agent as they are, so its
     * own client decides, as it would against the upstream. Default 2.
     */
    maxRetries?: number;
    /** Where the endpoint says what it refused or could not forward. Default `console`. */
    logger?: { warn(message: string): void };
  }

  /**
   * How the recorder builds histories from the token ids a server returns:
   * `"tokens"` (default) splits a history where the tokens diverge, `"text"`
   * keeps turns whose messages match as text in one history, `"off"` checks no
   * tokens (the full rules: `LineageMode` in src/trajectory/lineage.ts).
   */
  export type LineageMode = "tokens" | "text" | "off";

  /**
   * A TrainableModel, or anything shaped like one: its client makes the
   * `openai` client for the service's inference, and `inferenceName()` names
   * the latest checkpoint.
   */
  export interface TrainableModelLike {
    /** The Training Service client the model was registered with. */
    readonly client: {
      /** An `openai` client aimed at the service's inference. */
      createOpenAI(options?: {
        fetch?: typeof fetch;
        maxRetries?: number;
        timeout?: number;
      }): OpenAI;
    };
    /** The inference name of a checkpoint (default: the latest). */
    inferenceName(step?: number): string;
  }

  /** Any OpenAI-compatible server. */
  export interface UrlUpstream {
    /** Its base URL, ending in `/v1` (e.g. `http://127.0.0.1:8000/v1`). */
    baseURL: string;
    /** Its bearer key; never shown to the agent, nor written in a log, an error or a trajectory. */
    apiKey?: string;
    /** The model a request with `model: ""` (or none) gets. Default: sent as the agent sent it. */
    model?: string;
    /**
     * Every completion through it is the policy's, whatever model name the
     * server answers with (as `recorder.wrap(client, { policy: true })`).
     * Default `false`: the recorder's `policy` decides.
     */
    policy?: boolean;
  }

  /**
   * Where the recording endpoint forwards chat completions: a TrainableModel
   * (the Training Service's inference, `model: ""` filled in with its latest
   * checkpoint as `model.openai()` does, every completion the policy's), or any
   * OpenAI-compatible server (the emulator, vLLM, OpenAI).
   */
  export type RecordingUpstream = TrainableModelLike | UrlUpstream;
}
// The same modes as the trajectory folder's, which validates them.
sameType<RecorderOptions.LineageMode, LineageMode>(true);

/** Options of {@link Recorder.rollout} ({@link Recorder.RolloutCallOptions}). */
export type RolloutCallOptions = Recorder.RolloutCallOptions;

/** What `fn` of {@link Recorder.rollout} is given besides its trajectory ({@link Recorder.RolloutContext}). */
export type RolloutContext = Recorder.RolloutContext;

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
  #endpoint: RecordingEndpoint | undefined;

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
    if (options.upstream !== undefined) checkUpstream(call, options.upstream);
    // Checked now, started with the first rollout.
    if (options.upstream !== undefined || options.endpoint !== undefined)
      resolveEndpointOptions(call, options.endpoint);
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
    this.#endpoint ??= new RecordingEndpoint(
      upstream,
      this,
      resolveEndpointOptions("new Recorder(options)", this.options.endpoint),
      extraRoutesOf(this),
    );
    await this.#endpoint.start();
    return this.#endpoint.baseURL;
  }

  /**
   * Stops the recording endpoint, if it was started: its connections close,
   * calls in flight are cut off. A later rollout starts it again.
   */
  async close(): Promise<void> {
    const endpoint = this.#endpoint;
    this.#endpoint = undefined;
    await endpoint?.close();
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
   * Makes `client.chat.completions.create` record inside rollouts; returns the
   * same client. With `{ policy: true }` every completion of this client is
   * the policy's, whatever model name the server answers with.
   */
  wrap<T extends object>(client: T, options?: Recorder.WrapOptions): T {
    return wrapClient(client, options);
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
    const trajectory = new RolloutTrajectory({ metadata: metadata ? { ...metadata } : {} });
    // Whether anyone traces is asked once per rollout: no span (nor
    // OpenTelemetry context) when nobody does, see tracingEnabled().
    const traced = tracingEnabled();
    const state = new RolloutState(
      trajectory,
      {
        logprobs: this.options.logprobs ?? true,
        tokenIds: this.options.tokenIds ?? true,
        recordContent: this.options.recordContent ?? false,
        lineage: (options.lineage as LineageMode | undefined) ?? this.options.lineage ?? "tokens",
        // Read at each call, so a policy added after the rollout began counts.
        isPolicy: (m) => this.#isPolicyOrUnnamed(m),
      },
      traced,
    );
    const span = traced
      ? tracer().startSpan("rollout", { attributes: { "gen_ai.operation.name": "invoke_agent" } })
      : undefined;
    const abort = rolloutAbort(signal, timeout);
    const given: RolloutContext = { signal: abort.signal };
    // A rollout that cannot be aborted adds no listener (NEVER is shared by all).
    const run = () =>
      runInRollout(state, () => fn(trajectory, given), abort.watched ? abort.signal : undefined);
    let key: string | undefined;
    const endpoint =
      this.options.upstream === undefined ? undefined : await this.#startedEndpoint();
    if (endpoint) {
      const open = () => (key ??= endpoint.open(state));
      attachEndpoint(trajectory, {
        baseURL: () => {
          open();
          return endpoint.baseURL;
        },
        apiKey: open,
      });
    }
    try {
      try {
        if (abort.signal.aborted) throw abort.error(trajectory);
        const running = span ? context.with(trace.setSpan(context.active(), span), run) : run();
        if (abort.watched) {
          // Once aborted, how the function ends later is no one's concern.
          running.catch(() => {});
          await Promise.race([running, abort.rejection(trajectory)]);
        } else await running;
      } finally {
        abort.dispose();
        state.end();
        if (key) endpoint?.finish(key);
        if (state.completions === 0 && !abort.signal.aborted) this.#warnEmpty();
      }
      span?.setAttribute("trajectory_recorder.reward", trajectory.reward);
      span?.addEvent("gen_ai.evaluation.result", {
        "gen_ai.evaluation.name": "reward",
        "gen_ai.evaluation.score.value": trajectory.reward,
      });
      return trajectory;
    } catch (error) {
      if (!(error instanceof RolloutAbortedError))
        trajectory.log(`rollout failed: ${errorMessage(error)}`);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
      throw error;
    } finally {
      span?.end();
    }
  }

  async #startedEndpoint(): Promise<RecordingEndpoint> {
    if (!this.#endpoint?.listening) await this.startEndpoint();
    return this.#endpoint as RecordingEndpoint;
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

/** The types {@link Recorder}'s methods take. */
export declare namespace Recorder {
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
  }

  /** What `fn` of {@link Recorder.rollout} is given besides its trajectory. */
  export interface RolloutContext {
    /** Aborts when the rollout is aborted (its `signal`, or its `timeout`): pass it on to your own calls. */
    signal: AbortSignal;
  }

  /** Options of {@link wrapClient}. */
  export interface WrapOptions {
    /**
     * Every completion of this client is the policy's, whatever model name the
     * server answers with (`model.openai({ recorder })` sets it).
     */
    policy?: boolean;
  }
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    isObjectLike(value) &&
    typeof (value as { aborted?: unknown }).aborted === "boolean" &&
    typeof (value as { addEventListener?: unknown }).addEventListener === "function"
  );
}

/** The signal of rollouts given neither a signal nor a timeout: it never aborts. */
const NEVER = new AbortController().signal;

/** The signal a rollout ends on (its own, its timeout's, or both), and the error it then rejects with. */
function rolloutAbort(signal: AbortSignal | undefined, timeout: number | undefined) {
  if (signal === undefined && timeout === undefined)
    return {
      signal: NEVER,
      watched: false,
      error: () => undefined as never,
      rejection: () => undefined as never,
      dispose: () => {},
    };
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) controller.abort(signal.reason);
  const timer =
    timeout === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`timed out after ${timeout} ms`, "TimeoutError"));
        }, timeout);
  const error = (trajectory: Trajectory) => {
    const why = timedOut
      ? `after its timeout of ${timeout} ms`
      : `by its signal${signal?.reason instanceof Error ? ` (${signal.reason.message})` : ""}`;
    const e = new RolloutAbortedError(trajectory, timedOut, why, controller.signal.reason);
    trajectory.log(`rollout aborted ${why}: what it recorded until then is kept`);
    return e;
  };
  return {
    signal: controller.signal,
    watched: true,
    error,
    rejection: (trajectory: Trajectory) =>
      new Promise<never>((_, reject) => {
        if (controller.signal.aborted) reject(error(trajectory));
        else
          controller.signal.addEventListener("abort", () => reject(error(trajectory)), {
            once: true,
          });
      }),
    dispose: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

function checkLineageMode(call: string, field: string, value: unknown): void {
  if (value !== undefined && !LINEAGE_MODES.includes(value as LineageMode))
    throw new InvalidArgumentError(call, field, '"tokens", "text" or "off"', value);
}

function namesPolicy(names: readonly string[]): (model: string) => boolean {
  const set = new Set(names);
  return (model) => set.has(model);
}
