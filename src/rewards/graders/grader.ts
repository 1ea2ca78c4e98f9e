// OpenAI graders as reward functions: the JSON is checked whole and compiled
// into a tree of scorers once; each call renders the templates against the
// dataset item and the trajectory's last answer, and computes the score here.
import type { Trajectory } from "../../trajectory/index.js";
import { InvalidArgumentError, isObjectLike } from "../../util/argument-error.js";
import { formatZodPath } from "../../wire/index.js";
import type { JudgeClient } from "../judge.js";
import { parseFormula } from "./expression.js";
import { labelModel, scoreModel } from "./model-graders.js";
import { type GraderJson, GraderSchema } from "./schema.js";
import { cosine, type LocalMetric, similarity } from "./similarity.js";
import { render, type Sample, sampleOf } from "./template.js";

const CALL = "graderReward(grader, options)";

/** Options of {@link graderReward}. */
export interface GraderRewardOptions {
  /**
   * Where `score_model` and `label_model` graders send their prompts: an
   * `openai` client (or any compatible one, e.g. on the service's inference).
   */
  client?: JudgeClient;
  /** The model those graders ask, in place of the grader's own `model` (an OpenAI name). */
  model?: string;
  /** Extra fields for their chat requests. */
  requestOptions?: Record<string, unknown>;
  /** For `text_similarity` with `cosine`: a client with `embeddings.create` and the embedding model. */
  embeddings?: {
    client: { embeddings: { create(body: any, options?: any): PromiseLike<any> } };
    model: string;
  };
  /**
   * Write each grader's score into `trajectory.metrics` as `grader_<name>`
   * (and `grader_<name>_pass`, 1 or 0, where it has a `pass_threshold`).
   * Default true: the scores of a `multi` grader's parts then show per step.
   */
  recordMetrics?: boolean;
}

/** The reward function {@link graderReward} returns. */
export type GraderReward = (trajectory: Trajectory, item: unknown) => Promise<number>;

type Scorer = (scope: Scope, metrics: Record<string, number>) => Promise<number>;
type Scope = { item: unknown; sample: Sample };

/**
 * Turns an OpenAI grader (its JSON: `string_check`, `text_similarity`,
 * `score_model`, `label_model` or `multi`) into a reward function of a
 * trajectory and its dataset item. The JSON is checked first, whole: a bad
 * field, a `python` grader, a metric that cannot run here or a model grader
 * without a client throws `InvalidArgumentError` naming its path.
 *
 * @example
 * const reward = graderReward({ type: "string_check", name: "label", input: "{{ sample.output_text }}", reference: "{{ item.label }}", operation: "eq" });
 * await recorder.rollout(async (t) => { ...; t.reward = await reward(t, item); });
 */
export function graderReward(grader: unknown, options: GraderRewardOptions = {}): GraderReward {
  checkOptions(options);
  const parsed = GraderSchema.safeParse(grader);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as { path: PropertyKey[]; message: string };
    throw new InvalidArgumentError(
      CALL,
      pathOf(issue.path),
      "an OpenAI grader",
      grader,
      issue.message,
    );
  }
  const score = compile(parsed.data, "grader", options);
  const record = options.recordMetrics ?? true;
  return async (trajectory, item) => {
    const metrics: Record<string, number> = {};
    const value = await score({ item, sample: sampleOf(trajectory) }, metrics);
    if (record) Object.assign(trajectory.metrics, metrics);
    return value;
  };
}

function pathOf(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "grader" : `grader.${formatZodPath(path)}`;
}

function compile(g: GraderJson, path: string, options: GraderRewardOptions): Scorer {
  const named =
    (
      run: (scope: Scope, metrics: Record<string, number>) => Promise<number> | number,
      threshold?: number,
    ): Scorer =>
    async (scope, metrics) => {
      const value = await run(scope, metrics);
      metrics[`grader_${g.name}`] = value;
      if (threshold !== undefined) metrics[`grader_${g.name}_pass`] = value >= threshold ? 1 : 0;
      return value;
    };
  switch (g.type) {
    case "string_check":
      return named((s) =>
        stringCheck(g.operation, render(g.input, s, CALL), render(g.reference, s, CALL)),
      );
    case "text_similarity":
      return named(
        textSimilarity(g.evaluation_metric, g.input, g.reference, path, options),
        g.pass_threshold,
      );
    case "score_model":
    case "label_model": {
      const client = options.client;
      if (!client)
        throw new InvalidArgumentError(
          CALL,
          "options.client",
          "an openai client",
          client,
          `the ${g.type} grader at ${path} needs options.client, an openai client (or any OpenAI-compatible one) for its model`,
        );
      const target = { client, model: options.model, requestOptions: options.requestOptions };
      return g.type === "score_model"
        ? named((s) => scoreModel(g, target, s, CALL), g.pass_threshold)
        : named((s) => labelModel(g, target, s, CALL));
    }
    case "python":
      throw new InvalidArgumentError(
        CALL,
        `${path}.type`,
        "a grader other than python",
        g.type,
        `python graders are not run by this library (it runs no uploaded code); port its grade(sample, item) to a TypeScript reward function (trajectory, item) => number, reading sample.output_text as the trajectory's last assistant message, and combine it with the other graders in your own code`,
      );
    case "multi":
      return named(multi(g.graders, g.calculate_output, path, options));
  }
}

function stringCheck(op: "eq" | "ne" | "like" | "ilike", input: string, reference: string): number {
  const hit =
    op === "eq"
      ? input === reference
      : op === "ne"
        ? input !== reference
        : op === "like"
          ? input.includes(reference)
          : input.toLowerCase().includes(reference.toLowerCase());
  return hit ? 1 : 0;
}

function textSimilarity(
  metric: string,
  input: string,
  reference: string,
  path: string,
  options: GraderRewardOptions,
): (scope: Scope) => Promise<number> | number {
  if (metric === "meteor")
    throw new InvalidArgumentError(
      CALL,
      `${path}.evaluation_metric`,
      "a metric computed here",
      metric,
      "meteor needs WordNet's synonyms and stemmer, which this library does not ship; use bleu, gleu, rouge_l or fuzzy_match, or a reward function of your own",
    );
  if (metric !== "cosine")
    return (s) =>
      similarity(metric as LocalMetric, render(input, s, CALL), render(reference, s, CALL));
  const embeddings = options.embeddings;
  if (!embeddings)
    throw new InvalidArgumentError(
      CALL,
      "options.embeddings",
      "{ client, model }",
      embeddings,
      `the text_similarity grader at ${path} uses cosine, which needs embeddings: pass options.embeddings, { client, model } with an embeddings endpoint`,
    );
  return async (s) => {
    const response = await embeddings.client.embeddings.create({
      model: embeddings.model,
      // Floats asked for: the SDK would ask for base64, which some compatible servers lack.
      encoding_format: "float",
      input: [render(input, s, CALL), render(reference, s, CALL)],
    });
    const [a, b] = (response?.data ?? []).map((d: { embedding?: number[] }) => d.embedding);
    if (!Array.isArray(a) || !Array.isArray(b))
      throw new TypeError(
        `${CALL}: the embeddings server gave no two embeddings for the cosine grader at ${path}.`,
      );
    return cosine(a, b);
  };
}

function multi(
  graders: Record<string, GraderJson>,
  formula: string,
  path: string,
  options: GraderRewardOptions,
): (scope: Scope, metrics: Record<string, number>) => Promise<number> {
  let parsed: ReturnType<typeof parseFormula>;
  try {
    parsed = parseFormula(formula);
  } catch (error) {
    throw new InvalidArgumentError(
      CALL,
      `${path}.calculate_output`,
      "a formula",
      formula,
      `${(error as Error).message} (formulas take numbers, grader names, + - * / ^, parentheses and min, max, abs, floor, ceil, exp, sqrt, log)`,
    );
  }
  const unknown = [...parsed.names].filter((n) => !Object.hasOwn(graders, n));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      CALL,
      `${path}.calculate_output`,
      "a formula",
      formula,
      `it names ${unknown.join(", ")}, which is not one of its graders (${Object.keys(graders).join(", ")})`,
    );
  const parts = Object.entries(graders).map(
    ([key, g]) => [key, compile(g, `${path}.graders.${key}`, options)] as const,
  );
  return async (scope, metrics) => {
    const scores = await Promise.all(
      parts.map(async ([key, run]) => [key, await run(scope, metrics)] as const),
    );
    return parsed.evaluate(Object.fromEntries(scores));
  };
}

function checkOptions(options: unknown): asserts options is GraderRewardOptions {
  if (!isObjectLike(options)) throw new InvalidArgumentError(CALL, "options", "an object", options);
  const o = options as GraderRewardOptions;
  if (o.client !== undefined && typeof o.client?.chat?.completions?.create !== "function")
    throw new InvalidArgumentError(
      CALL,
      "options.client",
      "an openai client (with chat.completions.create)",
      o.client,
    );
  if (o.model !== undefined && (typeof o.model !== "string" || o.model === ""))
    throw new InvalidArgumentError(CALL, "options.model", "a model name", o.model);
  if (
    o.embeddings !== undefined &&
    (typeof o.embeddings?.client?.embeddings?.create !== "function" ||
      typeof o.embeddings.model !== "string")
  )
    throw new InvalidArgumentError(
      CALL,
      "options.embeddings",
      "{ client (with embeddings.create), model }",
      o.embeddings,
    );
}
