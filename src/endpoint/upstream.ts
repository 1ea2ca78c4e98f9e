// What the recording endpoint forwards to, and the `openai` client it
// forwards through: the same wrapped client (recorder.wrap) an in-process
// agent would use, so a call through `t.baseURL` is recorded by the same code.

import type OpenAI from "openai";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { fillModelName } from "../util/derive-client.js";

/**
 * A TrainableModel, or anything shaped like one: its client makes the
 * `openai` client for the service's inference, and `inferenceName()` names
 * the latest checkpoint.
 */
export interface TrainableModelLike {
  /** The Training Service client the model was registered with. */
  readonly client: {
    /** An `openai` client aimed at the service's inference. */
    createOpenAI(options?: { fetch?: typeof fetch; maxRetries?: number; timeout?: number }): OpenAI;
  };
  /** The inference name of a checkpoint (default: the latest). */
  inferenceName(step?: number): string;
  /** The step a model name of this model serves, when known (a TrainableModel has it). */
  policyVersion?(model: string): number | undefined;
}

/** Any OpenAI-compatible server. */
export interface UrlUpstream {
  /**
   * Its base URL, ending in `/v1` (e.g. `http://127.0.0.1:8000/v1`):
   * `/v1/chat/completions` and `/v1/responses` are sent under it, and
   * Anthropic's `/v1/messages` too (an Anthropic SDK is given it without `/v1`).
   */
  baseURL: string;
  /**
   * Its key: sent as `Authorization: Bearer` (OpenAI's APIs) and as
   * `x-api-key` on `/v1/messages` (Anthropic's). Never shown to the agent,
   * nor written in a log, an error or a trajectory.
   */
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

function isModel(u: RecordingUpstream): u is TrainableModelLike {
  return typeof (u as TrainableModelLike).inferenceName === "function";
}

/** Checks `upstream` before anything listens. */
export function checkUpstream(
  call: string,
  upstream: unknown,
): asserts upstream is RecordingUpstream {
  if (!isObjectLike(upstream))
    throw new InvalidArgumentError(
      call,
      "upstream",
      "a TrainableModel or { baseURL, apiKey? }",
      upstream,
    );
  if (isModel(upstream as unknown as RecordingUpstream)) {
    const client = (upstream as unknown as TrainableModelLike).client;
    if (!isObjectLike(client) || typeof client.createOpenAI !== "function")
      throw new InvalidArgumentError(call, "upstream.client", "a TrainingClient", client);
    return;
  }
  const u = upstream as Partial<UrlUpstream>;
  let ok = false;
  try {
    const url = new URL(String(u.baseURL));
    ok = (url.protocol === "http:" || url.protocol === "https:") && typeof u.baseURL === "string";
  } catch {}
  if (!ok)
    throw new InvalidArgumentError(
      call,
      "upstream.baseURL",
      "the http(s) base URL of an OpenAI-compatible server, ending in /v1",
      u.baseURL,
    );
  for (const key of ["apiKey", "model"] as const)
    if (u[key] !== undefined && typeof u[key] !== "string")
      throw new InvalidArgumentError(call, `upstream.${key}`, "a string", u[key]);
  if (u.policy !== undefined && typeof u.policy !== "boolean")
    throw new InvalidArgumentError(call, "upstream.policy", "a boolean", u.policy);
}

/** The recorder's side of wrapping: `recorder.wrap` and `recorder.addPolicy`. */
export interface Wrapper {
  wrap<T extends object>(client: T, options?: { policy?: boolean }): T;
  addPolicy(test: (model: string) => boolean): void;
  /** Tells the recorder which step a model name serves (a `Recorder` has it). */
  addPolicyVersion?(versionOf: (model: string) => number | undefined): void;
}

/** The wrapped client the endpoint sends through, with the upstream's own base URL and key. */
export interface UpstreamClient {
  openai: OpenAI;
  /** For `/v1/models`, sent without recording. */
  baseURL: string;
  apiKey: string;
  /** The model a call with `model: ""` (or none) gets, when the upstream names one. */
  model?: string;
  /**
   * The wrapped `@anthropic-ai/sdk` client for `/v1/messages`, made on first
   * use (the package is an optional peer): else why it cannot be had.
   */
  anthropic(): Promise<{ client: AnthropicLike } | { missing: string }>;
  /** How `/v1/messages` carries the upstream's key: `x-api-key`, or a bearer token for the Training Service. */
  anthropicAuth: Record<string, string>;
}

/** The part of an `@anthropic-ai/sdk` client the endpoint calls. */
export interface AnthropicLike {
  messages: { create(body: unknown, options?: unknown): unknown };
}

/** How the Anthropic client reaches the upstream: its root URL (the SDK adds `/v1/messages`) and key. */
interface AnthropicTarget {
  root: string;
  /** Sent as `x-api-key` (Anthropic's API), else as `Authorization: Bearer`. */
  apiKey: string | null;
  authToken: string | null;
  policy: boolean;
}

/** A lazily made, wrapped Anthropic client (or why there is none), made once. */
function anthropicMaker(
  target: AnthropicTarget,
  recorder: Wrapper,
  fetchImpl: typeof fetch,
  timeoutMs: number,
): UpstreamClient["anthropic"] {
  let made: Promise<{ client: AnthropicLike } | { missing: string }> | undefined;
  return () => {
    made ??= (async () => {
      let Anthropic: new (options: Record<string, unknown>) => AnthropicLike;
      try {
        // An optional peer: only a proxy that serves /v1/messages needs it.
        const name = "@anthropic-ai/sdk";
        const mod = (await import(name)) as { default: typeof Anthropic };
        Anthropic = mod.default;
      } catch {
        return {
          missing:
            "the optional peer @anthropic-ai/sdk is not installed beside trajectory-recorder (npm install @anthropic-ai/sdk)",
        };
      }
      // Every option given, so nothing is read from this process's
      // environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL).
      const client = new Anthropic({
        baseURL: target.root,
        apiKey: target.apiKey,
        authToken: target.authToken,
        fetch: fetchImpl,
        maxRetries: 0,
        timeout: timeoutMs,
      });
      try {
        return { client: recorder.wrap(client, target.policy ? { policy: true } : {}) };
      } catch (error) {
        return {
          missing: `the recorder cannot record an @anthropic-ai/sdk client (${String((error as Error)?.message ?? error)})`,
        };
      }
    })();
    return made;
  };
}

/** A base URL ending in `/v1`, without it: what the Anthropic SDKs take. */
function rootOf(baseURL: string): string {
  return baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/**
 * The wrapped `openai` client that sends through `fetchImpl`, with no
 * retries of its own (the endpoint's fetch retries what is safe) and
 * `timeoutMs` as its deadline.
 */
export async function upstreamClient(
  upstream: RecordingUpstream,
  recorder: Wrapper,
  fetchImpl: typeof fetch,
  timeoutMs: number,
): Promise<UpstreamClient> {
  if (isModel(upstream)) {
    const openai = upstream.client.createOpenAI({
      fetch: fetchImpl,
      maxRetries: 0,
      timeout: timeoutMs,
    });
    // As model.openai({ recorder }): an empty model is the latest checkpoint,
    // and every completion of this model (any step) is the policy's.
    fillModelName(openai, upstream.inferenceName());
    const base = upstream.inferenceName();
    recorder.addPolicy((m) => m === base || m.startsWith(`${base}:`));
    if (typeof upstream.policyVersion === "function")
      recorder.addPolicyVersion?.((m) => upstream.policyVersion?.(m));
    const apiKey = String(openai.apiKey);
    return {
      openai: recorder.wrap(openai, { policy: true }),
      baseURL: openai.baseURL,
      apiKey,
      model: base,
      // The service takes its key as a bearer token, on every route.
      anthropicAuth: { authorization: `Bearer ${apiKey}` },
      anthropic: anthropicMaker(
        { root: rootOf(openai.baseURL), apiKey: null, authToken: apiKey, policy: true },
        recorder,
        fetchImpl,
        timeoutMs,
      ),
    };
  }
  const { default: OpenAIClass } = await import("openai");
  const apiKey = upstream.apiKey ?? "none";
  const openai = new OpenAIClass({
    baseURL: upstream.baseURL.replace(/\/+$/, ""),
    apiKey,
    fetch: fetchImpl,
    maxRetries: 0,
    timeout: timeoutMs,
  });
  if (upstream.model) fillModelName(openai, upstream.model);
  return {
    openai: recorder.wrap(openai, upstream.policy ? { policy: true } : {}),
    baseURL: openai.baseURL,
    apiKey,
    ...(upstream.model ? { model: upstream.model } : {}),
    // Anthropic's API (and servers that speak it) take the key as x-api-key.
    anthropicAuth: { "x-api-key": apiKey },
    anthropic: anthropicMaker(
      {
        root: rootOf(upstream.baseURL),
        apiKey,
        authToken: null,
        policy: upstream.policy === true,
      },
      recorder,
      fetchImpl,
      timeoutMs,
    ),
  };
}
