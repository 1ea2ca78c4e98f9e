// The token checks of validateGroup: what ART's tokenizer refuses or trains
// wrong. A Choice whose logprobs do not pair one to one with its `token_ids`
// (ART raises RuntimeError), and a history whose later turn's prompt does not
// extend the tokens of its earlier turn (data recorded elsewhere, or edited:
// trained as one sequence, the later turn would be conditioned on tokens the
// model never saw). Also what the histories of a group share: the tokens of
// common prefixes a trainer reads once per history.

import type { ValidationProblem } from "./errors.js";
import {
  type ChoiceTokens,
  choiceTokens,
  describeDeparture,
  duplicatePrefixTokens,
  lineageDeparture,
  logprobCount,
  SPLIT_LOG,
  type TokenSequence,
} from "./lineage.js";

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A Choice's logprobs must pair one to one with its `token_ids`. */
export function checkTokenCount(c: Obj, path: string, out: ValidationProblem[]): void {
  const ids = c.token_ids;
  if (!Array.isArray(ids)) return;
  const count = logprobCount(c.logprobs);
  if (count === undefined || count === ids.length) return;
  out.push({
    path: `${path}.logprobs.content`,
    message: `holds ${count} logprobs for ${ids.length} token_ids: each sampled token needs its logprob (ART's tokenizer raises RuntimeError on a mismatch)`,
  });
}

/**
 * Within one history, each Choice's `prompt_token_ids` must start with the
 * previous Choice's `prompt_token_ids` and `token_ids` (the stop token a
 * template renders its own way excepted, as the recorder does).
 */
export function checkLineage(
  items: readonly unknown[],
  path: string,
  out: ValidationProblem[],
): void {
  let prev: ChoiceTokens | undefined;
  let prevAt = -1;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (!isObj(item) || !("message" in item)) continue;
    const tokens = choiceTokens(item);
    if (!tokens) continue;
    if (prev) {
      const at = lineageDeparture(prev, tokens.prompt);
      if (at !== -1)
        out.push({
          path: `${path}[${i}].prompt_token_ids`,
          message: `does not extend the tokens of ${path}[${prevAt}]: ${describeDeparture(prev, tokens.prompt, at)}. Trained as one history, this turn would be conditioned on tokens the model never saw: split it into its own history (the recorder does, with lineage: "tokens"), or allowLineageBreaks`,
        });
    }
    prev = tokens;
    prevAt = i;
  }
}

/** What the histories of a group share, in tokens (see `groupTokenSharing`). */
export interface TokenSharing {
  /** Histories (main and additional) whose last Choice carries token ids. */
  histories: number;
  /** Splits the recorder made where the tokens diverged (counted from `logs`). */
  splits: number;
  /**
   * Tokens a prefix tree of the histories would hold once but a trainer
   * reading each history as its own sequence reads again: shared system
   * prompts, the turns before a split, the prompt of n > 1 samples. The
   * Training Service's format has no way to say a prefix is shared, so they
   * are counted, not left out.
   */
  duplicatePrefixTokens: number;
}

/** The token sequence of each history of `t` (its last Choice's prompt then tokens). */
function sequences(t: Obj, into: TokenSequence[]): void {
  const histories = [t.messages_and_choices];
  if (Array.isArray(t.additional_histories))
    for (const h of t.additional_histories) if (isObj(h)) histories.push(h.messages_and_choices);
  for (const items of histories) {
    if (!Array.isArray(items)) continue;
    for (let i = items.length - 1; i >= 0; i--) {
      const tokens = choiceTokens(items[i]);
      if (!tokens) continue;
      into.push({ head: tokens.prompt, tail: tokens.sampled });
      break;
    }
  }
}

/** How many histories, splits and duplicate prefix tokens the trajectories of a group hold. */
export function groupTokenSharing(trajectories: readonly unknown[]): TokenSharing {
  const seqs: TokenSequence[] = [];
  let splits = 0;
  for (const t of trajectories) {
    if (!isObj(t)) continue;
    sequences(t, seqs);
    if (Array.isArray(t.logs))
      for (const line of t.logs)
        if (typeof line === "string" && line.startsWith(SPLIT_LOG)) splits++;
  }
  return { histories: seqs.length, splits, duplicatePrefixTokens: duplicatePrefixTokens(seqs) };
}
