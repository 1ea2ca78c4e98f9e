// The options and results of a TrainableModel: registering it, following a
// job, and what a finished job produced.
import type { TrainingProgress } from "./follow.js";

/** What {@link TrainableModel.register} needs. */
export interface RegisterOptions {
  /** The project the model belongs to (created when missing). */
  project: string;
  /** The model's name, unique in its project; registering it again returns the same model. */
  name: string;
  /** The base model to fine-tune, e.g. `OpenPipe/Qwen3-14B-Instruct`. */
  baseModel: string;
  /** Team or user; default: the owner of the API key. */
  entity?: string | null;
}

/** Anything that wraps an `openai` client to record its calls (a `Recorder`). */
export interface OpenAIWrapper {
  /** Returns `client` with its calls recorded; `policy: true` marks its models as the policy's. */
  wrap<T extends object>(client: T, options?: { policy?: boolean }): T;
  /** Marks a model as the policy being trained (a `Recorder` has it). */
  addPolicy?(test: (model: string) => boolean): void;
  /** Tells it which step a model name serves, for the policy versions (a `Recorder` has it). */
  addPolicyVersion?(versionOf: (model: string) => number | undefined): void;
}

/** Options of following a job from `train` / `trainSft`. */
export interface TrainRunOptions {
  /** Called for every event of the job, in order. */
  onEvent?: (progress: TrainingProgress) => void;
  /** Stops following the job (it keeps running on the service). */
  signal?: AbortSignal;
  /** Wait before each events poll (and between checkpoint polls), in ms. Default 1000. */
  pollIntervalMs?: number;
  /**
   * How long to wait, after `training_ended`, for the job's checkpoint to be
   * listed (a step newer than the one before the job), in ms; past it,
   * `CheckpointTimeoutError`. Default 60000.
   */
  checkpointTimeoutMs?: number;
  /**
   * Called once the service answered with the new job's id, before following
   * it; awaited, so the id can be saved (the shipper does) and the job resumed
   * with `followJob` after a crash. If it throws, following stops with that
   * error; the job keeps running on the service.
   */
  onJobCreated?: (job: CreatedJob) => void | Promise<void>;
}

/** A job just created, as given to `onJobCreated`. */
export interface CreatedJob {
  /** The new job's id: keep it to `followJob` after a restart. */
  jobId: string;
  /** The model's latest step before the job: `followJob` waits for a newer one. */
  stepBefore: number;
}

/** What a finished training job produced. */
export interface TrainResult {
  /** The job's id; `null` when `train` created no job (see `skipped`). */
  jobId: string | null;
  /** The model's latest step once the job ended (the current step when skipped). */
  step: number;
  /**
   * Each metric averaged over the gradient steps, under ART's names
   * (`loss/train`, `loss/grad_norm`, ..., `data/step_num_gradient_steps`); from `train`,
   * also ART's batch summary where the service did not report it
   * (`data/step_num_scenarios`, `data/step_num_trajectories`,
   * `data/step_num_groups_submitted`, `data/step_num_groups_trainable`: the
   * groups handed in, rollouts that failed counted as trajectories, trainable
   * = rewards that differ) and `time/step_backend_train_s` (the call's wall
   * seconds); `{}` when skipped.
   */
  metrics: Record<string, number>;
  /** The same under the service's raw keys (`loss`, `grad_norm`, ..., `num_gradient_steps`). */
  rawMetrics: Record<string, number>;
  /**
   * Groups `train` left out because their rewards are all equal (no reward
   * signal: every advantage is zero); see {@link NoSignalPolicy}.
   */
  noSignalGroups?: number;
  /**
   * Groups `train` dropped as sampled more than `maxStepsOffPolicy` steps
   * before the checkpoint being trained (absent when none were).
   */
  staleGroups?: number;
  /**
   * Trajectories `train` left out because they are marked as infrastructure
   * failures (`metadata.infra_failure`): logged under `train` with
   * `metadata.left_out = "infra_failure"`, never trained on, and counted in
   * `metrics["data/step_num_infra_failures"]`. Absent when there were none.
   */
  infraFailures?: number;
  /**
   * Why no job was created: `"no_reward_signal"` when every group's rewards
   * were equal, so nothing was left to learn from; `"stale_policy"` when
   * every group was too far off-policy (`maxStepsOffPolicy`);
   * `"infra_failures"` when every trajectory was an infrastructure failure.
   * The loop goes on.
   */
  skipped?: "no_reward_signal" | "stale_policy" | "infra_failures";
}

/**
 * What `train` (and the shipper's `trainEvery`) does with a group whose
 * rewards are all equal. `"skip"` (default): leave it out, as ART's trainer
 * does (its advantages are all zero), and create no job when nothing is
 * left. `"send"`: send it anyway (for an advantage scheme of your own).
 */
export type NoSignalPolicy = "skip" | "send";
