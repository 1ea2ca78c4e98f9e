import { randomUUID } from "node:crypto";
import type OpenAI from "openai";
import {
  createPreparedJob,
  inferenceModelName,
  logPreparedGroups,
  type TrainingClient,
} from "../client/index.js";
import { withTrainingSpan } from "../telemetry/index.js";
import { type GroupInput, stepOfModelName, type ValidateOptions } from "../trajectory/index.js";
import { keepClassName } from "../util/class-name.js";
import { fillModelName } from "../util/derive-client.js";
import { InvalidTrainingOptionsError } from "../util/training-options-error.js";
import { type Checkpoint, sameType } from "../wire/index.js";
import { withSummary } from "./batch-summary.js";
import { waitForCheckpoint } from "./checkpoint-wait.js";
import { type SftConfig, type TrainConfig, toExperimentalConfig, toSftConfig } from "./config.js";
import { type FollowOptions, followTrainingJob } from "./follow.js";
import {
  INFRA_FAILURES_METRIC,
  LEFT_OUT_INFRA_FAILURE,
  splitInfraFailures,
} from "./infra-split.js";
import { LEFT_OUT_KEY, LEFT_OUT_NO_SIGNAL, markLeftOut } from "./left-out.js";
import { checkpointsToKeep } from "./model-checkpoints.js";
import { checkedForLog, checkedForTrain } from "./model-groups.js";
import type {
  NoSignalPolicy,
  OpenAIWrapper,
  RegisterOptions,
  TrainResult,
  TrainRunOptions,
} from "./model-options.js";
import {
  anyVersioned,
  DEFAULT_MAX_STEPS_OFF_POLICY,
  maxStepsOffPolicyProblem,
  STALE_GROUPS_METRIC,
  staleIndexes,
} from "./off-policy.js";
import { type SftExample, toSftJsonl } from "./sft-data.js";
import type { ArtifactUploader } from "./uploaders.js";
import { defaultSftUploader } from "./wandb/index.js";

// The options and results are declared in model-options.ts; NoSignalPolicy is
// also named here, where train-every.ts takes it from.
export type { NoSignalPolicy } from "./model-options.js";

/** Where the library's informational lines go by default: stderr, leaving stdout to the program. */
const STDERR_INFO = { info: (message: string) => console.error(message) };

/**
 * A model on the Training Service that trains from trajectory groups (RL) or
 * conversations (SFT), and serves its latest checkpoint for chat completions.
 *
 * @example
 * const model = await TrainableModel.register(client, { project: "demo", name: "agent-001", baseModel: "Qwen/Qwen3-4B" });
 * const openai = model.openai({ recorder });
 * const { step, metrics } = await model.train(groups, { learningRate: 1e-5 });
 */
export class TrainableModel {
  /** The client its requests go through. */
  readonly client: TrainingClient;
  /** The model's id on the service. */
  readonly id: string;
  /** The team or user that owns it. */
  readonly entity: string;
  /** Its project. */
  readonly project: string;
  /** Its name in the project. */
  readonly name: string;
  /** The base model it fine-tunes. */
  readonly baseModel: string;
  /** The W&B run its training logs to, when the service reports one. */
  readonly runId: string | null;
  /** The newest step this object has seen (getStep, train, followJob): what "latest" served last. */
  #knownStep: number | undefined;
  /** `policyVersion`, bound once: a recorder given it again keeps one copy. */
  readonly #versionOf = (model: string) => this.policyVersion(model);

  private constructor(
    client: TrainingClient,
    fields: Omit<TrainableModel, "client" | keyof TrainableModelMethods>,
  ) {
    this.client = client;
    this.id = fields.id;
    this.entity = fields.entity;
    this.project = fields.project;
    this.name = fields.name;
    this.baseModel = fields.baseModel;
    this.runId = fields.runId;
  }

  /**
   * Registers the model, or returns the existing one of the same name.
   *
   * @example
   * const model = await TrainableModel.register(client, { project: "demo", name: "agent-001", baseModel: "Qwen/Qwen3-4B" });
   */
  static async register(client: TrainingClient, options: RegisterOptions): Promise<TrainableModel> {
    const problems: string[] = [];
    for (const key of ["project", "name", "baseModel"] as const) {
      if (typeof options?.[key] !== "string" || options[key] === "") {
        problems.push(`${key}: expected a non-empty string`);
      }
    }
    if (problems.length > 0)
      throw new InvalidTrainingOptionsError("TrainableModel.register", problems);
    const created = await client.models.create({
      entity: options.entity ?? null,
      project: options.project,
      name: options.name,
      base_model: options.baseModel,
      return_existing: true,
    });
    return new TrainableModel(client, {
      id: created.id,
      entity: created.entity,
      project: created.project ?? options.project,
      name: created.name ?? options.name,
      baseModel: created.base_model ?? options.baseModel,
      runId: created.run_id ?? null,
    });
  }

  /**
   * The `model` string of chat completions: the latest checkpoint, or `step`.
   *
   * @example
   * model.inferenceName(3); // "wandb-artifact:///me/demo/agent-001:step3"
   */
  inferenceName(step?: number): string {
    return inferenceModelName({
      entity: this.entity,
      project: this.project,
      name: this.name,
      step,
    });
  }

  /**
   * The training step of the checkpoint a model name of this model serves,
   * recorded as a trajectory's policy version: the step a pinned name holds
   * (`...:step3`), and for the latest checkpoint the newest step this object
   * has seen (from `getStep`, `train`, `followJob`, `trainSft`); `undefined`
   * before it has seen one, and for other models' names. A process that
   * never trains should call `getStep()` when the step may have moved, or pin
   * the step (`model.openai({ step })`).
   *
   * @example
   * await model.getStep(); // 2
   * model.policyVersion(model.inferenceName()); // 2
   * model.policyVersion(model.inferenceName(1)); // 1
   */
  policyVersion(model: string): number | undefined {
    const base = this.inferenceName();
    if (model === base) return this.#knownStep;
    return model.startsWith(`${base}:`) ? stepOfModelName(model) : undefined;
  }

  #sawStep(step: number): number {
    if (this.#knownStep === undefined || step > this.#knownStep) this.#knownStep = step;
    return step;
  }

  /**
   * An `openai` client for this model's chat completions. Requests whose
   * `model` is empty get this model's name (latest checkpoint, or the pinned
   * `step`), Responses API requests too; with `recorder`, the client is
   * wrapped so every call is recorded (Responses turns as plain messages: see
   * docs/responses-messages.md).
   *
   * @example
   * const openai = model.openai({ recorder });
   * await openai.chat.completions.create({ model: "", messages, logprobs: true });
   */
  openai(options: { recorder?: TrainableModel.OpenAIWrapper; step?: number } = {}): OpenAI {
    const name = this.inferenceName(options.step);
    const openai = this.client.createOpenAI();
    fillModelName(openai, name);
    if (!options.recorder) return openai;
    // This model's completions (any step) are the policy's, whatever else the recorder records.
    const base = this.inferenceName();
    options.recorder.addPolicy?.((m) => m === base || m.startsWith(`${base}:`));
    // Each turn records the checkpoint that sampled it (its policy version).
    options.recorder.addPolicyVersion?.(this.#versionOf);
    return options.recorder.wrap(openai, { policy: true });
  }

  /**
   * Trains on `groups` (RL): creates the job, follows its events, and returns
   * the new step and the metrics averaged over the gradient steps. Throws
   * `TrainingFailedError` with the service's message when the job fails.
   *
   * @example
   * const { step, metrics } = await model.train(groups, { learningRate: 1e-5 }, { onEvent: (p) => console.log(p.type) });
   */
  async train(
    groups: readonly GroupInput[],
    config?: TrainConfig,
    options: TrainRunOptions & {
      validate?: TrainableModel.GroupCheck;
      /** Groups whose rewards are all equal: `"skip"` (default) or `"send"`. */
      noSignal?: NoSignalPolicy;
      /** Where the line about groups left out goes. Default: stderr (as `console.error`), never stdout, which is the program's own. */
      logger?: { info(message: string): void };
      /**
       * How many steps behind the checkpoint being trained a group may have
       * been sampled (its oldest trajectory's `initial_policy_version`);
       * older groups are dropped before the job, logged and counted
       * (`staleGroups`, the step metric `data/step_num_groups_stale`). A
       * trajectory without a version is never dropped. Default 4, as ART's
       * pipeline trainer; `Infinity` keeps every group.
       */
      maxStepsOffPolicy?: number;
    } = {},
  ): Promise<TrainResult> {
    const started = performance.now();
    const experimental_config = toExperimentalConfig(config, "train");
    const policy = options.noSignal ?? "skip";
    if (policy !== "skip" && policy !== "send")
      throw new InvalidTrainingOptionsError("train", [
        `noSignal: expected "skip" or "send", got ${JSON.stringify(policy)}`,
      ]);
    const offPolicyProblem = maxStepsOffPolicyProblem(options.maxStepsOffPolicy);
    if (offPolicyProblem)
      throw new InvalidTrainingOptionsError("train", [`maxStepsOffPolicy: ${offPolicyProblem}`]);
    const logger = options.logger ?? STDERR_INFO;
    // Asked to train without logprobs, the service learns from other turns too.
    const refuseUntrainable = config?.allowTrainingWithoutLogprobs !== true;
    // Groups the shipper prepared are sent as the bytes they already are
    // (checked when the shipper took them); others are written and checked
    // once here, and those bytes are sent.
    const checked = await checkedForTrain(groups, options.validate, refuseUntrainable);
    let prepared = checked.prepared;
    let signals = checked.signals;
    // Groups sampled too far behind the checkpoint being trained are dropped
    // first: the step is asked for only when some group carries a version.
    const maxOff = options.maxStepsOffPolicy ?? DEFAULT_MAX_STEPS_OFF_POLICY;
    let knownStep: number | undefined;
    let staleGroups = 0;
    if (maxOff !== Number.POSITIVE_INFINITY && anyVersioned(checked.sources)) {
      knownStep = await this.getStep({ signal: options.signal });
      const stale = new Set(staleIndexes(checked.sources, knownStep, maxOff));
      if (stale.size > 0) {
        const total = prepared.length;
        prepared = prepared.filter((_, i) => !stale.has(i));
        signals = signals.filter((_, i) => !stale.has(i));
        staleGroups = stale.size;
        const kept =
          prepared.length === 0
            ? `no job was created; the model stays at step ${knownStep}`
            : `training on ${prepared.length}`;
        logger.info(
          `train: dropped ${staleGroups} of ${total} group(s) sampled more than ${maxOff} step(s) before the checkpoint being trained (step ${knownStep}): too far off-policy (maxStepsOffPolicy: ${maxOff}; Infinity keeps them); ${kept}.`,
        );
        if (prepared.length === 0)
          return {
            jobId: null,
            step: knownStep,
            metrics: { [STALE_GROUPS_METRIC]: staleGroups },
            rawMetrics: {},
            noSignalGroups: 0,
            staleGroups,
            skipped: "stale_policy",
          };
      }
    }
    // Rollouts the infrastructure failed are not trained on (as zeros or at
    // all): taken out of their groups and logged under "train", marked.
    const infra = await splitInfraFailures(prepared, "train");
    signals = signals.filter((_, i) => infra.kept[i] !== undefined);
    prepared = infra.kept.filter((g) => g !== undefined);
    const infraFailures = infra.count;
    if (infraFailures > 0) {
      await logPreparedGroups(this.client.models, this.id, "train", infra.leftOut, {
        signal: options.signal,
      });
      logger.info(
        `train: left out ${infraFailures} trajectory(ies) marked as infrastructure failures (metadata.infra_failure), logged under "train" with metadata.${LEFT_OUT_KEY} = "${LEFT_OUT_INFRA_FAILURE}".`,
      );
      if (prepared.length === 0) {
        const step = knownStep ?? (await this.getStep({ signal: options.signal }));
        logger.info(
          `train: no trajectory is left to train on, so no job was created; the model stays at step ${step}.`,
        );
        return {
          jobId: null,
          step,
          metrics: {},
          rawMetrics: {},
          infraFailures,
          ...(staleGroups > 0 ? { staleGroups } : {}),
          skipped: "infra_failures",
        };
      }
    }
    // Groups whose rewards are all equal teach nothing (every advantage is
    // zero): left out, as ART's trainer does, checked first so that every
    // finding names the caller's own index.
    let noSignalGroups = 0;
    if (policy === "skip") {
      const total = prepared.length;
      const leftOut = prepared.filter((_, i) => signals[i] === false);
      prepared = prepared.filter((_, i) => signals[i] !== false);
      noSignalGroups = leftOut.length;
      // Still rollouts of this step: logged under "train" (marked), before
      // the job, so the step's history and curves count every rollout.
      if (leftOut.length > 0) await this.#logLeftOut(leftOut, options.signal);
      if (noSignalGroups > 0 && prepared.length === 0) {
        const step = knownStep ?? (await this.getStep({ signal: options.signal }));
        logger.info(
          `train: every one of the ${total} group(s) has rewards that are all equal (nothing to learn), so no job was created; the model stays at step ${step}; they were logged under "train" with metadata.${LEFT_OUT_KEY} = "${LEFT_OUT_NO_SIGNAL}" (noSignal: "send" sends them).`,
        );
        return {
          jobId: null,
          step,
          metrics: {},
          rawMetrics: {},
          noSignalGroups,
          ...(staleGroups > 0 ? { staleGroups } : {}),
          ...(infraFailures > 0 ? { infraFailures } : {}),
          skipped: "no_reward_signal",
        };
      }
      if (noSignalGroups > 0)
        logger.info(
          `train: left out ${noSignalGroups} of ${total} group(s) whose rewards are all equal (nothing to learn), logged under "train" with metadata.${LEFT_OUT_KEY} = "${LEFT_OUT_NO_SIGNAL}"; training on ${prepared.length} (noSignal: "send" sends them).`,
        );
    }
    const sent = prepared;
    return withTrainingSpan(
      "trajectory_recorder.train",
      {
        "trajectory_recorder.model_id": this.id,
        "trajectory_recorder.groups": groups.length,
      },
      async (span) => {
        const stepBefore = knownStep ?? (await this.getStep({ signal: options.signal }));
        const job = await createPreparedJob(
          this.client.trainingJobs,
          { model_id: this.id, experimental_config },
          sent,
          { signal: options.signal },
        );
        span.setAttribute("trajectory_recorder.job_id", job.id);
        await options.onJobCreated?.({ jobId: job.id, stepBefore });
        const result = await this.#finish(job.id, stepBefore, { ...options, span, kind: "RL" });
        // ART's result also summarises the batch handed in, and times the call.
        const metrics = withSummary(result.metrics, groups, started);
        if (staleGroups > 0) metrics[STALE_GROUPS_METRIC] ??= staleGroups;
        if (infraFailures > 0) metrics[INFRA_FAILURES_METRIC] ??= infraFailures;
        return {
          ...result,
          metrics,
          noSignalGroups,
          ...(staleGroups > 0 ? { staleGroups } : {}),
          ...(infraFailures > 0 ? { infraFailures } : {}),
        };
      },
    );
  }

  /** Logs groups left out for lack of signal under "train", each trajectory marked. */
  async #logLeftOut(
    groups: readonly (readonly Uint8Array[])[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const marked: (readonly Uint8Array[])[] = [];
    for (const g of groups) marked.push((await markLeftOut(g, "train")).chunks);
    await logPreparedGroups(this.client.models, this.id, "train", marked, { signal });
  }

  /**
   * Follows a job created earlier (by `train`, `trainSft`, or a process
   * before this one) until it ends, and returns like `train` once a
   * checkpoint newer than `stepBefore` is listed. Throws `TrainingFailedError`
   * when the job failed.
   *
   * @example
   * // saved from onJobCreated before a crash:
   * const { step } = await model.followJob(saved.jobId, { stepBefore: saved.stepBefore });
   */
  async followJob(
    jobId: string,
    options: Omit<TrainRunOptions, "onJobCreated"> & { stepBefore: number; kind?: "RL" | "SFT" },
  ): Promise<TrainResult> {
    return withTrainingSpan(
      "trajectory_recorder.follow_job",
      { "trajectory_recorder.model_id": this.id, "trajectory_recorder.job_id": jobId },
      (span) =>
        this.#finish(jobId, options.stepBefore, { ...options, span, kind: options.kind ?? "RL" }),
    );
  }

  /**
   * Logs groups under a split (metrics only, no training).
   *
   * @example
   * await model.log(valGroups, { split: "val" });
   */
  async log(
    groups: readonly GroupInput[],
    options: { split?: string; signal?: AbortSignal; validate?: TrainableModel.GroupCheck } = {},
  ): Promise<void> {
    const split = options.split ?? "val";
    const prepared = await checkedForLog(groups, options.validate);
    await logPreparedGroups(this.client.models, this.id, split, prepared, {
      signal: options.signal,
    });
  }

  /**
   * The latest checkpoint's step, 0 when there is none.
   *
   * @example
   * const step = await model.getStep();
   */
  async getStep(options: { signal?: AbortSignal } = {}): Promise<number> {
    const page = await this.client.models.checkpoints.list(
      this.id,
      { limit: 1, order: "desc" },
      { signal: options.signal },
    );
    return this.#sawStep(page.data[0]?.step ?? 0);
  }

  /**
   * Deletes checkpoints, keeping the latest (unless `keepLatest: false`) and,
   * with `keepBestBy`, every step whose metric has the highest value.
   *
   * @example
   * const { deleted, kept } = await model.deleteCheckpoints({ keepBestBy: "val/reward" });
   */
  async deleteCheckpoints(
    options: {
      keepLatest?: boolean;
      keepBestBy?: string;
      /** Where the warning goes when no checkpoint carries `keepBestBy`. Default `console`. */
      logger?: { warn(message: string): void };
    } = {},
  ): Promise<{ deleted: number[]; kept: number[] }> {
    const all: Checkpoint[] = [];
    for await (const cp of this.client.models.checkpoints.list(this.id, { limit: 100 }))
      all.push(cp);
    const keep = checkpointsToKeep(all, options, this.name);
    const deleted = all.map((c) => c.step).filter((s) => !keep.has(s));
    if (deleted.length > 0)
      await this.client.models.checkpoints.delete(this.id, { steps: deleted });
    return { deleted, kept: [...keep].sort((a, b) => a - b) };
  }

  /**
   * Supervised fine-tuning: writes one `{messages, tools?}` line per
   * trajectory (or takes your JSONL), uploads it through `uploader`, starts
   * the SFT job and follows it like `train`. Without an uploader the data
   * goes to a W&B dataset artifact, as ART sends it
   * (`wandb-artifact:///{entity}/{project}/{name}-sft-data-{12 hex}:v0`),
   * through `defaultSftUploader` (a `WandbArtifactUploader`).
   *
   * @example
   * await model.trainSft(trajectories, { batchSize: 2, learningRate: 5e-5 });
   * await model.trainSft(trajectories, {}, { uploader: new LocalFileUploader("./artifacts") });
   */
  async trainSft(
    data: readonly SftExample[] | string,
    config: SftConfig = {},
    options: TrainRunOptions & { uploader?: ArtifactUploader } = {},
  ): Promise<TrainResult> {
    if (options.uploader !== undefined && typeof options.uploader?.upload !== "function") {
      throw new InvalidTrainingOptionsError("trainSft", [
        "uploader: expected an ArtifactUploader (WandbArtifactUploader, LocalFileUploader or PresignedUrlUploader)",
      ]);
    }
    const { jsonl, lines } = toSftJsonl(data);
    if (lines === 0) {
      throw new InvalidTrainingOptionsError("trainSft", ["data: expected at least one trajectory"]);
    }
    const wireConfig = toSftConfig(config);
    const uploader = options.uploader ?? defaultSftUploader(this.client);
    return withTrainingSpan(
      "trajectory_recorder.train_sft",
      { "trajectory_recorder.model_id": this.id, "trajectory_recorder.examples": lines },
      async (span) => {
        const stepBefore = await this.getStep({ signal: options.signal });
        const url = await uploader.upload(
          {
            name: `${this.name}-sft-data-${randomUUID().replaceAll("-", "").slice(0, 12)}.jsonl`,
            data: jsonl,
            contentType: "application/jsonl",
            owner: {
              entity: this.entity,
              project: this.project,
              run: this.runId ?? this.name,
              displayName: this.name,
            },
            metadata: { format: "jsonl", num_trajectories: lines },
          },
          { signal: options.signal },
        );
        const job = await this.client.sftTrainingJobs.create(
          { model_id: this.id, training_data_url: url, config: wireConfig },
          { signal: options.signal },
        );
        span.setAttribute("trajectory_recorder.job_id", job.id);
        await options.onJobCreated?.({ jobId: job.id, stepBefore });
        // As ART, every SFT step reports the number of examples.
        const baseMetrics = { "data/step_num_trajectories": lines };
        return this.#finish(job.id, stepBefore, { ...options, span, kind: "SFT", baseMetrics });
      },
    );
  }

  /**
   * Deletes the model with its checkpoints on the service.
   *
   * @example
   * await model.delete();
   */
  async delete(): Promise<{ deletedCheckpoints: number }> {
    const out = await this.client.models.delete(this.id);
    return { deletedCheckpoints: out.deleted_checkpoints };
  }

  /** What `JSON.stringify` writes: the model's identity (no client, no key). */
  toJSON(): Record<string, unknown> {
    return {
      id: this.id,
      entity: this.entity,
      project: this.project,
      name: this.name,
      baseModel: this.baseModel,
    };
  }

  async #finish(
    jobId: string,
    stepBefore: number,
    options: FollowOptions & { checkpointTimeoutMs?: number | undefined },
  ): Promise<TrainResult> {
    const { metrics, rawMetrics } = await followTrainingJob(this.client, jobId, options);
    const step = await waitForCheckpoint((signal) => this.getStep({ signal }), {
      jobId,
      stepBefore,
      timeoutMs: options.checkpointTimeoutMs ?? 60_000,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      backoff: options.backoff,
      signal: options.signal,
    });
    return { jobId, step, metrics, rawMetrics };
  }
}

/** The types {@link TrainableModel}'s methods take. */
export declare namespace TrainableModel {
  /** Anything that wraps an `openai` client to record its calls (a `Recorder`). */
  export interface OpenAIWrapper {
    /** Returns `client` with its calls recorded; `policy: true` marks its models as the policy's. */
    wrap<T extends object>(client: T, options?: { policy?: boolean }): T;
    /** Marks a model as the policy being trained (a `Recorder` has it). */
    addPolicy?(test: (model: string) => boolean): void;
    /** Tells it which step a model name serves, for the policy versions (a `Recorder` has it). */
    addPolicyVersion?(versionOf: (model: string) => number | undefined): void;
  }

  /**
   * The check run on groups before `train` and `log` send them (see
   * `validateGroup`): a mode, full options, or `false` to skip it. Default
   * `"warn"` (through `console`, and the groups are sent); `"throw"` refuses them.
   * One exception to the default: `train` throws `TrajectoryCheckError` when no
   * group holds a trainable Choice (the job would train on nothing); an explicit
   * mode (`"warn"`), `false`, or `allowTrainingWithoutLogprobs` lets them through.
   */
  export type GroupCheck = ValidateOptions | ValidateOptions.ValidationMode | false;
}
// The namespace's copy is the interface above, written again so that the
// root's declarations name no type the root does not export.
sameType<TrainableModel.OpenAIWrapper, OpenAIWrapper>(true);

type TrainableModelMethods = Pick<
  TrainableModel,
  | "inferenceName"
  | "policyVersion"
  | "openai"
  | "train"
  | "followJob"
  | "log"
  | "getStep"
  | "deleteCheckpoints"
  | "trainSft"
  | "delete"
  | "toJSON"
>;

// The build renames this class (it refers to itself); see class-name.ts.
keepClassName(TrainableModel, "TrainableModel");
