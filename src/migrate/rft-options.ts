// runRft's options: the plain values checked by one zod schema (so an error
// names the field), the objects (model, grader client, streams) by hand.
import type { Readable } from "node:stream";
import { z } from "zod";
import type { GraderRewardOptions } from "../rewards/index.js";
import type { TrainableModel } from "../training/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { formatZodPath } from "../wire/index.js";

/** Options of {@link runRft}. */
export interface RftOptions {
  /** The trainable model that samples the groups and trains on them. */
  model: TrainableModel;
  /** The dataset: a JSONL path, a readable stream, or the items (`{ messages, ...fields }`). */
  dataset: string | Readable | readonly unknown[];
  /** The OpenAI grader's JSON (`string_check`, `text_similarity`, `score_model`, `label_model`, `multi`). */
  grader: unknown;
  /** For model graders: the judge's client and model (see `graderReward`). */
  graderOptions?: GraderRewardOptions;
  /**
   * Items scored on the first and the last checkpoint (same seeds on both).
   * Default: the dataset itself; `false` for no evaluation.
   */
  validation?: string | Readable | readonly unknown[] | false;
  /** Training steps. Default 4. */
  steps?: number;
  /** Answers sampled per item: the group's size. Default 8. */
  groupSize?: number;
  /** Items (groups) per step, taken in a seeded order, round and round. Default: every item. */
  itemsPerStep?: number;
  /** The learning rate of each step. Default 2e-5. */
  learningRate?: number;
  /** Extra fields of every chat request, e.g. `{ max_tokens: 8, temperature: 1 }`. */
  requestOptions?: Record<string, unknown>;
  /** Answers sampled per validation item and checkpoint. Default 4. */
  validationSamples?: number;
  /** Rollouts running at once. Default 16. */
  concurrency?: number;
  /** Seeds the item order and each request's `seed`: the same seed gives the same run on the emulator. Default 1. */
  seed?: number;
  /** Where the HTML report of the run goes; `false` (default) for none. */
  reportPath?: string | false;
  /** Progress lines (one per step). Default: none. */
  out?: NodeJS.WritableStream;
  /** Where `model.train` says what it left out. Default: `out`. */
  logger?: { info(message: string): void };
}

const Plain = z.strictObject({
  steps: z.int().min(1).default(4),
  groupSize: z.int().min(2).default(8),
  itemsPerStep: z.int().min(1).optional(),
  learningRate: z.number().positive().finite().default(2e-5),
  requestOptions: z.record(z.string(), z.unknown()).default({}),
  validationSamples: z.int().min(1).default(4),
  concurrency: z.int().min(1).default(16),
  seed: z.int().default(1),
  reportPath: z.union([z.string().min(1), z.literal(false)]).default(false),
});

/** The plain options with their defaults. */
export type RftSettings = z.infer<typeof Plain>;

const OBJECT_KEYS = [
  "model",
  "dataset",
  "grader",
  "graderOptions",
  "validation",
  "out",
  "logger",
] as const;

/** Checks every option; throws `InvalidArgumentError` naming the first bad field. */
export function checkRftOptions(options: unknown, call: string): RftSettings {
  if (!isObjectLike(options)) throw new InvalidArgumentError(call, "options", "an object", options);
  const o = options as Partial<RftOptions>;
  if (typeof o.model?.train !== "function" || typeof o.model?.openai !== "function")
    throw new InvalidArgumentError(call, "options.model", "a TrainableModel", o.model);
  if (!isSource(o.dataset))
    throw new InvalidArgumentError(
      call,
      "options.dataset",
      "a JSONL path, a readable stream or an array of items",
      o.dataset,
    );
  if (o.validation !== undefined && o.validation !== false && !isSource(o.validation))
    throw new InvalidArgumentError(
      call,
      "options.validation",
      "a JSONL path, a readable stream, an array of items, or false",
      o.validation,
    );
  if (!isObjectLike(o.grader))
    throw new InvalidArgumentError(call, "options.grader", "an OpenAI grader's JSON", o.grader);
  if (o.out !== undefined && typeof o.out?.write !== "function")
    throw new InvalidArgumentError(call, "options.out", "a writable stream", o.out);
  if (o.logger !== undefined && typeof o.logger?.info !== "function")
    throw new InvalidArgumentError(call, "options.logger", "{ info(message) }", o.logger);
  const plain = Object.fromEntries(
    Object.entries(o).filter(([k]) => !(OBJECT_KEYS as readonly string[]).includes(k)),
  );
  const parsed = Plain.safeParse(plain);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    const path = formatZodPath(issue.path);
    throw new InvalidArgumentError(
      call,
      path ? `options.${path}` : "options",
      "valid options",
      plain,
      issue.message,
    );
  }
  return parsed.data;
}

function isSource(value: unknown): boolean {
  return (
    typeof value === "string" ||
    Array.isArray(value) ||
    typeof (value as Readable | undefined)?.pipe === "function"
  );
}
