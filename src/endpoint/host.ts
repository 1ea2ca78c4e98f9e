// What the endpoint needs from the recorder, as shapes: it never imports the
// recorder (the recorder starts an endpoint for `t.baseURL`, so an import
// back would be a cycle). `Recorder` and its `RolloutHandle` fit these.

/** A rollout (or a session) held open, that calls can be recorded into. */
export interface EndpointRollout {
  /** The trajectory's receipt id. */
  readonly id: string;
  /** The session it records, or null. */
  readonly session: string | null;
  /** Whether it has been finished (calls then answer 409). */
  readonly ended: boolean;
  /** Calls started so far (the number of the latest). */
  readonly calls: number;
  /** The trajectory, readable at any time. */
  readonly trajectory: { toJSON(): object };
  /** Resolves once what it recorded is written to the store (optional: a rollout without one). */
  saved?(): Promise<void>;
  /** Runs `fn` inside the rollout: what a wrapped client calls there records here. */
  run<T>(fn: () => T, signal?: AbortSignal): Promise<Awaited<T>>;
}

/** Options of a session a host opens. */
export interface SessionOpenOptions {
  metadata?: Record<string, unknown>;
}

/** The recorder, as the endpoint uses it. */
export interface RolloutHost {
  wrap<T extends object>(client: T, options?: { policy?: boolean }): T;
  addPolicy(test: (model: string) => boolean): void;
  /**
   * The recorder's options, where it has them: whether it asks for logprobs
   * on every call (`logprobs`, default true) decides how an answer is read.
   */
  readonly options?: { readonly logprobs?: boolean | undefined };
  /** The open session `id`, opened now if it is not open. */
  session?(id: string, options?: SessionOpenOptions): EndpointRollout;
}

/**
 * A call's progress while its answer streams in, for the store: what the
 * answer holds so far (written at most a few times a second).
 */
export interface CallProgress {
  progressCall?(
    id: string,
    call: number,
    partial: { content: string; reasoning?: string; tool_calls?: unknown[] },
  ): void | Promise<void>;
}
