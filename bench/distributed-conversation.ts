// The conversation every rollout of bench/distributed.ts runs, the same in
// the library's workers and in the bare BullMQ flow's: one chat completion,
// or an agent's multi-turn shape (TURNS calls: the model calls a look-up tool
// three times, each result is sent back, then it answers).
import type OpenAI from "openai";

export const LOOKUP_TOOL = {
  type: "function" as const,
  function: {
    name: "lookup",
    description: "Looks a value up by its key.",
    parameters: {
      type: "object",
      properties: { key: { type: "string" } },
      required: ["key"],
    },
  },
};

/** Runs one rollout's conversation of `turns` calls (1, or an agent's tool-calling loop). */
export async function converse(openai: OpenAI, turns: number): Promise<void> {
  if (turns <= 1) {
    await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    return;
  }
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: "system", content: "Look the values up with the lookup tool, then answer." },
    { role: "user", content: "What are the values of a, b and c?" },
  ];
  for (let call = 0; call < turns; call++) {
    const r = await openai.chat.completions.create({ model: "m", messages, tools: [LOOKUP_TOOL] });
    const message = r.choices[0]?.message;
    if (!message) return;
    messages.push(message);
    if (!message.tool_calls?.length) return;
    for (const c of message.tool_calls)
      messages.push({ role: "tool", tool_call_id: c.id, content: `value of ${c.id}: 42` });
  }
}
