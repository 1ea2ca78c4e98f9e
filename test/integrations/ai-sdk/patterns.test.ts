// The AI SDK patterns its docs show (generateText and streamText with tools,
// ToolLoopAgent with a sub-agent as a tool, a reasoning model streamed),
// recorded against a server that answers like vLLM and logs every request:
// each recorded history must be the requests on the wire, message for
// message, and every trainable Choice must come from the policy.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  generateText,
  jsonSchema,
  stepCountIs,
  streamText,
  ToolLoopAgent,
  tool,
  wrapLanguageModel,
} from "ai";
import { Recorder, type Trajectory, validateTrajectory } from "trajectory-recorder";
import { recorderMiddleware } from "trajectory-recorder/ai-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY } from "../../emulator/helpers.js";
import {
  type Exchange,
  startVllmServer,
  type VllmServer,
  wireMismatches,
} from "../../helpers/vllm-server.js";
import { AI_MAJOR, forecast, WEATHER_PARAMETERS } from "./helpers.js";

type Json = Record<string, any>;

const COORDINATOR = "You coordinate research.";
const RESEARCHER = "You research one question.";

/** The text of the last user message. */
function userText(body: Json): string {
  const user = [...(body.messages as Json[])].reverse().find((m) => m.role === "user");
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content);
}

const cityOf = (text: string) => /weather in (\w+)/.exec(text)?.[1] ?? "paris";

/**
 * The scripted models. The policy calls the weather tool for two cities at
 * once (parallel calls), then answers. The coordinator hands the question to
 * the researcher (a sub-agent) and answers from its report; the researcher
 * calls the weather tool and stops there (its last step is a tool call).
 * The judge scores an answer. A "reasoner" thinks before answering.
 */
function respond(body: Json) {
  const messages = body.messages as Json[];
  const system = messages[0]?.role === "system" ? String(messages[0].content) : "";
  const last = messages.at(-1) as Json;
  if (body.model === "judge") return { content: "score: 1", model: "judge" };
  if (body.model === "reasoner")
    return { reasoning: "The user wants a colour. Red is a colour.", content: "red" };
  if (system === RESEARCHER)
    return { tool_calls: [{ name: "weather", arguments: { city: cityOf(userText(body)) } }] };
  if (system === COORDINATOR) {
    if (last.role === "tool") return { content: `Report: ${String(last.content) || "none"}` };
    return { tool_calls: [{ name: "research", arguments: { task: userText(body) } }] };
  }
  if (last.role === "tool") return { content: "Done." };
  const city = cityOf(userText(body));
  return {
    tool_calls: [
      { name: "weather", arguments: { city } },
      { name: "weather", arguments: { city: `${city}x` } },
    ],
  };
}

let server: VllmServer;
beforeAll(async () => {
  server = await startVllmServer({ respond });
});
afterAll(async () => {
  await server.close();
});

function model(id: string) {
  const provider = createOpenAICompatible({
    name: "vllm",
    baseURL: server.baseURL,
    apiKey: KEY,
    includeUsage: true,
  });
  return wrapLanguageModel({ model: provider(id), middleware: recorderMiddleware() });
}

/** The weather tool; the second city's answer comes back first. */
const weather = tool({
  description: "The weather in a city.",
  inputSchema: jsonSchema<{ city: string }>(WEATHER_PARAMETERS),
  execute: async ({ city }) => {
    await new Promise((r) => setTimeout(r, city.endsWith("x") ? 1 : 30));
    return forecast(city);
  },
});

/** The exchanges whose conversation is about `city`. */
const about = (city: string) => (x: Exchange) =>
  (x.body.messages as Json[]).some(
    (m) => m.role === "user" && String(m.content).includes(`weather in ${city}`),
  );

type Entry = Json;
const shape = (items: Entry[]) =>
  items.map((e) => ("finish_reason" in e ? `choice:${e.finish_reason}` : e.role));

/** Every tool message answers a call of an assistant turn before it in its own history. */
function toolMessagesAnswerTheirHistory(t: Trajectory): void {
  const json = t.toJSON() as Json;
  for (const items of [
    json.messages_and_choices,
    ...json.additional_histories.map((h: Json) => h.messages_and_choices),
  ] as Entry[][]) {
    const issued = new Set<string>();
    for (const item of items) {
      const message = item.message ?? item;
      for (const c of message.tool_calls ?? []) issued.add(c.id);
      if (item.role === "tool") expect(issued.has(item.tool_call_id)).toBe(true);
    }
  }
}

async function runTools(stream: boolean, city: string) {
  const settings = {
    model: model("policy"),
    tools: { weather },
    stopWhen: stepCountIs(3),
    prompt: `weather in ${city}`,
  };
  if (!stream) return (await generateText(settings)).text;
  const result = streamText(settings);
  await result.consumeStream();
  return result.text;
}

describe("AI SDK agents written as its docs write them, against a vLLM-like server", () => {
  for (const stream of [false, true]) {
    it(`${stream ? "streamText" : "generateText"}: parallel tool calls finishing out of order are recorded as the wire sent them`, async () => {
      const city = stream ? "lima" : "oslo";
      const t = await new Recorder().rollout(() => runTools(stream, city));
      const wire = server.exchanges.filter(about(city));
      expect(wire).toHaveLength(2);
      expect(wireMismatches(t, wire)).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      const items = t.toJSON().messages_and_choices as Entry[];
      expect(shape(items)).toEqual(["user", "choice:tool_calls", "tool", "tool", "choice:stop"]);
      // Call order, as the second request sent them, though the second finished first.
      const calls = items[1]!.message.tool_calls.map((c: Json) => c.id);
      expect([items[2]!.tool_call_id, items[3]!.tool_call_id]).toEqual(calls);
      expect(items[3]!.content).toBe(forecast(`${city}x`));
      expect(t.additional_histories).toEqual([]);
      expect(t.logs).toEqual([]);
    });
  }

  for (const stream of [false, true]) {
    it(`ToolLoopAgent with a sub-agent whose last step is a tool call (${stream ? "streamed" : "generated"})`, async () => {
      const researcher = new ToolLoopAgent({
        model: model("policy"),
        instructions: RESEARCHER,
        tools: { weather },
        stopWhen: stepCountIs(1),
      });
      const research = tool({
        description: "Research a question with a sub-agent.",
        inputSchema: jsonSchema<{ task: string }>({
          type: "object",
          properties: { task: { type: "string" } },
          required: ["task"],
        }),
        execute: async ({ task }, { abortSignal }) => {
          const result = await researcher.generate({ prompt: task, abortSignal });
          return result.text;
        },
      });
      const coordinator = new ToolLoopAgent({
        model: model("policy"),
        instructions: COORDINATOR,
        tools: { research },
        stopWhen: stepCountIs(3),
      });
      const city = stream ? "quito" : "accra";
      const t = await new Recorder().rollout(async () => {
        if (!stream) return coordinator.generate({ prompt: `weather in ${city}` });
        const r = await coordinator.stream({ prompt: `weather in ${city}` });
        await r.consumeStream();
      });
      const wire = server.exchanges.filter(about(city));
      expect(wire).toHaveLength(3);
      expect(wireMismatches(t, wire)).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      const main = t.toJSON().messages_and_choices as Entry[];
      expect(shape(main)).toEqual(["system", "user", "choice:tool_calls", "tool", "choice:stop"]);
      // The sub-agent's history holds its own last tool result, which no request carried.
      expect(t.additional_histories).toHaveLength(1);
      const sub = t.additional_histories[0]!.toJSON().messages_and_choices as Entry[];
      expect(shape(sub)).toEqual(["system", "user", "choice:tool_calls", "tool"]);
      expect(sub[3]).toEqual({
        role: "tool",
        tool_call_id: sub[2]!.message.tool_calls[0].id,
        content: forecast(city),
      });
      toolMessagesAnswerTheirHistory(t);
      expect(t.logs).toEqual([]);
    });
  }

  it("a reasoning model streamed keeps its reasoning on the Choice, as when not streamed", async () => {
    const reasoner = model("reasoner");
    const t = await new Recorder().rollout(async () => {
      await generateText({ model: reasoner, prompt: "name a colour" });
      await streamText({ model: reasoner, prompt: "name a colour again" }).consumeStream();
    });
    const generated = (t.toJSON().messages_and_choices as Entry[])[1]!;
    const streamed = (t.additional_histories[0]!.toJSON().messages_and_choices as Entry[])[1]!;
    expect(generated.message.reasoning_content).toBe("The user wants a colour. Red is a colour.");
    expect(streamed.message.reasoning_content).toBe(generated.message.reasoning_content);
    expect(streamed.message.content).toBe("red");
    expect(streamed.token_ids).toEqual(generated.token_ids);
  });

  it("a stream the caller stops reading is recorded as far as it went, not as a trainable Choice", async () => {
    const t = await new Recorder().rollout(async () => {
      const result = streamText({ model: model("reasoner"), prompt: "name a colour, slowly" });
      for await (const part of result.fullStream) if (part.type === "reasoning-delta") break;
    });
    // The caller stopped during the reasoning, before any content: what the
    // stream had brought is kept as a plain message the trainer never trains on.
    const items = t.toJSON().messages_and_choices as Entry[];
    expect(items).toEqual([
      { role: "user", content: "name a colour, slowly" },
      { role: "assistant", content: "" },
    ]);
    expect(t.logs).toEqual([
      expect.stringMatching(/incomplete: the rollout ended before this stream finished/),
    ]);
  });

  it("only the policy's completions are trainable Choices; a judge's is a plain message", async () => {
    const city = "riga";
    const recorder = new Recorder({ policy: ["policy"] });
    const t = await recorder.rollout(async () => {
      const text = await runTools(false, city);
      await generateText({ model: model("judge"), prompt: `Score this answer: ${text}` });
    });
    const wire = server.exchanges.filter(
      (x) => about(city)(x) || String(x.body.messages[0]?.content).includes("Done."),
    );
    expect(wireMismatches(t, wire, (m) => recorder.isPolicy(m))).toEqual([]);
    const judged = t.additional_histories[0]!.toJSON().messages_and_choices as Entry[];
    expect(judged[1]).toEqual({ role: "assistant", content: "score: 1" });
    expect(t.logs).toEqual([expect.stringContaining('model "judge" is not the policy')]);
  });

  it("50 concurrent rollouts ending on tool calls, with their own telemetry integrations: each keeps its own results", async () => {
    // ai 7: a call's own integrations replace the global ones, so the results
    // come from the tracing channel; ai 6 calls both.
    const TELEMETRY = AI_MAJOR === 6 ? "experimental_telemetry" : "telemetry";
    const cities = Array.from({ length: 50 }, (_, i) => `t${i}ville`);
    const recorder = new Recorder();
    const trajectories = await Promise.all(
      cities.map((city) =>
        recorder.rollout(() =>
          generateText({
            model: model("policy"),
            tools: { weather },
            stopWhen: stepCountIs(1),
            prompt: `weather in ${city}`,
            [TELEMETRY]: { integrations: [{ onEnd() {} }] },
          }),
        ),
      ),
    );
    trajectories.forEach((t, i) => {
      const city = cities[i] as string;
      const items = t.toJSON().messages_and_choices as Entry[];
      expect(shape(items)).toEqual(["user", "choice:tool_calls", "tool", "tool"]);
      const ids = items[1]!.message.tool_calls.map((c: Json) => c.id);
      expect(items.slice(2)).toEqual([
        { role: "tool", tool_call_id: ids[0], content: forecast(city) },
        { role: "tool", tool_call_id: ids[1], content: forecast(`${city}x`) },
      ]);
      expect(validateTrajectory(t)).toEqual([]);
      expect(t.logs).toEqual([]);
    });
  });

  it("50 concurrent rollouts, generated and streamed: no cross-talk", async () => {
    const cities = Array.from({ length: 50 }, (_, i) => `c${i}town`);
    const recorder = new Recorder();
    const trajectories = await Promise.all(
      cities.map((city, i) => recorder.rollout(() => runTools(i % 2 === 1, city))),
    );
    trajectories.forEach((t, i) => {
      const city = cities[i] as string;
      const wire = server.exchanges.filter(about(city));
      expect(wire).toHaveLength(2);
      expect(wireMismatches(t, wire)).toEqual([]);
      expect(validateTrajectory(t)).toEqual([]);
      expect(t.additional_histories).toEqual([]);
      expect(t.logs).toEqual([]);
      const json = JSON.stringify(t.toJSON());
      for (const other of cities) if (other !== city) expect(json).not.toContain(`${other}"`);
    });
  });
});
