// Sampling completions from the policy: tokens, their logprobs, stop strings
// and tool calls. A tool call is tokens too: `<tool>`, the tool's name token,
// then one token per word of the string arguments, each with its logprob.
import {
  EOS_ID,
  logits,
  logSoftmax,
  type Params,
  type Position,
  positionAt,
  rng,
  sample,
  slotId,
  slotOf,
  startPrev,
  TOOL_ID,
  tokenText,
  V,
  VOCAB,
  WORDS,
} from "./model.js";
import { type ValueSource, valueForSchema } from "./schema-value.js";

export interface GenOptions {
  /** The prompt's feature rows (`promptFeatures`). */
  features: number[];
  /** Most tokens of the completion, `<eos>` included (a tool call is always completed). */
  maxTokens: number;
  /** vLLM's `min_tokens`: `<eos>` and `stopTokenIds` are not drawn before this many tokens. */
  minTokens: number;
  /** vLLM's `ignore_eos`: a sampled `<eos>` does not end the answer (it adds no text). */
  ignoreEos: boolean;
  /** vLLM's `stop_token_ids`: tokens that end the answer, as `<eos>` does. */
  stopTokenIds: number[];
  /** vLLM's `include_stop_str_in_output`: keep the stop string (or stop token's text) in the content. */
  includeStopStr: boolean;
  temperature: number;
  topP: number;
  seed: number;
  stop: string[];
  topLogprobs: number;
  /** Tools offered; empty when the request has none. */
  tools: { name: string; parameters?: Record<string, unknown> }[];
  toolMode: "auto" | "required" | "none" | { name: string };
  /** Mixed into tool call ids (a hash of the prompt), so each turn's ids differ. */
  idSalt?: number;
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
  /**
   * vLLM's `stop_reason`: the stop string or stop token id that ended the
   * answer; `null` when `<eos>` (or the length) did.
   */
  stopReason: string | number | null;
}

/**
 * Temperatures below this sample greedily, as vLLM's do: dividing logits by
 * a temperature such as 1e-310 overflows to infinities.
 */
const GREEDY_BELOW = 1e-5;

/**
 * Draws the next token. Sampling honours the temperature, top_p and `only`
 * (what tool_choice or an enum forces), but the logprob reported is the
 * policy's own at temperature 1 over every token the position may hold, as
 * vLLM's default raw logprobs are (taken before any logits processor): that
 * is exactly what the trainer recomputes, so fresh rollouts have ratio 1.
 */
class Sampler {
  readonly tokens: GenToken[] = [];
  /** Inside a tool call tokens read as the call does: `<tool>`, the tool's name, bare words. */
  inCall = false;
  constructor(
    private readonly params: Params,
    private readonly o: GenOptions,
    readonly random: () => number,
  ) {}

  next(at: Position, only?: ReadonlySet<number>): GenToken {
    const prev = this.tokens.at(-1)?.id ?? startPrev(this.o.features);
    const raw = logits(this.params, this.o.features, prev, at);
    let draw = raw;
    if (only) draw = raw.map((x, id) => (only.has(id) ? x : Number.NEGATIVE_INFINITY));
    const greedy = this.o.temperature < GREEDY_BELOW;
    const id = sample(
      logSoftmax(draw, greedy ? 1 : this.o.temperature),
      this.random,
      this.o.topP,
      greedy,
    );
    const lp = logSoftmax(raw);
    const text = (x: number) => this.textOf(x, this.tokens.length);
    const tok: GenToken = {
      id,
      text: text(id),
      logprob: lp[id] as number,
      top: topOf(lp, this.o.topLogprobs, text),
    };
    this.tokens.push(tok);
    return tok;
  }

  private textOf(id: number, pos: number): string {
    if (!this.inCall) return tokenText(id, pos);
    const slot = slotOf(id);
    if (slot === -1) return VOCAB[id] as string;
    return this.o.tools.find((_, i) => slotId(i) === id)?.name ?? (VOCAB[id] as string);
  }
}

/** Samples one completion. */
export function generate(params: Params, o: GenOptions): Generation {
  const random = rng(o.seed);
  const s = new Sampler(params, o, random);
  const nTools = o.tools.length;
  const forced = nTools > 0 && o.toolMode !== "auto" && o.toolMode !== "none";
  const stopIds = new Set(o.stopTokenIds);
  const ended = (
    content: string,
    finishReason: Generation["finishReason"],
    stopReason: string | number | null = null,
  ): Generation => ({
    tokens: s.tokens,
    content,
    toolCall: null,
    finishReason,
    stopReason,
  });
  let text = "";
  for (let pos = 0; pos < o.maxTokens; pos++) {
    const at = positionAt(pos, s.tokens[0]?.id, nTools);
    const only = drawable(pos, o, forced, stopIds);
    const tok = s.next(at, only);
    if (tok.id === TOOL_ID) {
      s.inCall = true;
      tok.text = VOCAB[TOOL_ID] as string;
      for (const t of tok.top) t.text = VOCAB[t.id] as string;
      return toolCall(s, o);
    }
    // As vLLM's scheduler does: the length is checked first, so a stop token
    // drawn as the last allowed token still ends at "length".
    const full = pos + 1 >= o.maxTokens;
    const stopToken = stopIds.has(tok.id);
    if ((tok.id === EOS_ID && !o.ignoreEos) || stopToken) {
      // `<eos>` is a special token: never text. A stop token's text stays
      // out of the content unless include_stop_str_in_output asks for it.
      if (tok.id !== EOS_ID && o.includeStopStr) text += tok.text;
      return ended(text, full ? "length" : "stop", stopToken ? tok.id : null);
    }
    if (tok.id !== EOS_ID) text += tok.text;
    const stop = firstStop(text, o.stop);
    if (stop) {
      const content = text.slice(0, o.includeStopStr ? stop.at + stop.text.length : stop.at);
      return ended(content, "stop", stop.text);
    }
  }
  return ended(text, "length");
}

/**
 * What the position may draw, when something narrows it: tool_choice at the
 * first token, and min_tokens keeping `<eos>` and the stop tokens back.
 */
function drawable(
  pos: number,
  o: GenOptions,
  forced: boolean,
  stopIds: ReadonlySet<number>,
): Set<number> | undefined {
  if (pos === 0 && forced) return new Set([TOOL_ID]);
  const toolsOff = pos === 0 && o.tools.length > 0 && o.toolMode === "none";
  const held = pos < o.minTokens;
  if (!toolsOff && !held) return undefined;
  return new Set(
    Array.from({ length: V }, (_, i) => i).filter(
      (i) => !(toolsOff && i === TOOL_ID) && !(held && (i === EOS_ID || stopIds.has(i))),
    ),
  );
}

/** After `<tool>`: the name token, then arguments whose words are sampled tokens. */
function toolCall(s: Sampler, o: GenOptions): Generation {
  const nTools = o.tools.length;
  const named = typeof o.toolMode === "object" ? o.toolMode.name : undefined;
  // The chat layer rejects a named tool that is not offered, so this finds it.
  const namedIndex = named === undefined ? -1 : o.tools.findIndex((t) => t.name === named);
  const nameTok = s.next(
    { kind: "name", tools: nTools },
    namedIndex === -1 ? undefined : new Set([slotId(namedIndex)]),
  );
  // Tools 16 apart share a name token; the first of them answers to it.
  const index =
    namedIndex !== -1 ? namedIndex : o.tools.findIndex((_, i) => slotId(i) === nameTok.id);
  const tool = o.tools[index] as GenOptions["tools"][number];
  const words = new Map<string, number>(WORDS.map((w, i) => [w, i]));
  const source: ValueSource = {
    random: s.random,
    word: (among) => {
      const only = among ? new Set(among.map((w) => words.get(w) as number)) : undefined;
      return VOCAB[s.next({ kind: "arg", tools: nTools }, only).id] as string;
    },
    isWord: (w) => words.has(w),
  };
  const args = valueForSchema(tool.parameters, source);
  // The call ends with `<eos>`, as a model's tool call ends its turn (its
  // only possible token there: logprob 0), so token_ids end as vLLM's do.
  s.next({ kind: "end", tools: nTools });
  return {
    tokens: s.tokens,
    content: null,
    toolCall: {
      // Seeded, so the same request gives the same answer, and salted with
      // the prompt: an agent that sends one seed every turn (the Agents SDK
      // with providerData.seed) never sees a call id twice in a run.
      id: `call_${(((s.random() * 2 ** 32) ^ (o.idSalt ?? 0)) >>> 0).toString(36)}${Math.floor(s.random() * 2 ** 20).toString(36)}`,
      name: tool.name,
      arguments: JSON.stringify(args),
    },
    finishReason: "tool_calls",
    stopReason: null,
  };
}

/** The earliest stop string in `text`, if any. */
function firstStop(text: string, stops: string[]): { at: number; text: string } | undefined {
  let best: { at: number; text: string } | undefined;
  for (const stop of stops) {
    if (!stop) continue;
    const at = text.indexOf(stop);
    if (at !== -1 && (best === undefined || at < best.at)) best = { at, text: stop };
  }
  return best;
}

function topOf(lp: number[], k: number, text: (id: number) => string): GenToken["top"] {
  if (k <= 0) return [];
  return lp
    .map((logprob, id) => ({ id, text: text(id), logprob }))
    .filter((x) => Number.isFinite(x.logprob))
    .sort((a, b) => b.logprob - a.logprob || a.id - b.id)
    .slice(0, Math.min(k, V));
}
