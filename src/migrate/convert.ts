// One OpenAI fine-tuning line into the `{messages, tools?}` row the service's
// SFT trains on, with every change said. The service trains every assistant
// message of a row, so OpenAI's `weight: 0` can only be honoured by cutting:
// weight-0 messages after the last trained one are dropped (not trained, as
// on OpenAI); earlier ones must stay as context for the later turns, and are
// then trained too, which the report says.
import { toSftJsonl } from "../training/index.js";
import { formatZodPath } from "../wire/index.js";
import {
  CHAT_KEYS,
  type OpenAiChatLine,
  OpenAiChatLineSchema,
  type OpenAiMessage,
  OpenAiPreferenceLineSchema,
  PREFERENCE_KEYS,
} from "./openai-ft-schema.js";

/** One SFT row as the service trains it: what `toSftJsonl` reads. */
export interface SftRow {
  /** The conversation, ending with an assistant message (every assistant message is trained). */
  messages: Record<string, unknown>[];
  /** The tools offered, in the chat API's form. */
  tools?: Record<string, unknown>[];
}

/** What became of one line. */
export type LineStatus = "accepted" | "converted" | "refused" | "preference";

/** The outcome of one line: its status, what changed, and why it was refused. */
export interface Converted {
  /** What became of the line. */
  status: LineStatus;
  /** Sentences saying what was changed (status `converted`) or why nothing was (status `preference`). */
  changes: string[];
  /** `path: problem` for each reason of a refusal. */
  errors: string[];
  /** The SFT row (accepted and converted lines). */
  row?: SftRow;
}

/** Options of the conversion. */
export interface ConvertOptions {
  /** Turn a preference (DPO) example into an SFT row of its input and preferred output. Default false. */
  preferredAsSft?: boolean;
}

const refused = (errors: string[]): Converted => ({ status: "refused", changes: [], errors });

/**
 * Converts one parsed JSON value of an OpenAI fine-tuning file (a chat or a
 * preference example) into an SFT row, saying what changed or why not.
 *
 * @example
 * const { status, row, changes, errors } = convertLine(JSON.parse(line), { preferredAsSft: true });
 */
export function convertLine(value: unknown, options: ConvertOptions = {}): Converted {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return refused([
      `(root): expected a JSON object, got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`,
    ]);
  if ("preferred_output" in value || "non_preferred_output" in value)
    return convertPreference(value, options);
  const parsed = OpenAiChatLineSchema.safeParse(value);
  if (!parsed.success) return refused(zodErrors(parsed.error.issues));
  const changes = unknownKeys(value, CHAT_KEYS);
  return convertChat(parsed.data, changes);
}

function convertPreference(value: object, options: ConvertOptions): Converted {
  const parsed = OpenAiPreferenceLineSchema.safeParse(value);
  if (!parsed.success) return refused(zodErrors(parsed.error.issues));
  const changes = unknownKeys(value, PREFERENCE_KEYS);
  const { input, preferred_output } = parsed.data;
  if (!options.preferredAsSft)
    return {
      status: "preference",
      changes: [
        "a preference (DPO) example: not converted, as the Training Service has no DPO endpoint; --preferred-as-sft (preferredAsSft) trains its preferred answer as SFT",
      ],
      errors: [],
    };
  const chat: OpenAiChatLine = {
    messages: [...input.messages, ...preferred_output],
    ...(input.tools ? { tools: input.tools } : {}),
    ...(input.parallel_tool_calls !== undefined
      ? { parallel_tool_calls: input.parallel_tool_calls }
      : {}),
  };
  return convertChat(chat, [
    ...changes,
    "a preference (DPO) example: input.messages followed by preferred_output became the row; non_preferred_output was dropped",
  ]);
}

function convertChat(line: OpenAiChatLine, changes: string[]): Converted {
  const errors: string[] = [];
  const tools = toolsOf(line, changes);
  const messages = legacyToTools(line.messages, changes, errors);
  if (line.parallel_tool_calls === false)
    messages.forEach((m, i) => {
      const calls = m.tool_calls;
      if (Array.isArray(calls) && calls.length > 1)
        errors.push(
          `messages[${i}].tool_calls: parallel_tool_calls is false, but this message makes ${calls.length} calls`,
        );
    });
  if (line.parallel_tool_calls !== undefined)
    changes.push(
      `parallel_tool_calls (${line.parallel_tool_calls}) dropped: an SFT row has no such setting, and the tool calls are trained as written`,
    );
  if (errors.length > 0) return refused(errors);
  const kept = applyWeights(messages, changes);
  if (typeof kept === "string") return refused([kept]);
  const row: SftRow = { messages: kept, ...(tools ? { tools } : {}) };
  try {
    toSftJsonl([row]);
  } catch (error) {
    return refused([(error as Error).message]);
  }
  return { status: changes.length > 0 ? "converted" : "accepted", changes, errors: [], row };
}

function toolsOf(line: OpenAiChatLine, changes: string[]): Record<string, unknown>[] | undefined {
  const tools: Record<string, unknown>[] = [...(line.tools ?? [])];
  if (line.functions) {
    for (const f of line.functions) tools.push({ type: "function", function: f });
    changes.push(`functions (${line.functions.length}) converted to tools`);
  }
  return tools.length > 0 ? tools : undefined;
}

// The legacy form: an assistant `function_call` becomes a one-call
// `tool_calls` with an id of ours, and the `function` message answering it a
// `tool` message carrying that id.
function legacyToTools(
  input: OpenAiMessage[],
  changes: string[],
  errors: string[],
): Record<string, unknown>[] {
  let pending: string | undefined;
  let converted = 0;
  const out = input.map((m, i): Record<string, unknown> => {
    if (m.role === "assistant" && m.function_call) {
      if (m.tool_calls)
        errors.push(`messages[${i}]: has both function_call and tool_calls; expected one of them`);
      const { function_call, ...rest } = m;
      pending = `call_fn_${i}`;
      converted++;
      return { ...rest, tool_calls: [{ id: pending, type: "function", function: function_call }] };
    }
    if (m.role === "function") {
      if (!pending) {
        errors.push(`messages[${i}]: a function message with no assistant function_call before it`);
        return { ...m };
      }
      converted++;
      const { name: _name, role: _role, ...rest } = m;
      const id = pending;
      pending = undefined;
      return { role: "tool", ...rest, content: m.content ?? "", tool_call_id: id };
    }
    return { ...m };
  });
  if (converted > 0)
    changes.push(
      `${converted} legacy function_call/function message(s) converted to tool_calls/tool messages`,
    );
  return out;
}

// The row's messages, ending at the last trained assistant message, without
// `weight`; or why there is nothing to train.
function applyWeights(
  messages: Record<string, unknown>[],
  changes: string[],
): Record<string, unknown>[] | string {
  const isAssistant = (m: Record<string, unknown>) => m.role === "assistant";
  const trained = messages.flatMap((m, i) => (isAssistant(m) && m.weight !== 0 ? [i] : []));
  if (!messages.some(isAssistant)) return "messages: expected an assistant message to train on";
  const last = trained.at(-1);
  if (last === undefined)
    return "messages: every assistant message has weight 0, so nothing would be trained";
  const context = messages.flatMap((m, i) =>
    i < last && isAssistant(m) && m.weight === 0 ? [i] : [],
  );
  if (context.length > 0)
    changes.push(
      `weight 0 on ${context.map((i) => `messages[${i}]`).join(", ")}: kept as context for the later turns, and trained (the service trains every assistant message of a row)`,
    );
  const cut = messages.length - 1 - last;
  if (cut > 0) {
    const cutWeights = messages.slice(last + 1).filter((m) => isAssistant(m)).length;
    changes.push(
      `${cut} message(s) after messages[${last}], the last assistant message with weight 1, dropped${cutWeights > 0 ? ` (${cutWeights} with weight 0: not trained, as on OpenAI)` : ""}`,
    );
  }
  return messages.slice(0, last + 1).map((m) => {
    if (!("weight" in m)) return m;
    const { weight: _weight, ...rest } = m;
    return rest;
  });
}

function unknownKeys(value: object, known: Set<string>): string[] {
  const extra = Object.keys(value).filter((k) => !known.has(k));
  return extra.length > 0 ? [`unknown field(s) ${extra.join(", ")} dropped`] : [];
}

function zodErrors(issues: readonly { path: PropertyKey[]; message: string }[]): string[] {
  return issues.map((i) => `${formatZodPath(i.path)}: ${i.message}`);
}
