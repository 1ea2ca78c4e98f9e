// The check's findings said briefly: one line per kind of finding, with its
// count and the first path; unasked, each kind once per process.

import type { ValidationProblem } from "./errors.js";
import { NO_TRAINABLE } from "./validate-group.js";

const WARNED = Symbol.for("trajectory-recorder.check-warned");
const shared = globalThis as { [WARNED]?: Set<string> };

/** A kind of finding: the key it is said once by, and how a count of it reads. */
interface FindingKind {
  key: string;
  /** e.g. "Choices lack token ids" for `n` > 1, "Choice lacks token ids" for one. */
  say(n: number): string;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const KINDS: Record<string, FindingKind> = {
  token_ids: {
    key: "token_ids",
    say: (n) =>
      `${plural(n, "Choice lacks", "Choices lack")} token ids (token_ids, prompt_token_ids)`,
  },
  logprobs: {
    key: "logprobs",
    say: (n) => `${plural(n, "Choice lacks", "Choices lack")} logprobs`,
  },
  finish_reason: {
    key: "finish_reason",
    say: (n) => `${plural(n, "Choice has", "Choices have")} a finish_reason the schema refuses`,
  },
  tool_call_id: {
    key: "tool_call_id",
    say: (n) => `${plural(n, "tool message answers", "tool messages answer")} no open call`,
  },
  metadata: {
    key: "metadata",
    say: (n) =>
      `${plural(n, "metadata value is", "metadata values are")} not a scalar (the service answers 422)`,
  },
  untrainable: {
    key: "untrainable",
    say: (n) =>
      `${plural(n, "group holds", "groups hold")} no trainable Choice (was the openai client wrapped, and called inside recorder.rollout()?)`,
  },
  other: { key: "other", say: (n) => `${plural(n, "other problem", "other problems")}` },
};

/** The kind of a finding, from where it was found (not from its wording). */
function kindOf(problem: ValidationProblem): FindingKind {
  if (problem.message === NO_TRAINABLE) return KINDS.untrainable as FindingKind;
  if (/(^|\.)metadata(\.|$)/.test(problem.path)) return KINDS.metadata as FindingKind;
  const last = problem.path.slice(problem.path.lastIndexOf(".") + 1);
  if (last in KINDS && last !== "other" && last !== "untrainable")
    return KINDS[last] as FindingKind;
  return KINDS.other as FindingKind;
}

/**
 * The findings said briefly: one line per kind, with its count and the path
 * of the first; in the order the kinds were first found.
 */
function summarize(problems: ValidationProblem[]): { key: string; line: string }[] {
  const byKind = new Map<FindingKind, { count: number; first: ValidationProblem }>();
  for (const p of problems) {
    const kind = kindOf(p);
    const seen = byKind.get(kind);
    if (seen) seen.count++;
    else byKind.set(kind, { count: 1, first: p });
  }
  return [...byKind].map(([kind, { count, first }]) => ({
    key: kind.key,
    line: `${kind.say(count)}, first ${first.path}${kind === KINDS.other ? ` (${first.message})` : ""}`,
  }));
}

const HOW_TO_LIST = "validateGroup() or `trajectory-recorder validate` lists them";

/** Unasked, each kind of finding is said once per process, in one short line. */
export function warnOnce(where: string, problems: ValidationProblem[]): void {
  shared[WARNED] ??= new Set();
  const said = shared[WARNED];
  for (const { key, line } of summarize(problems)) {
    if (said.has(key)) continue;
    said.add(key);
    console.warn(
      `${where}: ${line}; ${HOW_TO_LIST} (said once per process; validate: "throw" refuses such groups).`,
    );
  }
}

/** Asked for (`"warn"` with options), the findings are said on every call, briefly. */
export function briefly(where: string, problems: ValidationProblem[]): string {
  return `${where}: ${summarize(problems)
    .map((s) => s.line)
    .join("; ")}; ${HOW_TO_LIST}.`;
}
