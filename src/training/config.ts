// Training options as users write them (camelCase) and as they travel (snake_case).

import { InvalidTrainingOptionsError } from "../util/training-options-error.js";
import {
  type ExperimentalTrainingConfig,
  ExperimentalTrainingConfigSchema,
  formatZodPath,
  type SFTTrainingConfig,
  SFTTrainingConfigSchema,
  sameType,
} from "../wire/index.js";
import { refuseArtConflicts, withArtDefaults } from "./train-defaults.js";

type CamelCase<S extends string> = S extends `${infer H}_${infer T}`
  ? `${H}${Capitalize<CamelCase<T>>}`
  : S;

/** `experimental_config`'s keys in camelCase, as `TrainConfig` writes them out. */
type CamelConfig = {
  [K in keyof ExperimentalTrainingConfig as CamelCase<K & string>]?: ExperimentalTrainingConfig[K];
};

/**
 * Options of an RL training job: the service's `experimental_config` keys in
 * camelCase (`learningRate`, `importanceSamplingLevel`, `klPenaltyCoef`, ...).
 * A key left out (or `null`) takes the default ART's serverless backend sends
 * (see `ART_TRAIN_DEFAULTS` in `trajectory-recorder/wire`): `train(groups)` sends the same body as
 * ART's `model.train(groups)`. Each key is the snake_case one of the service.
 */
// Written out (checked below to be exactly the camelCase form of the wire's
// schema) so that the published declaration names no internal helper type.
export interface TrainConfig {
  /** Scales non-positive (> 0) or non-negative (< 0) advantages, in [-1, 1]; 1 trains on positive advantages only. */
  advantageBalance?: number | null | undefined;
  /** Trains without sampler logprobs (their ratio is taken as 1). */
  allowTrainingWithoutLogprobs?: boolean | null | undefined;
  /** The lower clip width (0.2 with PPO, 1.0 with CISPO when left out). */
  epsilon?: number | null | undefined;
  /** The upper clip width (ε with PPO, 4.0 with CISPO when left out). */
  epsilonHigh?: number | null | undefined;
  /** Where importance sampling weights are taken: per token, per sequence, or their (geometric) average. */
  importanceSamplingLevel?:
    | "token"
    | "sequence"
    | "average"
    | "geometric_average"
    | null
    | undefined;
  /** The Kimi-K2-style advantage adjustment τ. */
  kimiK2Tau?: number | null | undefined;
  /** The weight of the KL-shaped advantage; 0 disables it. */
  klPenaltyCoef?: number | null | undefined;
  /** The checkpoint step the KL penalty compares with (the base model when left out). */
  klPenaltyReferenceStep?: number | null | undefined;
  /** What the KL penalty is measured against: the current learner, or the sampler (`"sample"`, for off-policy use). */
  klPenaltySource?: "current_learner" | "sample" | null | undefined;
  /** How many steps the KL reference lags behind (at least 1; preview only). */
  klPenaltyStepLag?: number | null | undefined;
  /** A reference adapter's path for the KL penalty (the service refuses a client-side path). */
  klRefAdapterPath?: string | null | undefined;
  /** The optimizer's learning rate for this step (ART's default 5e-6). */
  learningRate?: number | null | undefined;
  /** How many tokens the trainer computes logprobs for at a time (memory). */
  logprobCalculationChunkSize?: number | null | undefined;
  /** The objective: `"cispo"` (ART's default) or `"ppo"`. */
  lossFn?: "cispo" | "ppo" | null | undefined;
  /** Zeroes out the tokens whose ratio leaves the clip band. */
  maskProbRatio?: boolean | null | undefined;
  /** An upper cap on the importance sampling ratio of negative-advantage tokens. */
  maxNegativeAdvantageImportanceSamplingWeight?: number | null | undefined;
  /** Divides the group-centred rewards by the group's standard deviation (`false` also turns `scaleRewards` off). */
  normalizeAdvantages?: boolean | null | undefined;
  /** Scales the learning rate by a power of the number of trajectories. */
  numTrajectoriesLearningRateMultiplierPower?: number | null | undefined;
  /** The length of a packed row of sequences. */
  packedSequenceLength?: number | null | undefined;
  /** Plots the trainer's tensors (a debugging aid of ART's local backend). */
  plotTensors?: boolean | null | undefined;
  /** The older API's choice of PPO (`lossFn` says it now). */
  ppo?: boolean | null | undefined;
  /** Recomputes the logprobs under the current weights before the batch's first gradient step. */
  precalculateLogprobs?: boolean | null | undefined;
  /** Scales the learning rate by a factor from the rewards' standard deviation. */
  scaleLearningRateByRewardStdDev?: boolean | null | undefined;
  /** Divides the group-centred rewards by the group's standard deviation. */
  scaleRewards?: boolean | null | undefined;
  /** A cap on the sampler-to-trainer ratio correction (truncated importance sampling). */
  truncatedImportanceSampling?: number | null | undefined;
}
sameType<TrainConfig, CamelConfig>(true);

/** Options of an SFT job, in camelCase. */
export interface SftConfig {
  /** Trajectories per batch, or `"auto"` (not sent) for the service's choice. */
  batchSize?: number | "auto";
  /** One rate, or one per batch. ART's default is 5e-5; 0 is taken, as ART takes it. */
  learningRate?: number | number[];
  /**
   * The service's metric logging of the job, as ART's SFT `metric_logging`
   * (`{ enabled, target_training_step }`); sent only when `enabled`, as ART does.
   */
  metricLogging?: { enabled?: boolean; targetTrainingStep?: number };
  /**
   * Which assistant turns of each example carry the loss, as ART's
   * `assistant_turns`: `"all"` (default; the only choice the service offers,
   * so nothing is sent). `"last"` is refused before anything is sent, as ART's
   * serverless backend refuses it (it needs ART's LocalBackend).
   */
  assistantTurns?: "all" | "last";
}

const SFT_OPTIONS: readonly string[] = [
  "batchSize",
  "learningRate",
  "metricLogging",
  "assistantTurns",
];
const SFT_LOGGING_OPTIONS: readonly string[] = ["enabled", "targetTrainingStep"];

/** `unknown option x` for each key of `config` not in `known`, with the nearest known name when one is close. */
function unknownOptions(config: object, known: readonly string[], prefix = ""): string[] {
  return Object.keys(config)
    .filter((key) => !known.includes(key))
    .map((key) => {
      const near = known.find((k) => k.toLowerCase() === camel(key).toLowerCase());
      const hint = near ? `did you mean ${prefix}${near}? (` : "(";
      return `unknown option ${prefix}${key}: ${hint}expected one of ${known.join(", ")})`;
    });
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
function camel(key: string): string {
  return key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Converts camelCase training options to the wire's `experimental_config`,
 * validated, with every key ART's serverless backend sends (its defaults for
 * what is left out). Unknown or ill-typed keys, and the combinations ART
 * refuses, throw {@link InvalidTrainingOptionsError} naming the option.
 *
 * @example
 * toExperimentalConfig({ learningRate: 1e-5 }).learning_rate; // 1e-5
 * toExperimentalConfig().loss_fn; // "cispo"
 */
export function toExperimentalConfig(
  config: TrainConfig | undefined = {},
  method = "train",
): Required<ExperimentalTrainingConfig> {
  if (typeof config !== "object" || config === null) {
    throw new InvalidTrainingOptionsError(method, ["config: expected an object"]);
  }
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (value !== undefined) wire[snake(key)] = value;
  }
  const rate = wire.learning_rate;
  if (rate !== undefined && rate !== null && !isUsableRate(rate)) {
    throw new InvalidTrainingOptionsError(method, [
      `learningRate: expected 0 or a positive number (e.g. 1e-5), got ${String(rate)}`,
    ]);
  }
  refuseArtConflicts(wire, method);
  const parsed = ExperimentalTrainingConfigSchema.safeParse(wire);
  if (!parsed.success) {
    throw new InvalidTrainingOptionsError(
      method,
      parsed.error.issues.map((issue) => {
        const keys = "keys" in issue ? (issue.keys as string[]).map(camel).join(", ") : "";
        const path = formatZodPath(issue.path);
        const where = path === "(root)" ? "config" : camel(path);
        return issue.code === "unrecognized_keys"
          ? `unknown option ${keys}`
          : `${where}: ${issue.message}`;
      }),
    );
  }
  return withArtDefaults(parsed.data);
}

/**
 * Converts SFT options to the wire's `config`; `batchSize: "auto"` is left out.
 *
 * @example
 * toSftConfig({ batchSize: 4, learningRate: 5e-5 }); // { batch_size: 4, learning_rate: 5e-5 }
 */
export function toSftConfig(config: SftConfig = {}): SFTTrainingConfig {
  if (typeof config !== "object" || config === null || Array.isArray(config))
    throw new InvalidTrainingOptionsError("trainSft", ["config: expected an object"]);
  const unknown = unknownOptions(config, SFT_OPTIONS);
  const logging0 = config.metricLogging;
  if (logging0 !== null && typeof logging0 === "object" && !Array.isArray(logging0))
    unknown.push(...unknownOptions(logging0, SFT_LOGGING_OPTIONS, "metricLogging."));
  if (unknown.length > 0) throw new InvalidTrainingOptionsError("trainSft", unknown);
  const turns = config.assistantTurns;
  if (turns !== undefined && turns !== "all") {
    throw new InvalidTrainingOptionsError("trainSft", [
      turns === "last"
        ? 'assistantTurns: "last" is not offered by the service, which trains on every assistant turn (ART\'s serverless backend refuses it too; it needs ART\'s LocalBackend): use "all", or keep only the last assistant turn in each example'
        : `assistantTurns: expected "all" or "last", got ${JSON.stringify(turns) ?? String(turns)}`,
    ]);
  }
  const wire: Record<string, unknown> = {};
  if (config.batchSize !== undefined && config.batchSize !== "auto") {
    wire.batch_size = config.batchSize;
  }
  wire.learning_rate = config.learningRate ?? 5e-5;
  const rates = Array.isArray(wire.learning_rate) ? wire.learning_rate : [wire.learning_rate];
  const bad = rates.find((r) => !isUsableRate(r));
  if (bad !== undefined) {
    throw new InvalidTrainingOptionsError("trainSft", [
      `learningRate: expected 0 or a positive number (e.g. 5e-5) or a list of them, got ${String(bad)}`,
    ]);
  }
  const logging = config.metricLogging;
  if (logging !== undefined) {
    if (logging === null || typeof logging !== "object" || Array.isArray(logging))
      throw new InvalidTrainingOptionsError("trainSft", [
        "metricLogging: expected an object { enabled, targetTrainingStep }",
      ]);
    const wireLogging: Record<string, unknown> = {};
    if (logging.enabled !== undefined) wireLogging.enabled = logging.enabled;
    if (logging.targetTrainingStep !== undefined)
      wireLogging.target_training_step = logging.targetTrainingStep;
    wire.metric_logging = wireLogging;
  }
  const parsed = SFTTrainingConfigSchema.safeParse(wire);
  if (!parsed.success) {
    throw new InvalidTrainingOptionsError(
      "trainSft",
      parsed.error.issues.map((i) => `${camel(formatZodPath(i.path))}: ${i.message}`),
    );
  }
  // ART adds metric_logging only when it is enabled.
  if (parsed.data.metric_logging?.enabled !== true) delete parsed.data.metric_logging;
  return parsed.data;
}

/**
 * ART sends `learning_rate=0` (a step that moves no weight, e.g. to measure
 * the loss), so 0 is taken; a negative rate trains backwards and a non-finite
 * one cannot travel as JSON: both are refused before sending.
 */
function isUsableRate(value: unknown): boolean {
  return typeof value !== "number" || (Number.isFinite(value) && value >= 0);
}
