// score_model and label_model: the grader's prompt, rendered, sent as one
// chat completion through the same client shape the judge uses.
import type { JudgeClient } from "../judge.js";
import { JudgeResponseError } from "../judge.js";
import type { GraderInputMessage, LabelModelGraderJson, ScoreModelGraderJson } from "./schema.js";
import { render, type Sample } from "./template.js";

/** Where model graders send their prompts. */
export interface ModelGraderTarget {
  client: JudgeClient;
  /** Replaces the grader's `model` (an OpenAI model name the server may not serve). */
  model?: string;
  /** Extra fields for every request. */
  requestOptions?: Record<string, unknown>;
}

type Scope = { item: unknown; sample: Sample };

function messagesOf(input: GraderInputMessage[], scope: Scope, call: string) {
  return input.map((m) => ({
    role: m.role,
    content: render(
      typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join(""),
      scope,
      call,
    ),
  }));
}

// OpenAI's sampling_params under the chat API's names.
function samplingOf(grader: ScoreModelGraderJson): Record<string, unknown> {
  const { max_completions_tokens, ...rest } = grader.sampling_params ?? {};
  return {
    ...rest,
    ...(max_completions_tokens !== undefined
      ? { max_completion_tokens: max_completions_tokens }
      : {}),
  };
}

async function ask(
  target: ModelGraderTarget,
  model: string,
  messages: unknown[],
  extra: Record<string, unknown>,
) {
  const completion = await target.client.chat.completions.create({
    ...extra,
    ...target.requestOptions,
    model: target.model ?? model,
    messages,
  });
  const content: unknown = completion?.choices?.[0]?.message?.content;
  return typeof content === "string" ? content : "";
}

/** The score_model grader's score: the model's number, clamped to `range` (default [0, 1]). */
export async function scoreModel(
  grader: ScoreModelGraderJson,
  target: ModelGraderTarget,
  scope: Scope,
  call: string,
) {
  const [lo, hi] = grader.range ?? [0, 1];
  const messages = [
    ...messagesOf(grader.input, scope, call),
    {
      role: "system",
      content: `Give your score as a JSON object {"result": <a number from ${lo} to ${hi}>} and nothing after it.`,
    },
  ];
  const answer = await ask(target, grader.model, messages, samplingOf(grader));
  const score = numberIn(answer);
  if (score === undefined)
    throw new JudgeResponseError(
      `The score_model grader ${JSON.stringify(grader.name)} got no number from ${target.model ?? grader.model}.`,
      answer,
    );
  return Math.min(hi, Math.max(lo, score));
}

/** The label_model grader's score: 1 when the model's label is a passing one, else 0. */
export async function labelModel(
  grader: LabelModelGraderJson,
  target: ModelGraderTarget,
  scope: Scope,
  call: string,
) {
  const messages = [
    ...messagesOf(grader.input, scope, call),
    {
      role: "system",
      content: `Answer with exactly one of these labels and nothing else: ${grader.labels.join(", ")}.`,
    },
  ];
  const answer = await ask(target, grader.model, messages, {});
  const label = labelIn(answer, grader.labels);
  if (label === undefined)
    throw new JudgeResponseError(
      `The label_model grader ${JSON.stringify(grader.name)} got none of its labels (${grader.labels.join(", ")}) from ${target.model ?? grader.model}.`,
      answer,
    );
  return grader.passing_labels.includes(label) ? 1 : 0;
}

function numberIn(answer: string): number | undefined {
  const start = answer.indexOf("{");
  const end = answer.lastIndexOf("}");
  if (start >= 0 && end > start) {
    try {
      const json = JSON.parse(answer.slice(start, end + 1));
      for (const key of ["result", "score"])
        if (typeof json?.[key] === "number" && Number.isFinite(json[key])) return json[key];
    } catch {
      // Not JSON: the first number of the text is the score.
    }
  }
  const m = answer.match(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/);
  return m ? Number(m[0]) : undefined;
}

function labelIn(answer: string, labels: string[]): string | undefined {
  const text = answer.trim().replace(/^["'`]+|["'`.]+$/g, "");
  const exact =
    labels.find((l) => l === text) ?? labels.find((l) => l.toLowerCase() === text.toLowerCase());
  if (exact) return exact;
  const found = labels.filter((l) =>
    new RegExp(`\\b${l.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "i").test(answer),
  );
  return found.length === 1 ? found[0] : undefined;
}
