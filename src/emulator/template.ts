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
import { contentText, EOS_ID, slotId, TOOL_ID, tokenize, toolCallTokens, V } from "./model.js";

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
    else ids.push(...tokenize(contentText(m.content)));
    ids.push(EOS_ID);
  }
  ids.push(IM_START, ROLE.assistant!);
  if (drift.reasoning) ids.push(THINK, END_THINK);
  return ids;
}

function renderAssistant(m: Message, names: string[], drift: DriftOptions, ids: number[]): void {
  const reasoning = m.reasoning_content ?? m.reasoning;
  if (!drift.reasoning && typeof reasoning === "string" && reasoning)
    ids.push(THINK, ...tokenize(reasoning), END_THINK);
  ids.push(...tokenize(contentText(m.content)));
  for (const c of m.tool_calls ?? []) {
    const name = String(c.function?.name);
    const args = String(c.function?.arguments);
    if (!drift.toolArguments) ids.push(...toolCallTokens(name, args, names));
    else {
      const index = names.indexOf(name);
      ids.push(TOOL_ID, slotId(Math.max(index, 0)), ...jsonTokens(canonical(args)));
    }
  }
}

/** The arguments re-serialized with sorted keys (as text when they are not JSON). */
function canonical(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** A JSON value's tokens: punctuation, keys and string words, numbers as one token. */
function jsonTokens(value: unknown, out: number[] = []): number[] {
  if (typeof value === "string") out.push(id('"'), ...tokenize(value), id('"'));
  else if (typeof value === "number" || typeof value === "boolean" || value === null)
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
        out.push(id('"'), ...tokenize(k), id('"'), id(":"));
        jsonTokens((value as Record<string, unknown>)[k], out);
      });
    out.push(id("}"));
  }
  return out;
}
