// Following a training job's events until it ends, as ART's client does:
// poll every second, page through `has_more`, advance the cursor on each
// gradient step, stop at the terminal event.
import type { Span } from "@opentelemetry/api";
import {
  abortableSleep,
  type BackoffOptions,
  isRetryableError,
  retryDelay,
  type TrainingClient,
} from "../client/index.js";
import { recordGradientStepEvent } from "../telemetry/index.js";
import type { TrainingJobEvent } from "../wire/index.js";
import { TrainingFailedError } from "./errors.js";
import { ART_GRADIENT_STEPS_KEY, artMetricName } from "./metric-names.js";

/** Progress of a job, as given to `onEvent`. */
export interface TrainingProgress {
  /** The event's type. */
  type: TrainingJobEvent["type"];
  /** The job being followed. */
  jobId: string;
  /** The event's `data`, as the service sent it. */
  data: Record<string, unknown>;
  /** Gradient steps seen so far. */
  gradientSteps: number;
  /** Total announced by `training_started` (`num_sequences`), 0 until then. */
  totalSteps: number;
}

/** Options of following a job. */
export interface FollowOptions {
  /** Called once per event, in order. */
  onEvent?: ((progress: TrainingProgress) => void) | undefined;
  /** Stops following (the job itself keeps running on the service). */
  signal?: AbortSignal | undefined;
  /** Wait before each poll, in ms. Default 1000, as ART. */
  pollIntervalMs?: number | undefined;
  /** Consecutive failed polls tolerated (retryable errors only). Default 8. */
  maxPollFailures?: number | undefined;
  /** Backoff after a failed poll (the client's `retryDelay`). Default 500 ms doubling to 8 s. */
  backoff?: BackoffOptions | undefined;
  /** `"SFT"` changes the failure message. */
  kind?: "RL" | "SFT";
  /** The span that receives a `gradient_step` event per step. */
  span?: Span | undefined;
  /** Metrics added to every step's, as ART adds its batch summary (`data/step_num_trajectories`). */
  baseMetrics?: Record<string, number> | undefined;
}

/** What a finished job produced. */
export interface FollowResult {
  /**
   * Mean of each metric over the gradient steps, under the names ART reports
   * (`loss/train`, `loss/grad_norm`, `data/step_trainer_tokens`, ...; see
   * `ART_METRIC_NAMES` in `trajectory-recorder/wire`), plus `data/step_num_gradient_steps`.
   */
  metrics: Record<string, number>;
  /** The same means under the service's own keys, plus `num_gradient_steps`. */
  rawMetrics: Record<string, number>;
  /** Gradient steps the job reported (what `metrics` was averaged over). */
  gradientSteps: number;
}

/**
 * Follows a job's events until `training_ended` (resolves) or `training_failed`
 * (rejects with {@link TrainingFailedError}).
 *
 * @example
 * const { metrics } = await followTrainingJob(client, job.id, { onEvent: (p) => console.log(p.type) });
 */
export async function followTrainingJob(
  client: TrainingClient,
  jobId: string,
  options: FollowOptions = {},
): Promise<FollowResult> {
  const interval = options.pollIntervalMs ?? 1000;
  const maxFailures = options.maxPollFailures ?? 8;
  const seen = new Set<string>();
  const sums = new Map<string, { total: number; count: number }>();
  const named = new Map<string, { total: number; count: number }>();
  let after: string | undefined;
  let total = 0;
  let steps = 0;
  let failures = 0;

  const emit = (event: TrainingJobEvent) => {
    options.onEvent?.({
      type: event.type,
      jobId,
      data: event.data,
      gradientSteps: steps,
      totalSteps: total,
    });
  };

  for (;;) {
    await abortableSleep(interval, options.signal);
    try {
      const params = after === undefined ? {} : { after };
      for await (const event of client.trainingJobs.events.list(jobId, params, {
        signal: options.signal,
      })) {
        // ART leaves the cursor before the first gradient step, so
        // `training_started` comes back on every poll until then.
        if (seen.has(event.id)) continue;
        seen.add(event.id);
        if (event.type === "training_started") {
          const n = Number(event.data.num_sequences ?? 0);
          total = Number.isFinite(n) ? n : 0;
          emit(event);
        } else if (event.type === "gradient_step") {
          steps += 1;
          addMetrics(sums, event.data);
          addMetrics(named, { ...options.baseMetrics, ...renamed(event.data) });
          options.span && recordGradientStepEvent(options.span, steps, event.data);
          emit(event);
          after = event.id;
        } else if (event.type === "training_ended") {
          emit(event);
          const gradientSteps = total || steps;
          const rawMetrics = averages(sums);
          rawMetrics.num_gradient_steps = gradientSteps;
          const metrics = averages(named);
          metrics[ART_GRADIENT_STEPS_KEY] = gradientSteps;
          return { metrics, rawMetrics, gradientSteps: steps };
        } else if (event.type === "training_failed") {
          emit(event);
          const message =
            typeof event.data.error_message === "string" && event.data.error_message !== ""
              ? event.data.error_message
              : "Training failed with an unknown error";
          throw new TrainingFailedError(jobId, message, options.kind ?? "RL");
        }
      }
      failures = 0;
    } catch (error) {
      // An abort ends following with the signal's reason, whether it came
      // between polls or cut a poll short (the client then throws its own
      // APIUserAbortError): the caller sees the same error either way.
      if (options.signal?.aborted && !(error instanceof TrainingFailedError))
        throw options.signal.reason;
      if (error instanceof TrainingFailedError || !isRetryableError(error)) throw error;
      failures += 1;
      if (failures > maxFailures) throw error;
      const headers = (error as { headers?: Headers }).headers;
      await abortableSleep(
        retryDelay(failures - 1, { ...options.backoff, headers }),
        options.signal,
      );
    }
  }
}

function addMetrics(
  sums: Map<string, { total: number; count: number }>,
  data: Record<string, unknown>,
) {
  for (const [key, value] of Object.entries(data)) {
    if (key === "num_gradient_steps") continue;
    const n = typeof value === "boolean" ? Number(value) : value;
    if (typeof n !== "number" || !Number.isFinite(n)) continue;
    const entry = sums.get(key) ?? { total: 0, count: 0 };
    entry.total += n;
    entry.count += 1;
    sums.set(key, entry);
  }
}

function averages(sums: Map<string, { total: number; count: number }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, { total, count }] of sums) out[key] = total / count;
  return out;
}

// One step's data under ART's names; when two keys meet (`loss`, `policy_loss`), the later wins, as in ART.
function renamed(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === "num_gradient_steps") continue;
    const name = artMetricName(key);
    if (name !== undefined) out[name] = value;
  }
  return out;
}
