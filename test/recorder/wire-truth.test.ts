// The recorder against a vLLM-like server: what each history holds is what
// the model was sent, tool results go to the history that issued their call,
// only the policy's turns are trainable, and each Choice keeps its tools.
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { currentRollout, Recorder } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startVllmServer, type VllmServer, wireMismatches } from "../helpers/vllm-server.js";

let server: VllmServer;
beforeAll(async () => {
  server = await startVllmServer({
    respond: (body) => {
      const last = body.messages.at(-1);
      const system = body.messages[0]?.content as string;
      if (last.role === "tool") return { content: `done after ${last.content}` };
      if (system === "two tools")
        return {
          tool_calls: [
            { name: "slow", arguments: { q: "a" } },
            { name: "fast", arguments: { q: "b" } },
          ],
        };
      if (system === "one tool") return { tool_calls: [{ name: "lookup", arguments: {} }] };
      if (system === "think") return { reasoning: "let me think about it", content: "42" };
      return { content: `echo ${last.content}` };
    },
  });
});
afterAll(() => server.close());

const tools = (name: string) => [
  { type: "function" as const, function: { name, parameters: { type: "object", properties: {} } } },
];

function client(recorder: Recorder) {
  return recorder.wrap(new OpenAI({ baseURL: server.baseURL, apiKey: "k", maxRetries: 0 }));
}

function sinceNow() {
  const from = server.exchanges.length;
  return () => server.exchanges.slice(from);
}

describe("tool results", () => {
  it("follow the next request's order and content when parallel calls finish out of order", async () => {
    const recorder = new Recorder();
    const openai = client(recorder);
    const wire = sinceNow();
    const t = await recorder.rollout(async () => {
      const messages: ChatCompletionMessageParam[] = [
        { role: "system", content: "two tools" },
        { role: "user", content: "go" },
      ];
      const first = await openai.chat.completions.create({
        model: "m",
        messages,
        tools: tools("slow"),
      });
      const [slow, fast] = first.choices[0]!.message.tool_calls! as { id: string }[];
      // The fast tool ends first and is reported first, as a JSON item; the
      // framework then sends both as text, in call order.
      currentRollout()!.recordToolResult({
        tool_call_id: fast!.id,
        content: '{"type":"text","text":"B"}',
      });
      currentRollout()!.recordToolResult({
        tool_call_id: slow!.id,
        content: '{"type":"text","text":"A"}',
      });
      messages.push(first.choices[0]!.message as ChatCompletionMessageParam);
      messages.push({ role: "tool", tool_call_id: slow!.id, content: "A" });
      messages.push({ role: "tool", tool_call_id: fast!.id, content: "B" });
      await openai.chat.completions.create({ model: "m", messages, tools: tools("slow") });
    });
    expect(wireMismatches(t, wire())).toEqual([]);
    expect(t.additional_histories).toHaveLength(0);
    const mc = t.messages_and_choices as any[];
    expect(mc.map((m) => m.role ?? "choice")).toEqual([
      "system",
      "user",
      "choice",
      "tool",
      "tool",
      "choice",
    ]);
    expect(mc[3].content).toBe("A");
    expect(mc[4].content).toBe("B");
  });

  it("that no later request carries go to the history whose turn issued the call, in call order", async () => {
    const recorder = new Recorder();
    const openai = client(recorder);
    const wire = sinceNow();
    const t = await recorder.rollout(async () => {
      const main: ChatCompletionMessageParam[] = [
        { role: "system", content: "one tool" },
        { role: "user", content: "ask the expert" },
      ];
      const first = await openai.chat.completions.create({ model: "m", messages: main });
      const mainCall = first.choices[0]!.message.tool_calls![0]!;
      // The tool is a sub-agent whose last step is a tool call: its results
      // are reported, but no request of its own carries them.
      const sub = await openai.chat.completions.create({
        model: "m",
        messages: [
          { role: "system", content: "two tools" },
          { role: "user", content: "expert task" },
        ],
      });
      const [a, b] = sub.choices[0]!.message.tool_calls!;
      currentRollout()!.recordToolResult({ tool_call_id: b!.id, content: "second" });
      currentRollout()!.recordToolResult({ tool_call_id: a!.id, content: "first" });
      currentRollout()!.recordToolResult({
        tool_call_id: mainCall.id,
        content: "expert says first",
      });
      main.push(first.choices[0]!.message as ChatCompletionMessageParam);
      main.push({ role: "tool", tool_call_id: mainCall.id, content: "expert says first" });
      await openai.chat.completions.create({ model: "m", messages: main });
    });
    expect(wireMismatches(t, wire())).toEqual([]);
    // One main conversation, unbroken, and the expert's history ends with its results.
    expect((t.messages_and_choices as any[]).map((m) => m.role ?? "choice")).toEqual([
      "system",
      "user",
      "choice",
      "tool",
      "choice",
    ]);
    expect(t.additional_histories).toHaveLength(1);
    const sub = t.additional_histories[0]!.messages_and_choices as any[];
    expect(sub.slice(3).map((m) => m.content)).toEqual(["first", "second"]);
    expect(sub[3].tool_call_id).toBe(sub[2].message.tool_calls[0].id);
  });

  it("whose call no recorded turn issued is logged once and not recorded", async () => {
    const recorder = new Recorder();
    const openai = client(recorder);
    const t = await recorder.rollout(async () => {
      await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
      });
      currentRollout()!.recordToolResult({ tool_call_id: "call_nobody", content: "x" });
      currentRollout()!.recordToolResult({ tool_call_id: "call_nobody", content: "x" });
    });
    expect(t.messages_and_choices).toHaveLength(2);
    expect(t.logs.filter((l) => l.includes("call_nobody"))).toHaveLength(1);
  });
});

describe("policy", () => {
  it("records another model's completion as a plain assistant message and names that model once", async () => {
    const recorder = new Recorder({ policy: ["policy-m"] });
    const openai = client(recorder);
    const wire = sinceNow();
    const t = await recorder.rollout(async () => {
      const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "a" }];
      const r1 = await openai.chat.completions.create({ model: "judge-m", messages });
      messages.push(r1.choices[0]!.message as ChatCompletionMessageParam, {
        role: "user",
        content: "b",
      });
      const r2 = await openai.chat.completions.create({ model: "policy-m", messages });
      messages.push(r2.choices[0]!.message as ChatCompletionMessageParam, {
        role: "user",
        content: "c",
      });
      await openai.chat.completions.create({ model: "judge-m", messages });
    });
    const isPolicy = (m: string) => m === "policy-m";
    expect(wireMismatches(t, wire(), isPolicy)).toEqual([]);
    const mc = t.messages_and_choices as any[];
    expect(mc.filter((m) => m.message).length).toBe(1);
    expect(mc[1]).toEqual({ role: "assistant", content: "echo a" });
    expect(t.logs.filter((l) => l.includes('"judge-m" is not the policy'))).toHaveLength(1);
  });

  it("takes a predicate, and addPolicy narrows the default of every model", async () => {
    const byPredicate = new Recorder({ policy: (m) => m.startsWith("mine") });
    expect([byPredicate.isPolicy("mine:step3"), byPredicate.isPolicy("theirs")]).toEqual([
      true,
      false,
    ]);
    const recorder = new Recorder();
    expect(recorder.isPolicy("anything")).toBe(true);
    recorder.addPolicy("mine");
    expect([recorder.isPolicy("mine"), recorder.isPolicy("anything")]).toEqual([true, false]);
    expect(() => new Recorder({ policy: "mine" as never })).toThrow(
      /options\.policy: expected an array of model names/,
    );
  });
});

describe("tools per turn", () => {
  it("continues a conversation whose tools changed in a new history that records the new tools", async () => {
    const recorder = new Recorder();
    const openai = client(recorder);
    const wire = sinceNow();
    const t = await recorder.rollout(async () => {
      const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "a" }];
      const r1 = await openai.chat.completions.create({
        model: "m",
        messages,
        tools: tools("extract-1"),
      });
      messages.push(r1.choices[0]!.message as ChatCompletionMessageParam, {
        role: "user",
        content: "b",
      });
      const r2 = await openai.chat.completions.create({
        model: "m",
        messages,
        tools: tools("extract-2"),
      });
      messages.push(r2.choices[0]!.message as ChatCompletionMessageParam, {
        role: "user",
        content: "c",
      });
      await openai.chat.completions.create({ model: "m", messages, tools: tools("extract-2") });
    });
    expect(wireMismatches(t, wire())).toEqual([]);
    const names = (x: { tools: any }) => x.tools?.map((tool: any) => tool.function.name);
    expect(names(t)).toEqual(["extract-1"]);
    expect(t.messages_and_choices).toHaveLength(2);
    expect(t.additional_histories).toHaveLength(1);
    const h = t.additional_histories[0]!;
    expect(names(h)).toEqual(["extract-2"]);
    // Both turns offered extract-2 are in that history, as Choices.
    expect(h.messages_and_choices.filter((m: any) => m.message)).toHaveLength(2);
    expect(t.logs.join("\n")).toMatch(/tools offered changed/);
  });
});

describe("streamed reasoning", () => {
  for (const field of ["reasoning_content", "reasoning"] as const) {
    it(`keeps ${field} deltas on the streamed Choice, as the non-streamed Choice keeps them`, async () => {
      const own = await startVllmServer({
        reasoningField: field,
        respond: () => ({ reasoning: "let me think about it", content: "42" }),
      });
      try {
        const recorder = new Recorder();
        const openai = recorder.wrap(new OpenAI({ baseURL: own.baseURL, apiKey: "k" }));
        const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "?" }];
        const t = await recorder.rollout(async () => {
          const stream = await openai.chat.completions.create({
            model: "m",
            messages,
            stream: true,
          });
          for await (const _ of stream);
          await openai.chat.completions.create({ model: "m", messages });
        });
        const [streamed, plain] = [
          t.messages_and_choices[1],
          t.additional_histories[0]!.messages_and_choices[1],
        ] as any[];
        expect(streamed.message[field]).toBe("let me think about it");
        expect(streamed.message[field]).toBe(plain.message[field]);
        expect(streamed.message.content).toBe("42");
      } finally {
        await own.close();
      }
    });
  }
});

describe("a rollout that recorded no call", () => {
  it("says so in its logs and warns once per process through the logger", async () => {
    const warnings: string[] = [];
    const recorder = new Recorder({ logger: { warn: (m) => warnings.push(m) } });
    const a = await recorder.rollout(() => {});
    const b = await recorder.rollout(() => {});
    for (const t of [a, b]) expect(t.logs.join("\n")).toMatch(/no chat completion was recorded/);
    // The first rollouts of this process without a call: one warning for both.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/recorded no chat completion.*recorder\.wrap/);
  });
});
