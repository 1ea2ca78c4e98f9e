// OpenAI's grader JSON, as its graders documentation describes it. Checked
// whole before anything runs, so a typo deep in a `multi` grader is named by
// its path.
import { z } from "zod";

const Name = z.string().min(1);

const StringCheck = z.object({
  type: z.literal("string_check"),
  name: Name,
  input: z.string(),
  reference: z.string(),
  operation: z.enum(["eq", "ne", "like", "ilike"]),
});

const TextSimilarity = z.object({
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
const InputMessage = z.looseObject({
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

const ScoreModel = z.object({
  type: z.literal("score_model"),
  name: Name,
  model: z.string().min(1),
  input: z.array(InputMessage).min(1),
  range: z
    .tuple([z.number(), z.number()])
    .refine(([lo, hi]) => lo < hi, { error: "expected [low, high] with low < high" })
    .optional(),
  pass_threshold: z.number().optional(),
  sampling_params: SamplingParams,
});

const LabelModel = z.object({
  type: z.literal("label_model"),
  name: Name,
  model: z.string().min(1),
  input: z.array(InputMessage).min(1),
  labels: z.array(z.string().min(1)).min(1),
  passing_labels: z.array(z.string().min(1)).min(1),
});

const Python = z.looseObject({ type: z.literal("python"), name: Name, source: z.string() });

/** Any grader OpenAI's documentation describes, `multi` nesting the others. */
export type GraderJson =
  | z.infer<typeof StringCheck>
  | z.infer<typeof TextSimilarity>
  | z.infer<typeof ScoreModel>
  | z.infer<typeof LabelModel>
  | z.infer<typeof Python>
  | MultiGraderJson;

/** A `multi` grader: named sub-graders and the formula combining their scores. */
export interface MultiGraderJson {
  type: "multi";
  name: string;
  graders: Record<string, GraderJson>;
  calculate_output: string;
}

const Multi = z.object({
  type: z.literal("multi"),
  name: Name,
  // A getter: the schema refers to the union that holds it.
  get graders(): z.ZodRecord<z.ZodString, z.ZodType<GraderJson>> {
    return z.record(z.string().min(1), GraderSchema);
  },
  calculate_output: z.string().min(1),
});

/** The zod schema of any grader JSON, `multi` nesting the others. */
export const GraderSchema: z.ZodType<GraderJson> = z.discriminatedUnion("type", [
  StringCheck,
  TextSimilarity,
  ScoreModel,
  LabelModel,
  Python,
  Multi,
]);

export type ScoreModelJson = z.infer<typeof ScoreModel>;
export type LabelModelJson = z.infer<typeof LabelModel>;
export type InputMessageJson = z.infer<typeof InputMessage>;
