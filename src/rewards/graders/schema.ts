// OpenAI's grader JSON, as its graders documentation describes it. Checked
// whole before anything runs, so a typo deep in a `multi` grader is named by
// its path.
import { z } from "zod";

const Name = z.string().min(1);

/** A `string_check` grader: compares two rendered templates (`eq`, `ne`, `like`, `ilike`). */
export const StringCheckGraderSchema = z.object({
  type: z.literal("string_check"),
  name: Name,
  input: z.string(),
  reference: z.string(),
  operation: z.enum(["eq", "ne", "like", "ilike"]),
});

/** A `text_similarity` grader: scores the rendered input against the reference with a metric. */
export const TextSimilarityGraderSchema = z.object({
  type: z.literal("text_similarity"),
  name: Name,
  input: z.string(),
  reference: z.string(),
  evaluation_metric: z.enum([
    "fuzzy_match",
    "bleu",
    "gleu",
    "meteor",
    "cosine",
    "rouge_1",
    "rouge_2",
    "rouge_3",
    "rouge_4",
    "rouge_5",
    "rouge_l",
  ]),
  pass_threshold: z.number().optional(),
});

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
/** One message of a model grader's prompt, its content a template. */
export const GraderInputMessageSchema = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant"]),
  content: z.union([z.string(), z.array(ContentPart)]),
  type: z.literal("message").optional(),
});

const SamplingParams = z
  .looseObject({
    temperature: z.number().optional(),
    top_p: z.number().optional(),
    seed: z.number().int().optional(),
    max_completions_tokens: z.number().int().positive().optional(),
    reasoning_effort: z.string().optional(),
  })
  .optional();

/** A `score_model` grader: a model asked for a number within `range`. */
export const ScoreModelGraderSchema = z.object({
  type: z.literal("score_model"),
  name: Name,
  model: z.string().min(1),
  input: z.array(GraderInputMessageSchema).min(1),
  range: z
    .tuple([z.number(), z.number()])
    .refine(([lo, hi]) => lo < hi, { error: "expected [low, high] with low < high" })
    .optional(),
  pass_threshold: z.number().optional(),
  sampling_params: SamplingParams,
});

/** A `label_model` grader: a model asked for one of `labels`; 1 for a passing one. */
export const LabelModelGraderSchema = z.object({
  type: z.literal("label_model"),
  name: Name,
  model: z.string().min(1),
  input: z.array(GraderInputMessageSchema).min(1),
  labels: z.array(z.string().min(1)).min(1),
  passing_labels: z.array(z.string().min(1)).min(1),
});

/** A `python` grader: recognised so that it can be refused by name. */
export const PythonGraderSchema = z.looseObject({
  type: z.literal("python"),
  name: Name,
  source: z.string(),
});

/** Any grader OpenAI's documentation describes, `multi` nesting the others. */
export type GraderJson =
  | StringCheckGraderJson
  | TextSimilarityGraderJson
  | ScoreModelGraderJson
  | LabelModelGraderJson
  | PythonGraderJson
  | MultiGraderJson;

/** A `multi` grader: named sub-graders and the formula combining their scores. */
export interface MultiGraderJson {
  /** Always `"multi"`. */
  type: "multi";
  /** The grader's name (its score goes to `metrics.grader_<name>`). */
  name: string;
  /** The sub-graders, by the names the formula uses. */
  graders: Record<string, GraderJson>;
  /** The formula over the sub-graders' scores, e.g. `"0.5 * label + 0.5 * quality / 10"`. */
  calculate_output: string;
}

/** A `multi` grader: named sub-graders combined by `calculate_output`. */
export const MultiGraderSchema = z.object({
  type: z.literal("multi"),
  name: Name,
  // A getter: the schema refers to the union that holds it.
  get graders(): z.ZodRecord<z.ZodString, z.ZodType<GraderJson>> {
    return z.record(z.string().min(1), GraderSchema);
  },
  calculate_output: z.string().min(1),
});

/**
 * The zod schema of any grader JSON, `multi` nesting the others.
 *
 * @example
 * const issues = GraderSchema.safeParse(JSON.parse(text)).error?.issues;
 */
export const GraderSchema: z.ZodType<GraderJson> = z.discriminatedUnion("type", [
  StringCheckGraderSchema,
  TextSimilarityGraderSchema,
  ScoreModelGraderSchema,
  LabelModelGraderSchema,
  PythonGraderSchema,
  MultiGraderSchema,
]);

/** A `string_check` grader's JSON. */
export type StringCheckGraderJson = z.infer<typeof StringCheckGraderSchema>;
/** A `text_similarity` grader's JSON. */
export type TextSimilarityGraderJson = z.infer<typeof TextSimilarityGraderSchema>;
/** A `score_model` grader's JSON. */
export type ScoreModelGraderJson = z.infer<typeof ScoreModelGraderSchema>;
/** A `label_model` grader's JSON. */
export type LabelModelGraderJson = z.infer<typeof LabelModelGraderSchema>;
/** A `python` grader's JSON (refused by `graderReward`). */
export type PythonGraderJson = z.infer<typeof PythonGraderSchema>;
/** One message of a model grader's prompt. */
export type GraderInputMessage = z.infer<typeof GraderInputMessageSchema>;
