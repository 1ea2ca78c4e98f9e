import { OpenAIResponsesModel, Runner } from "@openai/agents";
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import {
  attachRecorder,
  recordingModelProvider,
  recordingRunner,
} from "trajectory-recorder/openai-agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../../src/emulator/index.js";
import { KEY, start } from "../../emulator/helpers.js";
import {
  capturingClient,
  forecast,
  INSTRUCTIONS,
  MODEL,
  runToEnd,
  weatherAgent,
} from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

/** The checks every recorded model turn must pass: a real Choice with logprobs and token ids. */
function expectSampledTurn(choice: any) {
  const lp = choice.logprobs.content as { token: string; logprob: number }[];
  expect(lp.length).toBeGreaterThan(0);
  // Every token carries the policy's own logprob, a forced tool call's too.
  for (const t of lp) expect(t.logprob).toBeLessThanOrEqual(0);
  // Logprob tokens spelled as the ids they are (return_tokens_as_token_ids).
  expect(lp.map((x) => x.token)).toEqual(
    (choice.token_ids as number[]).map((id) => `token_id:${id}`),
  );
  expect(choice.prompt_token_ids.length).toBeGreaterThan(0);
}

describe("recordingRunner", () => {
  it("records a tool-using agent: messages, tools, tool call, tool result and the answer, with logprobs and token ids", async () => {
    const { client, bodies } = capturingClient(emu);
    const recorder = new Recorder();
    const runner = recordingRunner({ client, recorder });
    let finalOutput: string | undefined;
    const t = await recorder.rollout(async () => {
      const result = await runner.run(weatherAgent({ seed: 4 }), "weather red");
      finalOutput = result.finalOutput;
    });
    const j = t.toJSON() as any;
    const mc = j.messages_and_choices;
    expect(mc).toHaveLength(5);
    expect(mc[0]).toEqual({ role: "system", content: INSTRUCTIONS });
    expect(mc[1]).toEqual({ role: "user", content: "weather red" });

    const call = mc[2];
    expect(call.finish_reason).toBe("tool_calls");
    expect(call.message.tool_calls).toHaveLength(1);
    const tc = call.message.tool_calls[0];
    expect(tc.type).toBe("function");
    expect(tc.function.name).toBe("weather");
    const args = JSON.parse(tc.function.arguments);
    expect(typeof args.city).toBe("string");
    expectSampledTurn(call);

    expect(mc[3]).toEqual({ role: "tool", tool_call_id: tc.id, content: forecast(args) });

    const answer = mc[4];
    expect(answer.message.content).toBe(finalOutput);
    expect(answer.finish_reason).toMatch(/^(stop|length)$/);
    expect(answer.token_ids).toHaveLength(answer.logprobs.content.length);
    expectSampledTurn(answer);

    expect(j.tools).toEqual([
      {
        type: "function",
        function: {
          name: "weather",
          description: "The weather in a city.",
          parameters: {
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city"],
            additionalProperties: false,
          },
          strict: true,
        },
      },
    ]);
    expect(j.additional_histories).toEqual([]);
    expect(j.logs).toEqual([]);

    // On the wire: two chat completions that asked for logprobs and token ids,
    // the second carrying the tool result.
    expect(bodies).toHaveLength(2);
    for (const b of bodies) {
      expect(b.model).toBe(MODEL);
      expect(b.logprobs).toBe(true);
      expect(b.return_token_ids).toBe(true);
      expect(b.seed).toBe(4);
    }
    expect(bodies[0]!.tool_choice).toBe("required");
    expect((bodies[1]!.messages as any[]).at(-1)).toEqual({
      role: "tool",
      tool_call_id: tc.id,
      content: forecast(args),
    });
  });

  it("records a streamed run as it is read, and the caller still gets the SDK's stream events", async () => {
    const { client, bodies } = capturingClient(emu);
    const recorder = new Recorder();
    const runner = recordingRunner({ client, recorder });
    const events: string[] = [];
    let text = "";
    let finalOutput: string | undefined;
    const t = await recorder.rollout(async () => {
      const result = await runner.run(weatherAgent({ seed: 4 }), "weather red", { stream: true });
      for await (const e of result) {
        events.push(e.type);
        if (e.type === "raw_model_stream_event" && e.data.type === "output_text_delta")
          text += e.data.delta;
      }
      await result.completed;
      finalOutput = result.finalOutput;
    });
    expect(bodies.map((b) => b.stream)).toEqual([true, true]);
    expect(events).toContain("run_item_stream_event");
    expect(text).toBe(finalOutput);

    const j = t.toJSON() as any;
    const mc = j.messages_and_choices;
    expect(mc.map((m: any) => m.role ?? m.finish_reason)).toEqual([
      "system",
      "user",
      "tool_calls",
      "tool",
      mc[4].finish_reason,
    ]);
    const tc = mc[2].message.tool_calls[0];
    expect(tc.function.name).toBe("weather");
    expectSampledTurn(mc[2]);
    expect(mc[3]).toEqual({
      role: "tool",
      tool_call_id: tc.id,
      content: forecast(JSON.parse(tc.function.arguments)),
    });
    expect(mc[4].message.content).toBe(finalOutput);
    expectSampledTurn(mc[4]);
    // Read to the end: nothing is noted as incomplete.
    expect(j.logs).toEqual([]);

    // The same seed without streaming samples the same tokens.
    const plain = await recorder.rollout(() =>
      recordingRunner({ client }).run(weatherAgent({ seed: 4 }), "weather red"),
    );
    const pmc = (plain.toJSON() as any).messages_and_choices;
    for (const i of [2, 4]) {
      expect(mc[i].token_ids).toEqual(pmc[i].token_ids);
      expect(mc[i].logprobs.content).toEqual(pmc[i].logprobs.content);
      expect(mc[i].prompt_token_ids).toEqual(pmc[i].prompt_token_ids);
    }
    expect(mc[2].message.tool_calls).toEqual(pmc[2].message.tool_calls);
    expect(mc[4].message.content).toBe(pmc[4].message.content);
  });

  it("records the result of a tool that runs after the last model call", async () => {
    const { client, bodies } = capturingClient(emu);
    const recorder = new Recorder();
    const runner = recordingRunner({ client });
    for (const stream of [false, true]) {
      bodies.length = 0;
      let finalOutput: unknown;
      const t = await recorder.rollout(async () => {
        const agent = weatherAgent({ seed: 4, stopAtTool: true });
        finalOutput = await runToEnd(runner, agent, "weather cat", stream);
      });
      expect(bodies).toHaveLength(1);
      const mc = (t.toJSON() as any).messages_and_choices;
      expect(mc).toHaveLength(4);
      const tc = mc[2].message.tool_calls[0];
      expect(mc[3]).toEqual({ role: "tool", tool_call_id: tc.id, content: finalOutput });
      expect(finalOutput).toBe(forecast(JSON.parse(tc.function.arguments)));
    }
  });

  it("records each tool result once when both the runner and the agent are hooked", async () => {
    const { client } = capturingClient(emu);
    const recorder = new Recorder();
    const runner = recordingRunner({ client });
    const agent = weatherAgent({ seed: 4, stopAtTool: true });
    const detach = attachRecorder(agent);
    const t = await recorder.rollout(() => runner.run(agent, "weather cat"));
    expect(t.messages().filter((m) => m.role === "tool")).toHaveLength(1);
    detach();
  });

  it("passes calls outside a rollout through untouched", async () => {
    const { client, bodies } = capturingClient(emu);
    const runner = recordingRunner({ client });
    const result = await runner.run(weatherAgent({ seed: 4 }), "weather red");
    expect(typeof result.finalOutput).toBe("string");
    expect(bodies).toHaveLength(2);
    for (const b of bodies) {
      expect(b).not.toHaveProperty("logprobs");
      expect(b).not.toHaveProperty("return_token_ids");
    }
    // Nothing leaked into a later rollout.
    const t = await new Recorder().rollout(() => undefined);
    expect(t.messages_and_choices).toEqual([]);
  });

  it("records a Responses API model over the recording client as plain messages", async () => {
    const openai = new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 });
    const runner = recordingRunner({ client: openai }); // wraps openai in place
    const agent = weatherAgent({ seed: 4 });
    agent.model = new OpenAIResponsesModel(openai as never, MODEL);
    const t = await new Recorder().rollout(() => runner.run(agent, "weather red"));
    const roles = t.messages().map((m) => m.role);
    expect(roles.slice(0, 4)).toEqual(["system", "user", "assistant", "tool"]);
    expect(roles.at(-1)).toBe("assistant");
    // Messages, not Choices: the Responses API returns no token ids.
    expect(t.messages_and_choices.every((m) => "role" in m)).toBe(true);
    expect(t.logs).toEqual([]);
  });

  it("says when an agent's Responses API model calls a client the recorder did not wrap", async () => {
    const { client } = capturingClient(emu);
    const runner = recordingRunner({ client });
    const agent = weatherAgent({ seed: 4 });
    const unwrapped = new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 });
    agent.model = new OpenAIResponsesModel(unwrapped as never, MODEL);
    const t = await new Recorder().rollout(() => runner.run(agent, "weather red"));
    expect(t.messages_and_choices).toEqual([]);
    // The note first (the tool results that follow have no recorded call to go with).
    expect(t.logs[0]).toMatch(/^calls not recorded: agent "forecaster" uses the Responses API/);
    expect(t.logs[0]).toContain("recorder.wrap(client)");
  });

  it("records tool results from an agent's hooks until they are detached", async () => {
    const { client } = capturingClient(emu);
    // A plain Runner on the recording provider: model calls recorded, no runner hooks.
    const runner = new Runner({ modelProvider: recordingModelProvider({ client }) });
    const agent = weatherAgent({ seed: 4, stopAtTool: true });
    const recorder = new Recorder();
    const detach = attachRecorder(agent);
    const hooked = await recorder.rollout(() => runner.run(agent, "weather cat"));
    expect(hooked.messages().map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    detach();
    const unhooked = await recorder.rollout(() => runner.run(agent, "weather cat"));
    expect(unhooked.messages().map((m) => m.role)).toEqual(["system", "user", "assistant"]);
  });
});
