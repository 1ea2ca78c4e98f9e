// The done-when of issue #32: a Python agent (the official openai SDK, a tool
// loop) given only OPENAI_BASE_URL=t.baseURL and OPENAI_API_KEY=t.apiKey is
// recorded with the same JSON a wrapped TypeScript client records for the
// same conversation.
import OpenAI from "openai";
import { Recorder, TrajectoryGroup, validateGroup } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startVllmServer, type VllmServer, wireMismatches } from "../helpers/vllm-server.js";
import { runPythonAgent, withoutIds } from "./helpers.js";

const STOCK = { apple: "three", banana: "one", cherry: "two", grape: "four" };
const QUESTION = "how many apple are left";
const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "check_stock",
      description: "How many of a fruit the stall has left.",
      parameters: {
        type: "object",
        properties: { fruit: { type: "string", enum: ["apple", "banana", "cherry", "grape"] } },
        required: ["fruit"],
        additionalProperties: false,
      },
    },
  },
];

let upstream: VllmServer;
beforeAll(async () => {
  // The scripted model calls the tool, then answers with what it said.
  upstream = await startVllmServer({
    respond: (body) => {
      const last = body.messages.at(-1);
      return last.role === "tool"
        ? { content: `there are ${String(last.content).split(" ")[0]} left` }
        : { tool_calls: [{ name: "check_stock", arguments: { fruit: "apple" } }] };
    },
  });
});
afterAll(() => upstream.close());

/** The same agent as agent.py, in TypeScript, through a wrapped client. */
async function typescriptAgent(openai: OpenAI, stream: boolean): Promise<void> {
  const messages: any[] = [
    { role: "system", content: "You keep a fruit stall. Check the stock before answering." },
    { role: "user", content: QUESTION },
  ];
  for (let turn = 0; turn < 3; turn++) {
    let content: string | null = null;
    let calls: any[] = [];
    if (!stream) {
      const m = (await openai.chat.completions.create({ model: "", messages, tools: TOOLS }))
        .choices[0]!.message;
      content = m.content;
      calls = (m.tool_calls ?? []).map((c: any) => ({
        id: c.id,
        type: "function",
        function: { name: c.function.name, arguments: c.function.arguments },
      }));
    } else {
      const s = await openai.chat.completions.create({
        model: "",
        messages,
        tools: TOOLS,
        stream: true,
        stream_options: { include_usage: true },
      });
      const slots: any[] = [];
      for await (const chunk of s)
        for (const c of chunk.choices) {
          if (c.delta.content) content = (content ?? "") + c.delta.content;
          for (const tc of c.delta.tool_calls ?? []) {
            slots[tc.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
            if (tc.id) slots[tc.index].id = tc.id;
            if (tc.function?.name) slots[tc.index].function.name += tc.function.name;
            if (tc.function?.arguments) slots[tc.index].function.arguments += tc.function.arguments;
          }
        }
      calls = slots.filter(Boolean);
    }
    const message: any = { role: "assistant", content };
    if (calls.length) message.tool_calls = calls;
    messages.push(message);
    if (!calls.length) break;
    for (const call of calls)
      messages.push({
        role: "tool",
        tool_call_id: call.id,
        content: `${(STOCK as any)[JSON.parse(call.function.arguments).fruit]} left`,
      });
  }
}

describe.each([false, true])(
  "a Python tool-loop agent (stream: %s) through t.baseURL",
  (stream) => {
    it("is recorded with the same JSON as a wrapped TypeScript client, and passes validateGroup", async () => {
      const recorder = new Recorder({
        upstream: { baseURL: upstream.baseURL, apiKey: "sk-upstream-secret-0001" },
      });
      try {
        const job = { question: QUESTION, stock: STOCK, stream, model: "" };
        const fromPython = await Promise.all(
          [0, 1].map(() =>
            recorder.rollout(async (t) => {
              const { answer } = await runPythonAgent(job, {
                OPENAI_BASE_URL: t.baseURL,
                OPENAI_API_KEY: t.apiKey,
              });
              t.reward = answer === "there are three left" ? 1 : 0;
            }),
          ),
        );
        const inProcess = new Recorder();
        const wrapped = inProcess.wrap(
          new OpenAI({ baseURL: upstream.baseURL, apiKey: "sk-upstream-secret-0001" }),
        );
        const fromTs = await inProcess.rollout(async (t) => {
          await typescriptAgent(wrapped, stream);
          t.reward = 1;
        });
        for (const t of fromPython) {
          expect(t.reward).toBe(1);
          expect(withoutIds(t)).toEqual(withoutIds(fromTs));
          // Every Choice answers the request the upstream saw, token ids included.
          const text = JSON.stringify(t);
          // The same conversation renders to the same prompt ids in every
          // rollout: an exchange is this rollout's when the tool call ids it
          // sent and received are this rollout's too.
          const callIds = (x: (typeof upstream.exchanges)[number]) => [
            ...(x.message.tool_calls ?? []).map((c: { id: string }) => c.id),
            ...(x.body.messages as { tool_call_id?: string }[]).flatMap((m) =>
              m.tool_call_id ? [m.tool_call_id] : [],
            ),
          ];
          const mine = upstream.exchanges.filter(
            (x) =>
              text.includes(JSON.stringify(x.prompt_token_ids)) &&
              callIds(x).every((id) => text.includes(id)),
          );
          expect(mine.length).toBeGreaterThanOrEqual(2);
          expect(wireMismatches(t, mine)).toEqual([]);
          // Two Choices with logprobs and token ids, the tools, the tool result between them.
          const json = JSON.parse(JSON.stringify(t));
          const choices = json.messages_and_choices.filter((m: any) => "finish_reason" in m);
          expect(choices.map((c: any) => c.finish_reason)).toEqual(["tool_calls", "stop"]);
          expect(
            choices.every(
              (c: any) => c.logprobs && c.token_ids?.length && c.prompt_token_ids?.length,
            ),
          ).toBe(true);
          expect(json.tools).toEqual(TOOLS);
          expect(JSON.stringify(t)).not.toContain("sk-upstream-secret-0001");
          expect(JSON.stringify(t)).not.toContain(t.apiKey);
        }
        const check = validateGroup(new TrajectoryGroup([...fromPython, fromTs]), {
          mode: "warn",
          logger: { warn: () => {} },
        } as never);
        expect(check.problems).toEqual([]);
      } finally {
        await recorder.close();
      }
    });
  },
);
