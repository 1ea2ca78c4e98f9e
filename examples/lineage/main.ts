// A chat template that renders earlier turns differently from how they were
// sampled, and what the recorder does about it.
//
//   npx tsx examples/lineage/main.ts
//
// The emulator runs with `drift: true`: like Qwen3 with thinking off, each
// generation prompt opens an empty reasoning block that earlier turns are
// rendered without, and earlier tool-call arguments are re-serialized. So a
// later turn's prompt_token_ids no longer start with the earlier prompt and
// its sampled token_ids. The recorder (lineage: "tokens", its default) ends
// the history at the earlier turn and goes on in a new additional history
// holding the later turn's full prompt; `logs` say where the tokens diverged,
// and validateGroup counts the splits and the prefix tokens histories repeat.
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { Recorder, TrajectoryGroup, validateGroup } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "lookup",
      parameters: { type: "object", properties: { fruit: { type: "string" } } },
    },
  },
];

async function main(): Promise<void> {
  const emulator = await startEmulator({ port: 0, drift: true });
  try {
    const recorder = new Recorder();
    const openai = recorder.wrap(new OpenAI({ baseURL: emulator.url, apiKey: "dev-key" }));
    const trajectory = await recorder.rollout(async (t) => {
      const messages: ChatCompletionMessageParam[] = [
        { role: "user", content: "what colour is the apple" },
      ];
      for (let turn = 0; turn < 3; turn++) {
        const r = await openai.chat.completions.create({
          model: "emulator/tiny",
          messages,
          tools,
          tool_choice: turn === 0 ? "required" : "auto",
          max_tokens: 3,
          seed: turn,
        });
        const m = r.choices[0]!.message;
        messages.push({
          role: "assistant",
          content: m.content,
          ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
        } as ChatCompletionMessageParam);
        for (const c of m.tool_calls ?? [])
          messages.push({ role: "tool", tool_call_id: c.id, content: "the apple is red" });
        if (!m.tool_calls?.length) messages.push({ role: "user", content: "and the cat" });
      }
      t.reward = 1;
    });
    for (const line of trajectory.logs) console.log(line);
    const { tokens } = validateGroup(new TrajectoryGroup([trajectory]));
    console.log(
      `${tokens.histories} histories, ${tokens.splits} splits, ${tokens.duplicatePrefixTokens} prefix tokens repeated across histories`,
    );
  } finally {
    await emulator.close();
  }
}

await main();
