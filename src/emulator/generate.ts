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
    const lp = logSoftmax(logits(params, o.feature, prev, mask), o.temperature);
    const id = sample(lp, random, o.topP, greedy);
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
      const args = valueFor(tool.parameters ?? { type: "object" }, random, params, o.feature);
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
  if (typeof o.toolMode === "object") {
    const named = o.toolMode.name;
    const found = o.tools.find((t) => t.name === named);
    if (found) return found;
  }
  return o.tools[Math.floor(r * o.tools.length)] as GenOptions["tools"][number];
}

/** A value that satisfies a (simple) JSON schema; words are sampled from the policy. */
function valueFor(
  schema: Record<string, unknown>,
  random: () => number,
  params: Params,
  feature: number,
): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[Math.floor(random() * schema.enum.length)];
  }
  if ("const" in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string": {
      const lp = logSoftmax(
        logits(params, feature, TOOL_ID, { allowTool: false, forceTool: false }),
      );
      for (let i = WORDS.length; i < V; i++) lp[i] = Number.NEGATIVE_INFINITY;
      return VOCAB[sample(lp, random, 1, false)];
    }
    case "integer":
      return clampNumber(Math.floor(random() * 10), schema);
    case "number":
      return clampNumber(Math.round(random() * 100) / 10, schema);
    case "boolean":
      return random() < 0.5;
    case "null":
      return null;
    case "array": {
      const items = (schema.items as Record<string, unknown> | undefined) ?? { type: "string" };
      const min = typeof schema.minItems === "number" ? schema.minItems : 1;
      return Array.from({ length: min }, () => valueFor(items, random, params, feature));
    }
    default: {
      const props =
        (schema.properties as Record<string, Record<string, unknown>> | undefined) ?? {};
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(props))
        out[key] = valueFor(sub, random, params, feature);
      return out;
    }
  }
}

function clampNumber(x: number, schema: Record<string, unknown>): number {
  let v = x;
  if (typeof schema.minimum === "number") v = Math.max(v, schema.minimum);
  if (typeof schema.maximum === "number") v = Math.min(v, schema.maximum);
  return v;
}
