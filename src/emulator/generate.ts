// Sampling completions from the policy: tokens, their logprobs, stop strings
// and tool calls whose arguments follow the tool's JSON schema.
import {
  EOS_ID,
  logits,
  logSoftmax,
  type Mask,
  type Params,
  rng,
  sample,
  TOOL_ID,
  tokenText,
  V,
  VOCAB,
  WORDS,
} from "./model.js";
import { type ValueSource, valueForSchema } from "./schema-value.js";

export interface GenOptions {
  feature: number;
  maxTokens: number;
  temperature: number;
  topP: number;
  seed: number;
  stop: string[];
  topLogprobs: number;
  /** Tool names offered; empty when tools are off. */
  tools: { name: string; parameters?: Record<string, unknown> }[];
  toolMode: "auto" | "required" | "none" | { name: string };
}

export interface GenToken {
  id: number;
  text: string;
  logprob: number;
  top: { id: number; text: string; logprob: number }[];
}

export interface Generation {
  tokens: GenToken[];
  content: string | null;
  toolCall: { id: string; name: string; arguments: string } | null;
  finishReason: "stop" | "length" | "tool_calls";
}

/** Samples one completion. */
export function generate(params: Params, o: GenOptions): Generation {
  const random = rng(o.seed);
  const greedy = o.temperature === 0;
  const toolsOn = o.tools.length > 0 && o.toolMode !== "none";
  const tokens: GenToken[] = [];
  let prev = EOS_ID;
  let text = "";
  for (let pos = 0; pos < o.maxTokens; pos++) {
    const mask: Mask = {
      allowTool: toolsOn && pos === 0,
      forceTool: toolsOn && pos === 0 && o.toolMode !== "auto",
    };
    const raw = logits(params, o.feature, prev, mask);
    const id = sample(logSoftmax(raw, o.temperature), random, o.topP, greedy);
    // Sampled at the request's temperature, reported as the policy's own
    // (temperature 1) log-probabilities, as vLLM's default "raw logprobs" are:
    // the trainer recomputes these, so fresh rollouts have ratio 1.
    const lp = logSoftmax(raw);
    const tok: GenToken = {
      id,
      text: tokenText(id, pos),
      logprob: lp[id] as number,
      top: topOf(lp, o.topLogprobs, pos),
    };
    if (id === EOS_ID) return { tokens, content: text, toolCall: null, finishReason: "stop" };
    tokens.push(tok);
    if (id === TOOL_ID) {
      tok.text = VOCAB[TOOL_ID] as string;
      const tool = pickTool(o, random);
      const args = valueForSchema(tool.parameters, policyWords(params, o.feature, random));
      return {
        tokens,
        content: null,
        toolCall: {
          id: `call_${Math.floor(random() * 2 ** 48).toString(36)}`,
          name: tool.name,
          arguments: JSON.stringify(args),
        },
        finishReason: "tool_calls",
      };
    }
    text += tok.text;
    const cut = firstStop(text, o.stop);
    if (cut !== -1)
      return { tokens, content: text.slice(0, cut), toolCall: null, finishReason: "stop" };
    prev = id;
  }
  return { tokens, content: text, toolCall: null, finishReason: "length" };
}

function firstStop(text: string, stops: string[]): number {
  let best = -1;
  for (const s of stops) {
    if (!s) continue;
    const i = text.indexOf(s);
    if (i !== -1 && (best === -1 || i < best)) best = i;
  }
  return best;
}

function topOf(lp: number[], k: number, pos: number): GenToken["top"] {
  if (k <= 0) return [];
  return lp
    .map((logprob, id) => ({ id, text: tokenText(id, pos), logprob }))
    .filter((x) => Number.isFinite(x.logprob))
    .sort((a, b) => b.logprob - a.logprob || a.id - b.id)
    .slice(0, Math.min(k, V));
}

function pickTool(o: GenOptions, random: () => number): GenOptions["tools"][number] {
  const r = random();
  // The chat layer rejects a named tool that is not offered, so this finds it.
  const named = typeof o.toolMode === "object" ? o.toolMode.name : undefined;
  const found = named === undefined ? undefined : o.tools.find((t) => t.name === named);
  return found ?? (o.tools[Math.floor(r * o.tools.length)] as GenOptions["tools"][number]);
}

/** Words for string arguments come from the policy, right after the tool token. */
function policyWords(params: Params, feature: number, random: () => number): ValueSource {
  const lp = logSoftmax(logits(params, feature, TOOL_ID, { allowTool: false, forceTool: false }));
  for (let i = WORDS.length; i < V; i++) lp[i] = Number.NEGATIVE_INFINITY;
  return { random, word: () => VOCAB[sample(lp, random, 1, false)] as string };
}
