import OpenAI from "openai";
import { z } from "zod";
import {
  type HealthResponse,
  HealthResponseSchema,
  type SystemCheckResponse,
  SystemCheckResponseSchema,
} from "../wire/index.js";
import type { APIPromise } from "./api-promise.js";
import { buildResource, RequestCore, type RequestOptions } from "./core.js";
import { InvalidBaseURLError, MissingAPIKeyError, RequestValidationError } from "./errors.js";
import { Chat, serviceErrorFetch } from "./resources/chat.js";
import { Models } from "./resources/models.js";
import { SFTTrainingJobs, TrainingJobs } from "./resources/training-jobs.js";
import { USER_AGENT } from "./version.js";

/** The service's public address, used when neither option nor env gives one. */
export const DEFAULT_BASE_URL = "https://api.training.wandb.ai/v1";

/** Options of {@link TrainingClient}. */
export interface TrainingClientOptions {
  /** API key sent as a bearer token. Default: `process.env.WANDB_API_KEY`. Required. */
  apiKey?: string | undefined;
  /**
   * Base URL ending in `/v1`. Default: `process.env.TRAINING_SERVICE_BASE_URL`,
   * then `https://api.training.wandb.ai/v1`.
   */
  baseURL?: string | undefined;
  /** Timeout of one attempt, in ms. Default 120000. */
  timeout?: number | undefined;
  /** Retries of a failed request that is safe to repeat. Default 2. */
  maxRetries?: number | undefined;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch | undefined;
  /** Headers added to every request. */
  defaultHeaders?: Record<string, string> | undefined;
}

/** Options of {@link TrainingClient.createOpenAI}: the `openai` constructor's, minus key and URL. */
export type CreateOpenAIOptions = Omit<
  NonNullable<ConstructorParameters<typeof OpenAI>[0]>,
  "apiKey" | "baseURL"
>;

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_RETRIES = 2;

const OptionsSchema = z.object(
  {
    apiKey: z.string().optional(),
    // Its form is checked by checkBaseURL, which also covers the environment variable.
    baseURL: z.string().optional(),
    timeout: z.number().positive().optional(),
    maxRetries: z.number().int().min(0).optional(),
    fetch: z
      .custom<typeof fetch>((v) => typeof v === "function", { error: "expected a function" })
      .optional(),
    defaultHeaders: z.record(z.string(), z.string()).optional(),
  },
  { error: "expected an options object" },
);

/** Characters a header value may hold: tab, printable ASCII and Latin-1. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Typed client of the Training Service: models, checkpoints, RL and SFT
 * training jobs, chat completions, health. Each call validates its arguments,
 * then returns an {@link APIPromise}. The API key is kept in a private field
 * and never appears in errors, logs or `JSON.stringify(client)`.
 *
 * @example
 * import { TrainingClient } from "trajectory-recorder";
 * const client = new TrainingClient(); // WANDB_API_KEY from the environment
 * const model = await client.models.create({ project: "demo", name: "agent-001", base_model: "Qwen/Qwen3-4B", return_existing: true });
 */
export class TrainingClient {
  /** The base URL every path is appended to. */
  readonly baseURL: string;
  /** Milliseconds a request may take before it is aborted (and maybe retried). */
  readonly timeout: number;
  /** How many times a request that may be retried is retried. */
  readonly maxRetries: number;
  /** Models: create, list, log groups; their checkpoints. */
  readonly models: Models;
  /** RL training jobs and their events. */
  readonly trainingJobs: TrainingJobs;
  /** SFT training jobs. */
  readonly sftTrainingJobs: SFTTrainingJobs;
  /** Inference on trained checkpoints (OpenAI-compatible). */
  readonly chat: Chat;

  readonly #apiKey: string;
  readonly #core: RequestCore;
  readonly #fetch: typeof fetch | undefined;
  readonly #defaultHeaders: Record<string, string>;
  #openai: OpenAI | undefined;

  constructor(options: TrainingClientOptions = {}) {
    const checked = OptionsSchema.safeParse(options);
    if (!checked.success) throw new RequestValidationError("new TrainingClient", checked.error);
    const apiKey = options.apiKey ?? readEnv("WANDB_API_KEY");
    if (!apiKey) throw new MissingAPIKeyError();
    if (!HEADER_VALUE.test(apiKey)) {
      // Said without the key or any part of it: this message may reach a log.
      throw RequestValidationError.at(
        "new TrainingClient",
        [options.apiKey === undefined ? "WANDB_API_KEY" : "apiKey"],
        "the API key holds a character an HTTP header cannot carry (a line break, NUL, another control character or one above U+00FF); check how the key was copied",
      );
    }
    this.#apiKey = apiKey;
    this.baseURL = checkBaseURL(
      options.baseURL ?? readEnv("TRAINING_SERVICE_BASE_URL") ?? DEFAULT_BASE_URL,
    );
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#fetch = options.fetch;
    this.#defaultHeaders = { ...options.defaultHeaders };
    this.#core = new RequestCore(apiKey, {
      baseURL: this.baseURL,
      timeout: this.timeout,
      maxRetries: this.maxRetries,
      fetch: options.fetch,
      defaultHeaders: this.#defaultHeaders,
      userAgent: USER_AGENT,
    });
    this.models = buildResource(Models, this.#core);
    this.trainingJobs = buildResource(TrainingJobs, this.#core);
    this.sftTrainingJobs = buildResource(SFTTrainingJobs, this.#core);
    this.chat = new Chat(() => {
      this.#openai ??= this.createOpenAI();
      return this.#openai;
    });
  }

  /**
   * An `openai` client aimed at the service (same key, base URL, timeout,
   * retries and headers), whose errors carry the service's `detail`.
   *
   * @example
   * const openai = client.createOpenAI();
   * await openai.chat.completions.create({ model, messages });
   */
  createOpenAI(options: CreateOpenAIOptions = {}): OpenAI {
    return new OpenAI({
      timeout: this.timeout,
      maxRetries: this.maxRetries,
      ...options,
      defaultHeaders: { ...this.#defaultHeaders, ...options.defaultHeaders },
      apiKey: this.#apiKey,
      baseURL: this.baseURL,
      fetch: serviceErrorFetch(options.fetch ?? this.#fetch, {
        apiKey: this.#apiKey,
        baseURL: this.baseURL,
      }),
    });
  }

  /**
   * `GET /v1/health`.
   *
   * @example
   * await client.health();
   */
  health(options?: RequestOptions): APIPromise<TrainingClient.HealthResponse> {
    return this.#core.request({
      operation: "health",
      method: "GET",
      path: "/health",
      responseSchema: HealthResponseSchema,
      options,
      safeToRetry: true,
    });
  }

  /**
   * `GET /v1/system-check`; a failed check answers 503 (an `InternalServerError`).
   *
   * @example
   * const report = await client.systemCheck({ maxRetries: 0 });
   */
  systemCheck(options?: RequestOptions): APIPromise<TrainingClient.SystemCheckResponse> {
    return this.#core.request({
      operation: "systemCheck",
      method: "GET",
      path: "/system-check",
      responseSchema: SystemCheckResponseSchema,
      options,
      safeToRetry: true,
    });
  }

  /** What `JSON.stringify` writes: the settings, never the API key. */
  toJSON(): Record<string, unknown> {
    return { baseURL: this.baseURL, timeout: this.timeout, maxRetries: this.maxRetries };
  }
}

/**
 * The response types of {@link TrainingClient}'s own calls; each resource's
 * request and response types are in its own namespace (`Models.ModelCreateParams`,
 * `Checkpoints.CheckpointListParams`, `TrainingJobs.TrainingJobCreateParams`, ...).
 */
export declare namespace TrainingClient {
  export type { HealthResponse, SystemCheckResponse };
}
// Each one exactly the type of its schema in the wire folder.

/** Fails at construction, not at the first call, on a URL fetch cannot use. */
function checkBaseURL(value: string): string {
  const trimmed = String(value).replace(/\/+$/, "");
  let url: URL | undefined;
  try {
    url = new URL(trimmed);
  } catch {}
  // `localhost:8000/v1` parses, with "localhost:" as its scheme.
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new InvalidBaseURLError(trimmed);
  }
  return trimmed;
}

function readEnv(name: string): string | undefined {
  const value = typeof process === "undefined" ? undefined : process.env[name];
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
