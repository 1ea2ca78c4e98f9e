import { HumanMessage } from "@langchain/core/messages";
import { Recorder, type Trajectory } from "trajectory-recorder";
import { chatOpenAIFields, TrajectoryCallbackHandler } from "trajectory-recorder/langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../../src/emulator/index.js";
import { agentGraph, broken, chatModel, paint, replayRaw, start } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

const input = (content: string) => ({ messages: [new HumanMessage(content)] });

/** Runs the graph once, streamed (stream mode "messages") or not. */
async function run(graph: ReturnType<typeof agentGraph>, content: string, streaming: boolean) {
  const callbacks = [new TrajectoryCallbackHandler()];
  if (!streaming) return graph.invoke(input(content), { callbacks });
  for await (const _ of await graph.stream(input(content), { callbacks, streamMode: "messages" }));
}

describe("TrajectoryCallbackHandler on a LangGraph agent", () => {
  for (const streaming of [false, true]) {
    it(`records a multi-turn tool-using agent (${streaming ? "streamed" : "not streamed"})`, async () => {
      const { model, wire } = chatModel(emu, { logprobs: true });
      const graph = agentGraph(model);
      const t = await new Recorder({ tokenIds: false }).rollout(() =>
        run(graph, "paint the north wall red", streaming),
      );
      expect(wire.bodies).toHaveLength(3);
      for (const body of wire.bodies) expect(body.stream ?? false).toBe(streaming);
      const items = t.messages_and_choices as any[];
      expect(items.map((m) => m.role ?? "choice")).toEqual([
        "user",
        "choice",
        "tool",
        "choice",
        "tool",
        "choice",
      ]);
      // The messages recorded as sent are those that went on the wire.
      const sent = wire.bodies[2]!.messages.filter((m: any) => m.role !== "assistant");
      expect(items.filter((m) => m.role)).toEqual(sent);
      expect(t.tools).toEqual(wire.bodies[0]!.tools);
      expect(t.tools!.map((x: any) => x.function.name)).toEqual(["paint", "measure"]);
      const [first, second, last] = [items[1], items[3], items[5]];
      for (const [choice, tool] of [
        [first, items[2]],
        [second, items[4]],
      ]) {
        expect(choice.finish_reason).toBe("tool_calls");
        const call = choice.message.tool_calls[0];
        expect(tool.tool_call_id).toBe(call.id);
        const args = JSON.parse(call.function.arguments);
        expect(tool.content).toBe(
          call.function.name === "paint"
            ? `painted ${args.color}`
            : `wall ${args.wall} is 3 metres`,
        );
        // The call's tokens: <tool>, the tool's name, the argument's word, the end token.
        expect(choice.logprobs.content.map((l: any) => l.token)).toEqual([
          "<tool>",
          call.function.name,
          args.color ?? args.wall,
          "<eos>",
        ]);
      }
      expect(last.finish_reason).not.toBe("tool_calls");
      expect(last.logprobs.content.length).toBeGreaterThan(0);
      // An answer that ended by itself carries its end token last, as vLLM's.
      const end = last.finish_reason === "stop" ? "<eos>" : "";
      expect(last.logprobs.content.map((l: any) => l.token).join("")).toBe(
        `${last.message.content}${end}`,
      );
      expect(t.additional_histories).toEqual([]);
      expect(t.logs).toEqual([]);
    });
  }

  for (const [streaming, raw] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    it(`equals the trajectory the raw openai client records for the same requests (${streaming ? "streamed" : "not streamed"}, ${raw ? "chatOpenAIFields()" : "logprobs: true"})`, async () => {
      const fields = raw ? chatOpenAIFields() : { logprobs: true };
      const { model, wire } = chatModel(emu, fields);
      const recorder = new Recorder({ tokenIds: raw });
      const viaLangChain = await recorder.rollout(() =>
        run(agentGraph(model, { seed: 11 }), "measure then paint", streaming),
      );
      const viaOpenAI = await replayRaw(emu, wire.bodies, recorder);
      // LangChain's parsed answer, streamed or not, does not carry vLLM's
      // `stop_reason` (the raw response does: chatOpenAIFields() keeps it,
      // and the recorder keeps it from streamed chunks too); the rest is equal.
      const withoutStopReason = (t: { toJSON(): unknown }) =>
        JSON.parse(JSON.stringify(t.toJSON(), (k, v) => (k === "stop_reason" ? undefined : v)));
      if (raw) expect(viaLangChain.toJSON()).toEqual(viaOpenAI.toJSON());
      else expect(viaLangChain.toJSON()).toEqual(withoutStopReason(viaOpenAI));
      expect(viaLangChain.messages_and_choices).toHaveLength(6);
      if (raw) expect((viaLangChain.messages_and_choices[1] as any).token_ids).toHaveLength(4);
    });
  }

  it("records tools that run after the last model call", async () => {
    const { model } = chatModel(emu, { logprobs: true });
    const graph = agentGraph(model, { toolTurns: 1, endWithTools: true, tools: [paint] });
    const t = await new Recorder({ tokenIds: false }).rollout(() => run(graph, "paint", false));
    const [, choice, tool] = t.messages_and_choices as any[];
    const call = choice.message.tool_calls[0];
    expect(tool).toEqual({
      role: "tool",
      tool_call_id: call.id,
      content: `painted ${JSON.parse(call.function.arguments).color}`,
    });
    expect(t.messages_and_choices).toHaveLength(3);
  });

  it("logs a failing tool and keeps the error message the model was sent", async () => {
    const { model, wire } = chatModel(emu, { logprobs: true });
    const graph = agentGraph(model, { toolTurns: 1, tools: [broken] });
    const t = await new Recorder({ tokenIds: false }).rollout(() => run(graph, "try", false));
    const tool = t.messages_and_choices[2] as any;
    expect(tool).toEqual(wire.bodies[1]!.messages[2]);
    expect(tool.content).toMatch(/^Error: the brush broke/);
    expect(t.logs).toEqual([
      expect.stringMatching(/^langchain: tool broken \(call_\w+\) failed: the brush broke$/),
    ]);
  });

  it("keeps concurrent rollouts apart with one shared handler", async () => {
    const { model } = chatModel(emu, { logprobs: true });
    const handler = new TrajectoryCallbackHandler();
    const recorder = new Recorder({ tokenIds: false });
    const words = ["red", "cat", "apple", "two", "blue", "dog"];
    const trajectories: Trajectory[] = await Promise.all(
      words.map((w, i) => {
        const graph = agentGraph(model, { seed: 100 + 10 * i });
        return recorder.rollout(() => graph.invoke(input(`say ${w}`), { callbacks: [handler] }));
      }),
    );
    const allIds = new Set<string>();
    for (const [i, t] of trajectories.entries()) {
      const items = t.messages_and_choices as any[];
      expect(items).toHaveLength(6);
      expect(items[0]).toEqual({ role: "user", content: `say ${words[i]}` });
      const ids = items
        .filter((m) => m.message)
        .flatMap((c) => c.message.tool_calls ?? [])
        .map((c: any) => c.id);
      const results = items.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
      expect(results).toEqual(ids.slice(0, 2));
      for (const id of ids) allIds.add(id);
      expect(t.additional_histories).toEqual([]);
    }
    expect(allIds.size).toBe(2 * words.length);
  });
});
