// Histories follow the tokens the model saw: against a loopback server whose
// chat template strips earlier reasoning (as Qwen3's does), each turn after a
// reasoning turn no longer extends its history's tokens and goes on in a new
// history, with logs naming where; against one that renders turns back as
// sampled, the trajectory is exactly what message comparison alone records.
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { Recorder, type Trajectory, validateGroup } from "trajectory-recorder";
import type { LineageMode } from "trajectory-recorder/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TrajectoryGroup } from "../../src/trajectory/index.js";
import { choiceTokens, lineageDeparture } from "../../src/trajectory/lineage.js";
import { startVllmServer, type VllmServer, wireMismatches } from "../helpers/vllm-server.js";

const TOOLS = [
  {
    type: "function" as const,
    function: { name: "lookup", parameters: { type: "object", properties: {} } },
  },
];

// A reasoning model: thinks, calls `lookup` twice, then answers.
const respond = (body: Record<string, any>) => {
  const toolTurns = (body.messages as Array<{ role: string }>).filter(
    (m) => m.role === "tool",
  ).length;
  if (toolTurns < 2)
    return {
      reasoning: `step ${toolTurns}: I should look it up`,
      tool_calls: [{ name: "lookup", arguments: { q: `part ${toolTurns}` } }],
    };
  return { reasoning: "I have both parts", content: "the answer is 42" };
};

let drifting: VllmServer;
let exact: VllmServer;
beforeAll(async () => {
  drifting = await startVllmServer({ respond, stripReasoning: true });
  exact = await startVllmServer({ respond });
});
afterAll(async () => {
  await drifting.close();
  await exact.close();
});

/** A three-turn agent loop that sends each answer back as it came, reasoning included. */
async function agent(
  server: VllmServer,
  opts: { lineage?: LineageMode; stream?: boolean; recorder?: Recorder } = {},
): Promise<Trajectory> {
  const recorder = opts.recorder ?? new Recorder();
  const openai = recorder.wrap(new OpenAI({ baseURL: server.baseURL, apiKey: "k", maxRetries: 0 }));
  return recorder.rollout(
    async () => {
      const messages: ChatCompletionMessageParam[] = [
        { role: "system", content: "you look things up" },
        { role: "user", content: "what is the answer" },
      ];
      for (let turn = 0; turn < 3; turn++) {
        let message: Record<string, unknown>;
        if (opts.stream) {
          const s = await openai.chat.completions.create({
            model: "m",
            messages,
            tools: TOOLS,
            stream: true,
          });
          let content = "";
          let reasoning = "";
          const calls: Array<{
            id: string;
            type: "function";
            function: { name: string; arguments: string };
          }> = [];
          for await (const chunk of s) {
            const d = chunk.choices[0]?.delta as Record<string, any> | undefined;
            content += d?.content ?? "";
            reasoning += d?.reasoning_content ?? "";
            for (const c of d?.tool_calls ?? []) {
              calls[c.index] ??= {
                id: c.id,
                type: "function",
                function: { name: "", arguments: "" },
              };
              const into = calls[c.index]!.function;
              into.name += c.function?.name ?? "";
              into.arguments += c.function?.arguments ?? "";
            }
          }
          message = { role: "assistant", content: content || null, reasoning_content: reasoning };
          if (calls.length) message.tool_calls = calls;
        } else {
          const r = await openai.chat.completions.create({ model: "m", messages, tools: TOOLS });
          message = { ...r.choices[0]!.message };
          delete message.refusal;
        }
        messages.push(message as unknown as ChatCompletionMessageParam);
        const calls = (message.tool_calls ?? []) as Array<{ id: string }>;
        if (!calls.length) break;
        for (const c of calls) messages.push({ role: "tool", tool_call_id: c.id, content: "21" });
      }
    },
    opts.lineage ? { lineage: opts.lineage } : {},
  );
}

/** Each history's Choices in order: every prompt extends the previous prompt and tokens. */
function unbroken(t: Trajectory): boolean {
  for (const items of [
    t.messages_and_choices,
    ...t.additional_histories.map((h) => h.messages_and_choices),
  ]) {
    let prev: ReturnType<typeof choiceTokens>;
    for (const item of items) {
      const tokens = choiceTokens(item);
      if (!tokens) continue;
      if (prev && lineageDeparture(prev, tokens.prompt) !== -1) return false;
      prev = tokens;
    }
  }
  return true;
}

const choiceCount = (items: readonly unknown[]) =>
  items.filter((i) => typeof i === "object" && i !== null && "finish_reason" in i).length;

describe("a template that strips earlier reasoning", () => {
  for (const stream of [false, true]) {
    it(`splits where the tokens diverge, one history per unbroken lineage (${stream ? "streamed" : "not streamed"})`, async () => {
      const t = await agent(drifting, { stream });
      // Three turns, each after a reasoning turn: three histories of one Choice each.
      expect(choiceCount(t.messages_and_choices)).toBe(1);
      expect(t.additional_histories).toHaveLength(2);
      for (const h of t.additional_histories) {
        expect(choiceCount(h.messages_and_choices)).toBe(1);
        // The turn's full prompt: the earlier sampled turns are plain context there.
        const last = h.messages_and_choices.at(-1) as unknown as { prompt_token_ids: number[] };
        expect(h.messages_and_choices.at(-1)).toHaveProperty("finish_reason");
        expect(h.tools).toEqual(TOOLS);
        expect(last.prompt_token_ids.length).toBeGreaterThan(0);
      }
      expect(unbroken(t)).toBe(true);
      // The earlier history keeps exactly its tokens: main ends on its one Choice.
      expect(t.messages_and_choices.map((m: any) => m.role ?? "choice")).toEqual([
        "system",
        "user",
        "choice",
      ]);
      expect(
        t.additional_histories[1]!.messages_and_choices.map((m: any) => m.role ?? "choice"),
      ).toEqual(["system", "user", "assistant", "tool", "assistant", "tool", "choice"]);
      const splits = t.logs.filter((l) => l.startsWith("token lineage split:"));
      expect(splits).toHaveLength(2);
      expect(splits[0]).toMatch(
        /^token lineage split: messages_and_choices\[4\] does not extend the tokens of messages_and_choices\[2\]: its prompt_token_ids depart at position \d+ \(at token 0 of the previous turn's sampled tokens\): the lineage holds .*\[\d+\].*, the prompt holds .*\[\d+\].*; messages_and_choices ends at \[2\] and the turn goes on in additional_histories\[0\]\.messages_and_choices\[4\]$/,
      );
      expect(splits[1]).toMatch(
        /additional_histories\[0\]\.messages_and_choices\[6\] does not extend/,
      );
      expect(splits[1]).toMatch(/goes on in additional_histories\[1\]\.messages_and_choices\[6\]$/);
      // Every request is still a recorded conversation followed by its answer.
      expect(wireMismatches(t, drifting.exchanges.slice(-3))).toEqual([]);
      // What is trained is what the model saw: the group passes the check.
      const problems = validateGroup(new TrajectoryGroup([t, t]), {
        mode: "warn",
        logger: { warn() {} },
      }).problems;
      expect(problems).toEqual([]);
    });
  }

  it("writes a split's log line when the logs are read: the same line in the wire JSON, whatever the tokens became since", async () => {
    const t = await agent(drifting);
    const again = await agent(drifting);
    // At the rollout's end the two split lines are not text yet.
    const unwritten = (logs: string[]) =>
      Object.keys(logs).filter((k) => Object.getOwnPropertyDescriptor(logs, k)?.get).length;
    expect(unwritten(t.logs)).toBe(2);
    // The line keeps the tokens the check read, even after the ids are edited in place.
    for (const h of [t, ...t.additional_histories])
      for (const item of h.messages_and_choices) {
        const ids = (item as { prompt_token_ids?: number[] }).prompt_token_ids;
        if (ids) ids.fill(0);
      }
    const wire = JSON.parse(JSON.stringify(t)) as { logs: string[] };
    expect(wire.logs).toEqual([...again.logs]);
    expect(wire.logs.filter((l) => l.startsWith("token lineage split:"))).toHaveLength(2);
    // Once read, they are plain strings.
    expect(unwritten(t.logs)).toBe(0);
    expect(t.logs).toEqual(wire.logs);
  });

  it('lineage: "text" keeps text-equal turns in one history and says where the tokens diverge', async () => {
    const t = await agent(drifting, { lineage: "text" });
    expect(t.additional_histories).toEqual([]);
    expect(choiceCount(t.messages_and_choices)).toBe(3);
    const said = t.logs.filter((l) => l.startsWith("token lineage diverges:"));
    expect(said).toHaveLength(2);
    expect(said[0]).toMatch(
      /^token lineage diverges: messages_and_choices\[4\]: its prompt_token_ids depart .*; kept in the same history as messages_and_choices\[2\] \(lineage: "text"\)$/,
    );
  });

  it('lineage: "off" checks nothing: the histories of message comparison, no logs', async () => {
    const t = await agent(drifting, { recorder: new Recorder({ lineage: "off" }) });
    expect(t.additional_histories).toEqual([]);
    expect(t.logs).toEqual([]);
  });
});

describe("a server that leaves the stop token out while the turn ends on text (Qwen3 tool calls)", () => {
  for (const stream of [false, true]) {
    it(`splits after each tool-calling turn: 3 rollouts, 9 histories, 6 splits (${stream ? "streamed" : "not streamed"})`, async () => {
      const qwen = await startVllmServer({ respond, toolCallNewline: true });
      try {
        const group = new TrajectoryGroup([
          await agent(qwen, { stream }),
          await agent(qwen, { stream }),
          await agent(qwen, { stream }),
        ]);
        const check = validateGroup(group, { mode: "warn", logger: { warn() {} } });
        expect(check.tokens).toMatchObject({ histories: 9, splits: 6 });
        for (const t of group.trajectories) {
          // The turn after each tool call departs where the template wrote END in place of the
          // sampled newline: at the previous turn's last sampled token.
          const splits = t.logs.filter((l) => l.startsWith("token lineage split:"));
          expect(splits).toHaveLength(2);
          for (const line of splits)
            expect(line).toMatch(/\(at token (\d+) of the previous turn's sampled tokens\)/);
          expect(unbroken(t)).toBe(true);
        }
        expect(check.problems).toEqual([]);
      } finally {
        await qwen.close();
      }
    });
  }
});

describe("n > 1", () => {
  it("each sample's history follows its own tokens; the continued one splits where the template drifts", async () => {
    const recorder = new Recorder();
    const openai = recorder.wrap(
      new OpenAI({ baseURL: drifting.baseURL, apiKey: "k", maxRetries: 0 }),
    );
    const t = await recorder.rollout(async () => {
      const messages: ChatCompletionMessageParam[] = [
        { role: "system", content: "you look things up" },
        { role: "user", content: "what is the answer" },
      ];
      const r = await openai.chat.completions.create({ model: "m", messages, tools: TOOLS, n: 2 });
      const message = { ...r.choices[0]!.message } as Record<string, unknown>;
      delete message.refusal;
      messages.push(message as unknown as ChatCompletionMessageParam);
      const id = (message.tool_calls as Array<{ id: string }>)[0]!.id;
      messages.push({ role: "tool", tool_call_id: id, content: "21" });
      await openai.chat.completions.create({ model: "m", messages, tools: TOOLS });
    });
    // Main: the first sample; the second sample's history; the next turn split off main.
    expect(choiceCount(t.messages_and_choices)).toBe(1);
    expect(t.additional_histories).toHaveLength(2);
    expect(choiceCount(t.additional_histories[0]!.messages_and_choices)).toBe(1);
    expect(
      t.additional_histories[1]!.messages_and_choices.map((m: any) => m.role ?? "choice"),
    ).toEqual(["system", "user", "assistant", "tool", "choice"]);
    expect(t.logs.filter((l) => l.startsWith("token lineage split:"))).toEqual([
      expect.stringMatching(
        /^token lineage split: messages_and_choices\[4\] .* goes on in additional_histories\[1\]\.messages_and_choices\[4\]$/,
      ),
    ]);
    expect(unbroken(t)).toBe(true);
  });
});

describe("a template that renders turns back as sampled", () => {
  for (const stream of [false, true]) {
    it(`gives exactly the trajectory of message comparison alone (${stream ? "streamed" : "not streamed"})`, async () => {
      const checked = await agent(exact, { stream });
      const before = exact.exchanges.length;
      const unchecked = await agent(exact, { stream, lineage: "off" });
      expect(exact.exchanges.length).toBe(before + 3);
      expect(checked.additional_histories).toEqual([]);
      expect(checked.logs).toEqual([]);
      expect(choiceCount(checked.messages_and_choices)).toBe(3);
      // Byte for byte (the ids of tool calls differ between the runs: mask them).
      const json = (t: Trajectory) =>
        JSON.stringify(t)
          .replace(/call_\d+_[a-z0-9]+/g, "call")
          .replace(/chatcmpl-\d+/g, "id");
      expect(json(checked)).toBe(json(unchecked));
    });
  }
});

describe("options", () => {
  it("refuse an unknown lineage mode, naming the field", async () => {
    expect(() => new Recorder({ lineage: "strict" as never })).toThrow(/options\.lineage/);
    await expect(new Recorder().rollout(() => {}, { lineage: "exact" as never })).rejects.toThrow(
      /options\.lineage/,
    );
  });
});
