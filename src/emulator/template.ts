// The emulator's chat template, rendered with its tokenizer into the prompt's
// token ids (`prompt_token_ids`). ChatML-like: the tools, then each message
// as `<|im_start|> role … <eos>` (the policy's end token ends every turn, as
// Qwen's `<|im_end|>` is its EOS), then the generation prompt
// `<|im_start|> assistant`. An assistant turn is rendered back as the tokens
// the policy sampled for it, so by default a later prompt extends the earlier
// prompt and its `token_ids`, as with vLLM and a template that keeps turns.
//
// The drift mode renders earlier turns as real templates do, breaking that:
// - `reasoning`: the generation prompt opens with an empty reasoning block
//   (`<think> </think>`, as Qwen3's template does with thinking off), and
//   earlier assistant turns are rendered without any reasoning block (theirs,
//   or the reasoning a client sent back on them);
// - `toolArguments`: earlier tool calls' arguments are rendered from their
//   JSON re-serialized canonically (keys sorted, punctuation as tokens), not
//   as the tokens sampled for them.
// Template-only tokens have ids past the policy's vocabulary: the policy
// never samples them and training never reads prompt ids.
import { findJsonProblem } from "../util/json-check.js";
import {
  contentText,
  countTokens,
  EOS_ID,
  slotId,
  TOOL_ID,
  tokenize,
  toolCallTokens,
  V,
} from "./model.js";

const SPECIAL = [
  "<|im_start|>",
  "system",
  "user",
  "assistant",
  "tool",
  "<tools>",
  "<think>",
  "</think>",
  "{",
  "}",
  "[",
  "]",
  ":",
  ",",
  '"',
  "<number>",
] as const;
/** The template's own tokens, after the policy's vocabulary. */
export const TEMPLATE_TOKENS: readonly string[] = SPECIAL;
const id = (token: (typeof SPECIAL)[number]) => V + SPECIAL.indexOf(token);
const IM_START = id("<|im_start|>");
const ROLE: Record<string, number> = {
  system: id("system"),
  developer: id("system"),
  user: id("user"),
  assistant: id("assistant"),
  tool: id("tool"),
};
const THINK = id("<think>");
const END_THINK = id("</think>");

/** How the template re-renders earlier turns (see the file's header). */
export interface DriftOptions {
  reasoning?: boolean;
  toolArguments?: boolean;
}

/** `true`: every drift; an object: the ones named. */
export type Drift = boolean | DriftOptions;

export function driftOf(drift: Drift | undefined): DriftOptions {
  if (drift === true) return { reasoning: true, toolArguments: true };
  if (!drift) return {};
  return { reasoning: drift.reasoning === true, toolArguments: drift.toolArguments === true };
}

type Message = {
  role?: unknown;
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: { function?: { name?: string; arguments?: string } }[] | null;
};

/** The token ids of `messages` (and `tools`) rendered by the template, with the generation prompt. */
export function renderPrompt(
  messages: readonly Message[],
  tools: readonly { function: { name: string } }[] | undefined,
  drift: DriftOptions = {},
): number[] {
  const names = (tools ?? []).map((t) => t.function.name);
  const ids: number[] = [];
  if (names.length) {
    ids.push(IM_START, id("<tools>"));
    for (let i = 0; i < names.length; i++) ids.push(slotId(i));
    ids.push(EOS_ID);
  }
  for (const m of messages) {
    const role = typeof m.role === "string" ? m.role : "user";
    ids.push(IM_START, ROLE[role] ?? ROLE.user!);
    if (role === "assistant") renderAssistant(m, names, drift, ids);
    else append(ids, tokenize(contentText(m.content)));
    ids.push(EOS_ID);
  }
  ids.push(IM_START, ROLE.assistant!);
  if (drift.reasoning) ids.push(THINK, END_THINK);
  return ids;
}

function renderAssistant(m: Message, names: string[], drift: DriftOptions, ids: number[]): void {
  const reasoning = m.reasoning_content ?? m.reasoning;
  if (!drift.reasoning && typeof reasoning === "string" && reasoning) {
    ids.push(THINK);
    append(ids, tokenize(reasoning));
    ids.push(END_THINK);
  }
  append(ids, tokenize(contentText(m.content)));
  for (const c of m.tool_calls ?? []) {
    const name = String(c.function?.name);
    const args = String(c.function?.arguments);
    if (!drift.toolArguments) append(ids, toolCallTokens(name, args, names));
    else {
      const index = names.indexOf(name);
      ids.push(TOOL_ID, slotId(Math.max(index, 0)));
      append(ids, jsonTokens(canonical(args)));
    }
  }
}

/** The arguments re-serialized with sorted keys (as text when they are not JSON). */
function canonical(args: string): unknown {
  try {
    const value: unknown = JSON.parse(args);
    // Nested deeper than any real call: kept as text rather than walked.
    return findJsonProblem(value) ? args : value;
  } catch {
    return args;
  }
}

/** Appends `more` to `ids` one by one: a spread of a long list overflows the call stack. */
function append(ids: number[], more: readonly number[]): void {
  for (const x of more) ids.push(x);
}

/**
 * The prompt's length in tokens as {@link renderPrompt} would make it,
 * counted without rendering; exact, except that tool calls' own tokens are
 * left out (`exact: false` then). Cheap, so that an over-long prompt is
 * refused before any work.
 */
export function promptTokenFloor(
  messages: readonly Message[],
  tools: readonly unknown[] | undefined,
  drift: DriftOptions = {},
): { tokens: number; exact: boolean } {
  let tokens = (tools?.length ? 3 + tools.length : 0) + 2 + (drift.reasoning ? 2 : 0);
  let exact = true;
  for (const m of messages) {
    tokens += 3 + countTokens(contentText(m.content));
    if (m.role !== "assistant") continue;
    const reasoning = m.reasoning_content ?? m.reasoning;
    if (!drift.reasoning && typeof reasoning === "string" && reasoning)
      tokens += 2 + countTokens(reasoning);
    if (m.tool_calls?.length) exact = false;
  }
  return { tokens, exact };
}

/** A JSON value's tokens: punctuation, keys and string words, numbers as one token. */
function jsonTokens(value: unknown, out: number[] = []): number[] {
  if (typeof value === "string") {
    out.push(id('"'));
    append(out, tokenize(value));
    out.push(id('"'));
  } else if (typeof value === "number" || typeof value === "boolean" || value === null)
    out.push(id("<number>"));
  else if (Array.isArray(value)) {
    out.push(id("["));
    value.forEach((v, i) => {
      if (i) out.push(id(","));
      jsonTokens(v, out);
    });
    out.push(id("]"));
  } else if (typeof value === "object") {
    out.push(id("{"));
    Object.keys(value as object)
      .sort()
      .forEach((k, i) => {
        if (i) out.push(id(","));
        out.push(id('"'));
        append(out, tokenize(k));
        out.push(id('"'), id(":"));
        jsonTokens((value as Record<string, unknown>)[k], out);
      });
    out.push(id("}"));
  }
  return out;
}
