// The emulator's chat template and its drift mode: by default a later
// prompt extends the earlier prompt and its sampled tokens (one history per
// rollout); with drift on, earlier turns are rendered as real templates do
// (reasoning block dropped, tool arguments re-serialized), and the recorder
// splits each history where the tokens diverge, saying where in `logs`.
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { Recorder, type Trajectory, TrajectoryGroup, validateGroup } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { KEY, start } from "./helpers.js";

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "lookup",
      parameters: {
        type: "object",
        properties: { fruit: { type: "string" }, colour: { type: "string" } },
      },
    },
  },
];

let exact: Emulator;
let drifting: Emulator;
let reasoningOnly: Emulator;
beforeAll(async () => {
  exact = await start();
  drifting = await start({ drift: true });
  reasoningOnly = await start({ drift: { reasoning: true } });
});
afterAll(async () => {
  await Promise.all([exact.close(), drifting.close(), reasoningOnly.close()]);
});

/** A look-up agent: a forced tool call, its result, two more turns. */
async function rollout(emu: Emulator, seed: number): Promise<Trajectory> {
  const recorder = new Recorder();
  const openai = recorder.wrap(new OpenAI({ apiKey: KEY, baseURL: emu.url, maxRetries: 0 }));
  return recorder.rollout(async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: "look it up" },
      { role: "user", content: "what colour is the apple" },
    ];
    for (let turn = 0; turn < 3; turn++) {
      const r = await openai.chat.completions.create({
        model: "emulator/tiny",
        messages,
        tools: TOOLS,
        tool_choice: turn === 0 ? "required" : "auto",
        max_tokens: 3,
        seed: seed * 10 + turn,
      });
      const message = r.choices[0]!.message;
      messages.push({
        role: "assistant",
        content: message.content,
        ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}),
      } as ChatCompletionMessageParam);
      for (const c of message.tool_calls ?? [])
        messages.push({ role: "tool", tool_call_id: c.id, content: "the apple is red" });
      if (!message.tool_calls?.length) messages.push({ role: "user", content: "and the cat" });
    }
  });
}

const histories = (t: Trajectory) => 1 + t.additional_histories.length;
const splits = (t: Trajectory) => t.logs.filter((l) => l.startsWith("token lineage split:"));

describe("the emulator's chat template", () => {
  it("renders turns back as sampled by default: one history, no split, the check passes", async () => {
    const ts = await Promise.all([1, 2, 3].map((s) => rollout(exact, s)));
    for (const t of ts) {
      expect(histories(t)).toBe(1);
      expect(splits(t)).toEqual([]);
    }
    const { problems, tokens } = validateGroup(new TrajectoryGroup(ts), {
      mode: "warn",
      logger: { warn() {} },
    });
    expect(problems).toEqual([]);
    expect(tokens.splits).toBe(0);
    expect(tokens.histories).toBe(3);
    // The three rollouts share at least the tools, system prompt and question.
    expect(tokens.duplicatePrefixTokens).toBeGreaterThan(2 * 10);
  });

  it("drift: every later turn goes on in its own history, each split logged with its tokens", async () => {
    const t = await rollout(drifting, 1);
    expect(histories(t)).toBe(3);
    const said = splits(t);
    expect(said).toHaveLength(2);
    expect(said[0]).toMatch(
      /^token lineage split: messages_and_choices\[\d+\] does not extend the tokens of messages_and_choices\[2\]: its prompt_token_ids depart at position \d+ \(.*\): the lineage holds .*\[\d+\].*, the prompt holds .*\[\d+\].*; messages_and_choices ends at \[2\] and the turn goes on in additional_histories\[0\]/,
    );
    const { problems, tokens } = validateGroup(
      new TrajectoryGroup([t, await rollout(drifting, 2)]),
      {
        mode: "warn",
        logger: { warn() {} },
      },
    );
    expect(problems).toEqual([]);
    expect(tokens.splits).toBe(4);
    expect(tokens.histories).toBe(6);
  });

  it("drift on reasoning only: the generation prompt's empty reasoning block is what earlier turns lose", async () => {
    const t = await rollout(reasoningOnly, 1);
    expect(histories(t)).toBe(3);
    // The first turn's sampled tokens are where the next prompt departs: right after its prompt.
    expect(splits(t)[0]).toMatch(/depart at position \d+ \(inside the previous turn's prompt\)/);
  });

  it("refuses a drift option of the wrong shape, naming it", async () => {
    await expect(startEmulator({ drift: { reasoning: "yes" } as never })).rejects.toThrow(/drift/);
  });
});
