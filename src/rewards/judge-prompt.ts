import type { MessageParam, ToolParam } from "../trajectory/index.js";

/** The rubric the judge uses unless given another. */
export const DEFAULT_JUDGE_RUBRIC = [
  "- A trajectory that reaches the user's goal beats one that does not.",
  "- Among those that reach it, prefer the one that is more correct, clearer and uses fewer needless steps.",
  "- Partial progress earns partial credit; mistakes, invented facts and broken tool use cost points.",
  "- Use the whole range: the best trajectory should score near 1 and a useless one near 0.",
].join("\n");

/** The messages sent to the judge model for a list of conversations. */
export function buildJudgePrompt(
  conversations: readonly MessageParam[][],
  options: { rubric: string; tools: readonly ToolParam[] | null },
): { role: "system" | "user"; content: string }[] {
  const prefix = commonPrefixLength(conversations);
  const n = conversations.length;
  const system = [
    `You are comparing ${n} attempts by an AI agent at the same task.`,
    "Read them side by side and give each a reward between 0 and 1 that reflects how well it did relative to the others, with a one or two sentence explanation.",
    "",
    "Rubric:",
    options.rubric,
    "",
    'Answer with JSON only, in this exact shape: {"scores": [{"id": 1, "reward": 0.0, "explanation": "..."}]}',
    `Give exactly ${n} entries, one per attempt, with ids 1 to ${n}.`,
  ].join("\n");
  const parts: string[] = [];
  if (prefix > 0) {
    parts.push(
      `<shared_context>\n${JSON.stringify((conversations[0] ?? []).slice(0, prefix))}\n</shared_context>`,
    );
  }
  if (options.tools && options.tools.length > 0)
    parts.push(`<tools>\n${JSON.stringify(options.tools)}\n</tools>`);
  parts.push("Attempts:");
  conversations.forEach((c, i) => {
    parts.push(`<attempt id="${i + 1}">\n${JSON.stringify(c.slice(prefix))}\n</attempt>`);
  });
  return [
    { role: "system", content: system },
    { role: "user", content: parts.join("\n\n") },
  ];
}

// Messages every conversation starts with (the task), sent once as context.
function commonPrefixLength(conversations: readonly MessageParam[][]): number {
  const first = conversations[0] ?? [];
  let n = 0;
  while (n < first.length) {
    const key = JSON.stringify(first[n]);
    if (!conversations.every((c) => c.length > n + 1 && JSON.stringify(c[n]) === key)) break;
    n++;
  }
  return n;
}
