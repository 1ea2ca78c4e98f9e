import { z } from "zod";
import {
  type Trajectory,
  type TrajectoryGroup,
  withoutInfraFailures,
} from "../trajectory/index.js";
import { InvalidArgumentError, isObjectLike } from "../util/argument-error.js";
import { markError, TrajectoryRecorderError } from "../util/error-family.js";
import { errorMessage } from "../util/error-message.js";
import { findJsonProblem } from "../util/json-check.js";
import { checkGroup, healthyView } from "./apply.js";
import { buildJudgePrompt, DEFAULT_JUDGE_RUBRIC } from "./judge-prompt.js";

/** The part of an `openai` client the judge uses; any OpenAI-compatible client fits. */
export interface JudgeClient {
  /** The `chat.completions.create` of an `openai` client (any version), or anything shaped like it. */
  chat: {
    completions: {
      // Loosely typed so that every SDK version's overloads fit.
      create(body: any, options?: any): PromiseLike<any>;
    };
  };
}

/** Options of {@link judgeGroup}. */
export interface JudgeOptions {
  /** An `openai` client (or any compatible one) pointing at the judge model's server. */
  client: JudgeClient;
  /** The judge model's name. */
  model: string;
  /** What a good trajectory looks like. Default {@link DEFAULT_JUDGE_RUBRIC}. */
  rubric?: string;
  /** Extra fields for the chat request (`temperature`, `response_format`, ...). */
  requestOptions?: Record<string, unknown>;
  /**
   * What a failed judgement does (the judge's server failed, or its answer
   * was unusable twice). `"throw"` (default) rejects. `"skip"` gives up on
   * this group only, as ART's RULER with `swallow_exceptions=True`: the
   * failure is logged and `applyJudge` returns `null`, so a gather's
   * `afterEach` drops the group. `"keep"` logs the failure on each
   * trajectory and keeps the group with its rewards unchanged.
   */
  onError?: JudgeOptions.JudgeErrorPolicy;
  /** Where `"skip"` and `"keep"` log a failure. Default `console`. */
  logger?: { warn(message: string): void };
}

/** The types {@link JudgeOptions} and `judgeGroup` use. */
export declare namespace JudgeOptions {
  export type { JudgeErrorPolicy, JudgeScore };
}

/** What a failed judgement does: see {@link JudgeOptions.onError}. */
export type JudgeErrorPolicy = "throw" | "skip" | "keep";

/** The judge's verdict on one trajectory. */
export interface JudgeScore {
  /** Between 0 and 1, relative to the other trajectories of the group. */
  reward: number;
  /** The judge's reasons, in its words. */
  explanation: string;
}

/**
 * Thrown when the judge model's answer could not be used, even after one retry.
 * `answer` is the last raw text it gave.
 */
export class JudgeResponseError extends TrajectoryRecorderError {
  static {
    markError(JudgeResponseError, "JudgeResponseError");
  }
  /** The class's name, `"JudgeResponseError"` (what `error.name` reads). */
  override readonly name = "JudgeResponseError";
  constructor(
    message: string,
    readonly answer: string,
  ) {
    super(message);
  }
}

const JudgeAnswerSchema = z.object({
  scores: z.array(
    z.object({
      id: z.coerce.number().int(),
      reward: z.number().min(0).max(1),
      explanation: z.string().default(""),
    }),
  ),
});

/**
 * Asks a chat model to score a group's trajectories against each other (the
 * idea of ART's RULER, with our own prompt). The model sees the shared start
 * of the conversations once, the tools, and each trajectory's own turns; it
 * answers JSON, which is validated; a malformed answer is retried once. If all
 * trajectories are identical, one is judged and its score copied.
 *
 * @returns one `{ reward, explanation }` per trajectory, in order.
 * @throws JudgeResponseError when the answer is still unusable after the retry.
 * @example
 * const scores = await judgeGroup(group, { client: new OpenAI(), model: "gpt-4.1-mini" });
 */
export async function judgeGroup(
  group: TrajectoryGroup,
  options: JudgeOptions & { onError: "skip" | "keep" },
): Promise<JudgeOptions.JudgeScore[] | null>;
/**
 * Scores a group's trajectories against each other; throws when the judge's
 * answer stays unusable (the default `onError: "throw"`).
 *
 * @example
 * const scores = await judgeGroup(group, { client: new OpenAI(), model: "gpt-4.1-mini" });
 */
export async function judgeGroup(
  group: TrajectoryGroup,
  options: JudgeOptions,
): Promise<JudgeOptions.JudgeScore[]>;
export async function judgeGroup(
  group: TrajectoryGroup,
  options: JudgeOptions,
): Promise<JudgeScore[] | null> {
  const call = "judgeGroup(group, options)";
  checkJudgeArguments(call, group, options);
  const policy = options.onError ?? "throw";
  if (policy === "throw") return judgeOrThrow(call, group, options);
  try {
    return await judgeOrThrow(call, group, options);
  } catch (error) {
    (options.logger ?? console).warn(
      `judgeGroup: the judge ${options.model} failed on this group: ${errorMessage(error)}; no scores.`,
    );
    return null;
  }
}

async function judgeOrThrow(
  call: string,
  group: TrajectoryGroup,
  options: JudgeOptions,
): Promise<JudgeScore[]> {
  const all = group.trajectories.map((t) => t.messages());
  // The prompt is their JSON: a BigInt, a cycle or deep nesting is named here, not by JSON.stringify.
  for (const [i, messages] of all.entries())
    checkJson(call, `group.trajectories[${i}].messages_and_choices`, messages);
  checkJson(call, "group.trajectories[0].tools", group.trajectories[0]?.tools ?? null);
  if (all.length === 0) return [];
  const identical = all.every((c) => JSON.stringify(c) === JSON.stringify(all[0]));
  const conversations = identical ? all.slice(0, 1) : all;
  const messages: { role: string; content: string }[] = buildJudgePrompt(conversations, {
    rubric: options.rubric ?? DEFAULT_JUDGE_RUBRIC,
    tools: group.trajectories[0]?.tools ?? null,
  });

  let problem = "";
  let answer = "";
  for (let attempt = 0; attempt < 2; attempt++) {
    const completion = await options.client.chat.completions.create({
      ...options.requestOptions,
      model: options.model,
      messages,
    });
    // Text only: what a non-OpenAI server puts there may not even convert to a string.
    const content: unknown = completion?.choices?.[0]?.message?.content;
    answer = typeof content === "string" ? content : "";
    const result = readAnswer(answer, conversations.length);
    if (typeof result !== "string") {
      return identical ? all.map(() => ({ ...(result[0] as JudgeScore) })) : result;
    }
    problem = result;
    messages.push(
      { role: "assistant", content: answer },
      {
        role: "user",
        content: `That answer could not be used: ${problem} Reply again with the JSON only.`,
      },
    );
  }
  throw new JudgeResponseError(
    `The judge model ${options.model} gave an unusable answer twice: ${problem}`,
    answer,
  );
}

/**
 * Judges the group and writes the result onto it, as ART's RULER does:
 * `reward` becomes the judge's score, the previous reward is kept in
 * `metrics.independent_reward`, the score in `metrics.ruler_score`, and the
 * explanation is logged on each trajectory. With `onError: "skip"` a failed
 * judgement returns `null` (a gather's `afterEach` then drops the group, and
 * only that one); with `"keep"` the group comes back unscored.
 *
 * @example
 * await gatherTrajectoryGroups(groups, { afterEach: (g) => applyJudge(g, { client, model: "o4-mini", onError: "skip" }) });
 */
export async function applyJudge(
  group: TrajectoryGroup,
  options: JudgeOptions & { onError: "skip" },
): Promise<TrajectoryGroup | null>;
/**
 * Judges the group and writes the scores onto it; throws when the judge's
 * answer stays unusable (`onError: "throw"`, the default) and gives the group
 * back unscored with `onError: "keep"`.
 *
 * @example
 * await applyJudge(group, { client: new OpenAI(), model: "gpt-4.1-mini" });
 */
export async function applyJudge(
  group: TrajectoryGroup,
  options: JudgeOptions,
): Promise<TrajectoryGroup>;
export async function applyJudge(
  group: TrajectoryGroup,
  options: JudgeOptions,
): Promise<TrajectoryGroup | null> {
  checkJudgeArguments("applyJudge(group, options)", group, options);
  // Infrastructure failures are not judged: the judge compares the healthy rollouts.
  const judged = withoutInfraFailures(group.trajectories);
  if (judged.length === 0) return group;
  let scores: JudgeScore[];
  try {
    scores = await judgeGroup(judged === group.trajectories ? group : healthyView(group), {
      ...options,
      onError: "throw",
    });
  } catch (error) {
    const policy = options.onError ?? "throw";
    if (policy === "throw") throw error;
    const message = `The judge ${options.model} failed on this group: ${errorMessage(error)}`;
    (options.logger ?? console).warn(
      `applyJudge: ${message}; ${policy === "skip" ? "the group is skipped" : "its rewards are kept unjudged"}.`,
    );
    if (policy === "skip") return null;
    for (const t of judged) t.log(message);
    return group;
  }
  scores.forEach((score, i) => {
    const t = judged[i] as Trajectory;
    t.metrics.independent_reward = t.reward;
    t.metrics.ruler_score = score.reward;
    t.reward = score.reward;
    t.log(`Judge explanation: ${score.explanation}`);
  });
  return group;
}

function checkJson(call: string, where: string, value: unknown): void {
  const problem = findJsonProblem(value);
  if (!problem) return;
  const path = problem.path.map((k) => (typeof k === "number" ? `[${k}]` : `.${k}`)).join("");
  throw new InvalidArgumentError(call, `${where}${path}`, "JSON data", value, problem.message);
}

function checkJudgeArguments(call: string, group: unknown, options: unknown): void {
  checkGroup(call, group);
  if (!isObjectLike(options))
    throw new InvalidArgumentError(
      call,
      "options",
      "an object { client, model, rubric? }",
      options,
    );
  const client = options.client as { chat?: { completions?: { create?: unknown } } } | undefined;
  if (typeof client?.chat?.completions?.create !== "function")
    throw new InvalidArgumentError(
      call,
      "options.client",
      "an openai client (with chat.completions.create)",
      options.client,
    );
  if (typeof options.model !== "string" || options.model === "")
    throw new InvalidArgumentError(call, "options.model", "a model name", options.model);
  if (options.rubric !== undefined && typeof options.rubric !== "string")
    throw new InvalidArgumentError(call, "options.rubric", "a string", options.rubric);
  const policy = options.onError;
  if (policy !== undefined && policy !== "throw" && policy !== "skip" && policy !== "keep")
    throw new InvalidArgumentError(call, "options.onError", '"throw", "skip" or "keep"', policy);
  const extra = options.requestOptions;
  if (extra !== undefined && (!isObjectLike(extra) || Array.isArray(extra)))
    throw new InvalidArgumentError(call, "options.requestOptions", "an object", extra);
}

// The scores in id order, or a sentence saying what is wrong with the answer.
function readAnswer(answer: string, expected: number): JudgeScore[] | string {
  const json = extractJson(answer);
  if (json === undefined) return "it did not contain a JSON object.";
  const parsed = JudgeAnswerSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${issue?.path.join(".") || "(root)"}: ${issue?.message}.`;
  }
  const byId = new Map(parsed.data.scores.map((s) => [s.id, s]));
  const scores: JudgeScore[] = [];
  for (let id = 1; id <= expected; id++) {
    const s = byId.get(id);
    if (!s) return `it has no score for id ${id}; expected ids 1 to ${expected}.`;
    scores.push({ reward: s.reward, explanation: s.explanation });
  }
  if (parsed.data.scores.length !== expected) {
    return `it has ${parsed.data.scores.length} scores; expected exactly ${expected}.`;
  }
  return scores;
}

// Models wrap JSON in prose or code fences; take the outermost object.
function extractJson(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}
