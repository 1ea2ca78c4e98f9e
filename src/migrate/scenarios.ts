// OpenAI validation files and RFT datasets as evaluation scenarios: each line
// a prompt to answer and the item a grader reads. A chat example that ends
// with an assistant message is a prompt (the messages before it) plus the
// answer OpenAI would have trained on, kept as `item.reference`.
import { createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type OpenAI from "openai";
import type { Recorder } from "../recorder/index.js";
import type { GraderReward } from "../rewards/index.js";
import type { Trajectory } from "../trajectory/index.js";
import { InvalidArgumentError } from "../util/argument-error.js";
import { formatZodPath } from "../wire/index.js";
import { OpenAiDatasetItemSchema } from "./openai-ft-schema.js";

/** One prompt of a dataset, ready to be answered and graded. */
export interface OpenAiScenario {
  /** The item's `id` (a string or number field) when it has one, else `line N`. */
  id: string;
  /** Its line in the file, from 1 (its position from 1 for an array). */
  line: number;
  /** The prompt: the item's messages, without OpenAI's `weight` keys. */
  messages: OpenAI.Chat.ChatCompletionMessageParam[];
  /** The item's tools, when it has any. */
  tools?: OpenAI.Chat.ChatCompletionTool[];
  /**
   * The whole item, as a grader's `{{ item.* }}` reads it; for a chat
   * example ending with an assistant message, with `reference` (that
   * message's text) and `reference_message` (the message itself) added.
   */
  item: Record<string, unknown>;
}

/**
 * A grader for chat validation files, which carry no grader of their own:
 * the answer must equal the example's assistant message (`item.reference`).
 */
export const REFERENCE_GRADER = {
  type: "string_check",
  name: "matches_reference",
  input: "{{ sample.output_text }}",
  reference: "{{ item.reference }}",
  operation: "eq",
} as const;

const CALL = "readOpenAiScenarios(input)";
const MAX_LISTED = 5;

/**
 * Reads an OpenAI validation file (chat format) or reinforcement fine-tuning
 * dataset (a path, a readable stream, or the items themselves) into scenarios
 * for `evaluateCheckpoints` and `runRft`. Every line is checked first: bad
 * lines throw one `InvalidArgumentError` naming each line and field path.
 *
 * @example
 * const scenarios = await readOpenAiScenarios("valid.jsonl");
 * const reward = graderReward(REFERENCE_GRADER);
 * await evaluateCheckpoints(model, { scenarios, steps: [0, 4], recorder, rollout: scenarioRollout({ recorder, reward }) });
 */
export async function readOpenAiScenarios(
  input: string | Readable | readonly unknown[],
): Promise<OpenAiScenario[]> {
  const scenarios: OpenAiScenario[] = [];
  const problems: string[] = [];
  let n = 0;
  for await (const value of itemsOf(input)) {
    n++;
    if (value === BLANK) continue;
    const result = scenarioOf(value, n);
    if (typeof result === "string") problems.push(`line ${n}: ${result}`);
    else scenarios.push(result);
  }
  if (problems.length > 0)
    throw new InvalidArgumentError(
      CALL,
      "input",
      "OpenAI dataset items ({ messages, tools?, ...fields })",
      input,
      `${problems.length} of ${n} line(s) are not usable: ${problems.slice(0, MAX_LISTED).join("; ")}${problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more` : ""}`,
    );
  if (scenarios.length === 0)
    throw new InvalidArgumentError(CALL, "input", "at least one item", input, "it holds no item");
  return scenarios;
}

const BLANK = Symbol("blank line");

async function* itemsOf(input: string | Readable | readonly unknown[]): AsyncGenerator<unknown> {
  if (Array.isArray(input)) {
    yield* input;
    return;
  }
  if (typeof input === "string")
    await access(input).catch((error: NodeJS.ErrnoException) => {
      throw new InvalidArgumentError(
        CALL,
        "input",
        "a readable file",
        input,
        `the file ${input} could not be read (${error.code ?? String(error)})`,
      );
    });
  const stream = typeof input === "string" ? createReadStream(input) : (input as Readable);
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const text of lines) {
      if (text.trim() === "") {
        yield BLANK;
        continue;
      }
      try {
        yield JSON.parse(text);
      } catch (error) {
        yield new NotJson((error as Error).message);
      }
    }
  } finally {
    lines.close();
    if (typeof input === "string") stream.destroy();
  }
}

class NotJson {
  constructor(readonly reason: string) {}
}

function scenarioOf(value: unknown, line: number): OpenAiScenario | string {
  if (value instanceof NotJson) return `not JSON (${value.reason})`;
  const parsed = OpenAiDatasetItemSchema.safeParse(value);
  if (!parsed.success)
    return parsed.error.issues
      .slice(0, 3)
      .map((i) => `${formatZodPath(i.path) || "(root)"}: ${i.message}`)
      .join(", ");
  const item = { ...(value as Record<string, unknown>) };
  const messages = parsed.data.messages.map(({ weight: _weight, ...m }) => m);
  const last = messages.at(-1);
  if (last?.role === "assistant") {
    // A chat example: the answer it trained on becomes the reference.
    messages.pop();
    if (messages.length === 0) return "messages: expected a prompt before the assistant message";
    item.reference = textOf(last.content);
    item.reference_message = last;
  }
  const id = item.id;
  return {
    id: typeof id === "string" || typeof id === "number" ? String(id) : `line ${line}`,
    line,
    messages: messages as OpenAI.Chat.ChatCompletionMessageParam[],
    ...(parsed.data.tools ? { tools: parsed.data.tools as OpenAI.Chat.ChatCompletionTool[] } : {}),
    item,
  };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
}

/** Options of {@link scenarioRollout}. */
export interface ScenarioRolloutOptions {
  /** Records the calls (the `recorder` given to `model.openai` / `evaluateCheckpoints`). */
  recorder: Recorder;
  /** Scores the answer against the item: `graderReward(grader)`. */
  reward: GraderReward;
  /** Extra fields of each chat request, e.g. `{ max_tokens: 4, temperature: 1 }`. */
  requestOptions?: Record<string, unknown>;
  /** A request's seed from the attempt: same seed, same answer on the emulator. */
  seed?: (scenario: OpenAiScenario, attempt: number) => number | undefined;
}

/**
 * The rollout of a scenario for `evaluateCheckpoints`: one answer to its
 * messages on the checkpoint, recorded, scored by the grader.
 *
 * @example
 * const rollout = scenarioRollout({ recorder, reward: graderReward(grader), requestOptions: { max_tokens: 8 } });
 * await evaluateCheckpoints(model, { scenarios, steps: [0], recorder, rollout });
 */
export function scenarioRollout(
  options: ScenarioRolloutOptions,
): (scenario: OpenAiScenario, ctx: { openai: OpenAI; attempt: number }) => Promise<Trajectory> {
  return (scenario, ctx) =>
    answerScenario(ctx.openai, scenario, options, options.seed?.(scenario, ctx.attempt));
}

/**
 * One recorded, graded answer to a scenario from `openai` (a client from
 * `model.openai({ recorder })`), with an optional seed.
 *
 * @example
 * const t = await answerScenario(model.openai({ recorder }), scenarios[0], { recorder, reward }, 7);
 * console.log(t.reward, t.metrics);
 */
export async function answerScenario(
  openai: OpenAI,
  scenario: OpenAiScenario,
  options: ScenarioRolloutOptions,
  seed: number | undefined,
): Promise<Trajectory> {
  const trajectory = await options.recorder.rollout(
    async () => {
      await openai.chat.completions.create({
        ...options.requestOptions,
        model: "",
        messages: scenario.messages,
        ...(scenario.tools ? { tools: scenario.tools } : {}),
        ...(seed === undefined ? {} : { seed }),
      });
    },
    { metadata: { scenario: scenario.id } },
  );
  trajectory.reward = await options.reward(trajectory, scenario.item);
  return trajectory;
}
