// Training options as users write them (camelCase) and as they travel (snake_case).
import {
  type ExperimentalTrainingConfig,
  ExperimentalTrainingConfigSchema,
  formatZodPath,
  type SFTTrainingConfig,
  SFTTrainingConfigSchema,
} from "../wire/index.js";
import { InvalidTrainingOptionsError } from "./errors.js";
import { refuseArtConflicts, withArtDefaults } from "./train-defaults.js";

type CamelCase<S extends string> = S extends `${infer H}_${infer T}`
  ? `${H}${Capitalize<CamelCase<T>>}`
  : S;

/**
 * Options of an RL training job: the service's `experimental_config` keys in
 * camelCase (`learningRate`, `importanceSamplingLevel`, `klPenaltyCoef`, ...).
 * A key left out (or `null`) takes the default ART's serverless backend sends
 * (see `ART_TRAIN_DEFAULTS` in `trajectory-recorder/wire`): `train(groups)` sends the same body as
 * ART's `model.train(groups)`.
 */
export type TrainConfig = {
  [K in keyof ExperimentalTrainingConfig as CamelCase<K & string>]?: ExperimentalTrainingConfig[K];
};

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
