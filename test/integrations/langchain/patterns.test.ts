// LangChain agents written as its docs write them (createAgent from
// `langchain`, a LangGraph StateGraph with a ToolNode, returnDirect tools,
// responseFormat, a reasoning model streamed), recorded against a server that
// answers like vLLM and logs every request: each recorded history must be the
// requests on the wire, message for message, and every trainable Choice must
// come from the policy.
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent, tool } from "langchain";
import { Recorder, type Trajectory, validateTrajectory } from "trajectory-recorder";
import { chatOpenAIFields, TrajectoryCallbackHandler } from "trajectory-recorder/langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { KEY } from "../../emulator/helpers.js";
import {
  type Exchange,
  startVllmServer,
  type VllmServer,
  wireMismatches,
} from "../../helpers/vllm-server.js";
import { agentGraph } from "./helpers.js";

type Json = Record<string, any>;

const userText = (body: Json) =>
  String([...(body.messages as Json[])].reverse().find((m) => m.role === "user")?.content ?? "");
const subjectOf = (text: string) => /(?:paint|wall|for) (\w+)/.exec(text)?.[1] ?? "north";
const toolNames = (body: Json) => (body.tools ?? []).map((t: Json) => t.function.name) as string[];

/**
 * The scripted policy. First turn: two parallel calls (paint and measure, or
 * the two tools it has); then, if an `extract-*` tool is offered, the
 * structured answer through it; else a text answer. The "reasoner" thinks
 * before it answers.
 */
function respond(body: Json) {
  const messages = body.messages as Json[];
  if (body.model === "reasoner")
    return { reasoning: "Walls take paint. The answer is red.", content: "red" };
  const subject = subjectOf(userText(body));
  const names = toolNames(body);
  const extract = names.find((n) => n.startsWith("extract-"));
  const answered = messages.at(-1)?.role === "tool";
  if (!answered) {
    const [first = "paint", second = "measure"] = names.filter((n) => n !== extract);
    return {
      tool_calls: [
        { name: first, arguments: first === "paint" ? { color: subject } : { wall: subject } },
        { name: second, arguments: second === "paint" ? { color: subject } : { wall: subject } },
      ],
    };
  }
  if (extract) return { tool_calls: [{ name: extract, arguments: { wall: subject, metres: 3 } }] };
  return { content: `Done with ${subject}.` };
}

let server: VllmServer;
beforeAll(async () => {
  server = await startVllmServer({ respond });
});
afterAll(async () => {
  await server.close();
});

function model(id = "policy", fields: Record<string, unknown> = {}) {
  return new ChatOpenAI(
    chatOpenAIFields({
      model: id,
      apiKey: KEY,
      maxRetries: 0,
      configuration: { baseURL: server.baseURL },
      ...fields,
    }),
  );
}

/** paint answers last: the two parallel results finish out of call order. */
const paint = tool(
  async ({ color }: { color: string }) => {
    await new Promise((r) => setTimeout(r, 30));
    return `painted ${color}`;
  },
  {
    name: "paint",
    description: "Paint the wall in a colour.",
    schema: z.object({ color: z.string() }),
  },
);
const measure = tool(async ({ wall }: { wall: string }) => `wall ${wall} is 3 metres`, {
  name: "measure",
  description: "Measure a wall.",
  schema: z.object({ wall: z.string() }),
});

const about = (subject: string) => (x: Exchange) =>
  (x.body.messages as Json[]).some(
    (m) => m.role === "user" && new RegExp(`\\b${subject}\\b`).test(String(m.content)),
  );

type Entry = Json;
const shape = (items: Entry[]) =>
  items.map((e) => ("finish_reason" in e ? `choice:${e.finish_reason}` : e.role));
const histories = (t: Trajectory) => {
  const j = t.toJSON() as Json;
  return [j, ...j.additional_histories] as Array<{ messages_and_choices: Entry[]; tools?: Json[] }>;
};

describe("LangChain agents written as its docs write them, against a vLLM-like server", () => {
  for (const streaming of [false, true]) {
    it(`createAgent with parallel tools of different latency (${streaming ? "streamed" : "invoked"})`, async () => {
      const subject = streaming ? "east" : "west";
      const agent = createAgent({
        model: model(),
        tools: [paint, measure],
        systemPrompt: "You look after walls.",
      });
      const input = { messages: [{ role: "user", content: `paint ${subject}` }] };
      const callbacks = [new TrajectoryCallbackHandler()];
      const t = await new Recorder().rollout(async () => {
        if (!streaming) return agent.invoke(input, { callbacks });
        // Streaming the agent's messages token by token, as LangChain's docs do.
        for await (const _ of await agent.stream(input, { callbacks, streamMode: "messages" }));
      });
      const wire = server.exchanges.filter(about(subject));
      expect(wire).toHaveLength(2);
      for (const x of wire) expect(x.body.stream ?? false).toBe(streaming);
      expect(wireMismatches(t, wire)).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      const items = t.toJSON().messages_and_choices as Entry[];
      expect(shape(items)).toEqual([
        "system",
        "user",
        "choice:tool_calls",
        "tool",
        "tool",
        "choice:stop",
      ]);
      // In call order, as the next request sent them, though paint finished last.
      const ids = items[2]!.message.tool_calls.map((c: Json) => c.id);
      expect([items[3]!.tool_call_id, items[4]!.tool_call_id]).toEqual(ids);
      expect(items[3]!.content).toBe(`painted ${subject}`);
      expect(t.additional_histories).toEqual([]);
      expect(t.logs).toEqual([]);
    });
  }

  it("a LangGraph StateGraph with a ToolNode", async () => {
    const graph = agentGraph(model(), { tools: [paint, measure], toolTurns: 1 });
    const t = await new Recorder().rollout(() =>
      graph.invoke(
        { messages: [new HumanMessage("paint south")] },
        { callbacks: [new TrajectoryCallbackHandler()] },
      ),
    );
    const wire = server.exchanges.filter(about("south"));
    expect(wire).toHaveLength(2);
    expect(wireMismatches(t, wire)).toEqual([]);
    expect(validateTrajectory(t)).toEqual([]);
    expect(shape(t.toJSON().messages_and_choices as Entry[])).toEqual([
      "user",
      "choice:tool_calls",
      "tool",
      "tool",
      "choice:stop",
    ]);
    expect(t.additional_histories).toEqual([]);
  });

  it("returnDirect tools called in parallel: both results, in call order, end the main history", async () => {
    const direct = (t: typeof paint | typeof measure, name: string) =>
      tool(async (input: Json) => (t as any).invoke(input), {
        name,
        description: t.description,
        schema: (t as any).schema,
        returnDirect: true,
      });
    const agent = createAgent({
      model: model(),
      tools: [direct(paint, "paint"), direct(measure, "measure")],
    });
    const t = await new Recorder().rollout(() =>
      agent.invoke(
        { messages: [{ role: "user", content: "paint ridge" }] },
        { callbacks: [new TrajectoryCallbackHandler()] },
      ),
    );
    const wire = server.exchanges.filter(about("ridge"));
    expect(wire).toHaveLength(1);
    expect(wireMismatches(t, wire)).toEqual([]);
    expect(validateTrajectory(t)).toEqual([]);
    const items = t.toJSON().messages_and_choices as Entry[];
    expect(shape(items)).toEqual(["user", "choice:tool_calls", "tool", "tool"]);
    const [paintCall, measureCall] = items[1]!.message.tool_calls;
    expect(items[2]).toEqual({
      role: "tool",
      tool_call_id: paintCall.id,
      content: "painted ridge",
    });
    expect(items[3]).toEqual({
      role: "tool",
      tool_call_id: measureCall.id,
      content: "wall ridge is 3 metres",
    });
    expect(t.additional_histories).toEqual([]);
    expect(t.logs).toEqual([]);
  });

  it("responseFormat: each turn is recorded with the tools it was offered (extract-N changes)", async () => {
    const agent = createAgent({
      model: model(),
      tools: [measure, paint],
      responseFormat: z.object({ wall: z.string(), metres: z.number() }),
    });
    let structured: unknown;
    const t = await new Recorder().rollout(async () => {
      const out = await agent.invoke(
        { messages: [{ role: "user", content: "paint bay" }] },
        { callbacks: [new TrajectoryCallbackHandler()] },
      );
      structured = out.structuredResponse;
    });
    expect(structured).toEqual({ wall: "bay", metres: 3 });
    const wire = server.exchanges.filter(about("bay"));
    expect(wire).toHaveLength(2);
    const [first, second] = wire.map((x) =>
      toolNames(x.body).find((n) => n.startsWith("extract-")),
    );
    // LangChain names the structured-output tool anew for every call.
    expect(first).not.toBe(second);
    expect(wireMismatches(t, wire)).toEqual([]);
    expect(validateTrajectory(t)).toEqual([]);
    // Every Choice sits in a history whose tools are those its request offered.
    for (const h of histories(t))
      for (const item of h.messages_and_choices)
        if ("finish_reason" in item) {
          const x = wire.find(
            (e) => JSON.stringify(e.prompt_token_ids) === JSON.stringify(item.prompt_token_ids),
          );
          expect(h.tools).toEqual(x!.body.tools);
        }
  });

  it("a reasoning model streamed keeps its reasoning on the Choice, as when invoked", async () => {
    const t = await new Recorder().rollout(async () => {
      const callbacks = [new TrajectoryCallbackHandler()];
      await model("reasoner").invoke([new HumanMessage("which colour for the wall?")], {
        callbacks,
      });
      for await (const _ of await model("reasoner", { streaming: true }).stream(
        [new HumanMessage("which colour for the door?")],
        { callbacks },
      ));
    });
    const invoked = t.messages_and_choices[1] as Json;
    const streamed = t.additional_histories[0]!.messages_and_choices[1] as Json;
    expect(invoked.message.reasoning_content).toBe("Walls take paint. The answer is red.");
    expect(streamed.message.reasoning_content).toBe(invoked.message.reasoning_content);
    expect(streamed.message.content).toBe("red");
    expect(streamed.token_ids).toEqual(invoked.token_ids);
  });

  it("the same, without the raw response: reasoning from LangChain's own messages", async () => {
    const t = await new Recorder({ tokenIds: false }).rollout(async () => {
      const callbacks = [new TrajectoryCallbackHandler()];
      const fields = { logprobs: true };
      const plain = (streaming: boolean) =>
        new ChatOpenAI({
          model: "reasoner",
          apiKey: KEY,
          maxRetries: 0,
          configuration: { baseURL: server.baseURL },
          streaming,
          ...fields,
        });
      await plain(false).invoke([new HumanMessage("colour for the gate?")], { callbacks });
      for await (const _ of await plain(true).stream([new HumanMessage("colour for the fence?")], {
        callbacks,
      }));
    });
    const invoked = t.messages_and_choices[1] as Json;
    const streamed = t.additional_histories[0]!.messages_and_choices[1] as Json;
    expect(invoked.message.reasoning_content).toBe("Walls take paint. The answer is red.");
    expect(streamed.message.reasoning_content).toBe(invoked.message.reasoning_content);
  });

  it("50 concurrent createAgent rollouts with one shared handler: no cross-talk", async () => {
    const handler = new TrajectoryCallbackHandler();
    const agent = createAgent({ model: model(), tools: [paint, measure] });
    const subjects = Array.from({ length: 50 }, (_, i) => `w${i}wall`);
    const recorder = new Recorder();
    const trajectories = await Promise.all(
      subjects.map((s) =>
        recorder.rollout(() =>
          agent.invoke(
            { messages: [{ role: "user", content: `paint ${s}` }] },
            { callbacks: [handler] },
          ),
        ),
      ),
    );
    trajectories.forEach((t, i) => {
      const subject = subjects[i] as string;
      const wire = server.exchanges.filter(about(subject));
      expect(wire).toHaveLength(2);
      expect(wireMismatches(t, wire)).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      expect(t.additional_histories).toEqual([]);
      expect(t.logs).toEqual([]);
      const json = JSON.stringify(t.toJSON());
      for (const other of subjects)
        if (other !== subject) expect(json).not.toMatch(new RegExp(`\\b${other}\\b`));
    });
  });
});
