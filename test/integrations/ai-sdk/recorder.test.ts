import { generateText, stepCountIs, streamText, ToolLoopAgent } from "ai";
import OpenAI from "openai";
import { Recorder, type Trajectory } from "trajectory-recorder";
import { recorderTelemetry } from "trajectory-recorder/ai-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../../src/emulator/index.js";
import { KEY, start } from "../../emulator/helpers.js";
import {
  AI_MAJOR,
  agentSettings,
  type Bodies,
  CHAT_TOOLS,
  compatibleModel,
  forecast,
  handWrittenAgent,
  INSTRUCTIONS,
  openaiChatModel,
  tools,
} from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

type Entry = Record<string, any>;
const entries = (t: Trajectory) => t.toJSON().messages_and_choices as Entry[];
const isChoice = (e: Entry) => "finish_reason" in e;

/** Checks the weather agent's conversation: system, user, two tool turns, an answer. */
function expectWeatherConversation(
  t: Trajectory,
  prompt: string,
  o: { tokenIds?: boolean; histories?: number } = {},
) {
  const tokenIds = o.tokenIds ?? true;
  const items = entries(t);
  expect(items.map((e) => (isChoice(e) ? `choice:${e.finish_reason}` : e.role))).toEqual([
    "system",
    "user",
    "choice:tool_calls",
    "tool",
    "choice:tool_calls",
    "tool",
    expect.stringMatching(/^choice:(stop|length)$/),
  ]);
  expect(items[0]).toEqual({ role: "system", content: INSTRUCTIONS });
  expect(items[1]).toEqual({ role: "user", content: prompt });
  for (const i of [2, 4]) {
    const choice = items[i]!;
    const call = choice.message.tool_calls[0];
    expect(call.type).toBe("function");
    expect(call.function.name).toBe("weather");
    const { city } = JSON.parse(call.function.arguments);
    // The tool's result follows, under the call's id, as the next request sent it.
    expect(items[i + 1]).toEqual({
      role: "tool",
      tool_call_id: call.id,
      content: forecast(city),
    });
  }
  for (const choice of items.filter(isChoice)) {
    expect(choice.message.role).toBe("assistant");
    const lp = choice.logprobs.content as { token: string; logprob: number }[];
    // An answer may be empty (the end token first); a tool call never is.
    expect(lp.length).toBeGreaterThanOrEqual(choice.message.tool_calls?.length ? 1 : 0);
    for (const x of lp) expect(Number.isFinite(x.logprob)).toBe(true);
    if (tokenIds) {
      // Logprob tokens spelled as the ids they are (return_tokens_as_token_ids).
      expect(lp.map((x) => x.token)).toEqual(
        (choice.token_ids as number[]).map((id) => `token_id:${id}`),
      );
      expect(choice.prompt_token_ids.length).toBeGreaterThan(0);
    } else {
      expect(choice.token_ids).toBeUndefined();
    }
  }
  const answer = items[6]!;
  expect(answer.message.tool_calls ?? []).toEqual([]);
  // An answer that ended by itself carries its end token last, as vLLM's.
  const end = answer.finish_reason === "stop" ? "<eos>" : "";
  if (!tokenIds)
    expect((answer.logprobs.content as { token: string }[]).map((x) => x.token).join("")).toBe(
      `${answer.message.content}${end}`,
    );
  expect(t.tools).toEqual(CHAT_TOOLS);
  expect(t.additional_histories).toHaveLength(o.histories ?? 0);
}

describe("recorderMiddleware with generateText and streamText", () => {
  it("records a multi-turn tool agent: messages, tools, tool calls, tool results, logprobs and token ids", async () => {
    const bodies: Bodies = [];
    const model = compatibleModel(emu, bodies);
    let text = "";
    const t = await new Recorder().rollout(async () => {
      ({ text } = await generateText({ model, ...agentSettings(11), prompt: "weather in paris" }));
    });
    expectWeatherConversation(t, "weather in paris");
    expect(entries(t)[6]!.message.content).toBe(text);
    expect(t.logs).toEqual([]);
    // Inside the rollout the provider was asked for logprobs and token ids.
    expect(bodies).toHaveLength(3);
    for (const b of bodies) expect(b).toMatchObject({ logprobs: true, return_token_ids: true });
  });

  it("records the same agent streamed, and the caller sees the parts it would see without the recorder", async () => {
    const bodies: Bodies = [];
    const model = compatibleModel(emu, bodies);
    let parts: string[] = [];
    let text = "";
    const t = await new Recorder().rollout(async () => {
      const result = streamText({ model, ...agentSettings(12), prompt: "weather in rome" });
      for await (const part of result.fullStream) parts.push(part.type);
      text = await result.text;
    });
    expectWeatherConversation(t, "weather in rome");
    expect(entries(t)[6]!.message.content).toBe(text);
    expect(parts).not.toContain("raw");
    for (const b of bodies) expect(b).toMatchObject({ stream: true, logprobs: true });

    // The same stream outside a rollout: the same part types, in the same order.
    const plain: string[] = [];
    const outside = streamText({ model, ...agentSettings(12), prompt: "weather in rome" });
    for await (const part of outside.fullStream) plain.push(part.type);
    parts = parts.filter((p) => p !== "raw");
    expect(plain).toEqual(parts);
  });

  it("hands raw chunks to a caller that asked for them, and only then", async () => {
    const model = compatibleModel(emu);
    const count = async (includeRawChunks: boolean) => {
      let raw = 0;
      await new Recorder().rollout(async () => {
        const r = streamText({ model, prompt: "say red", seed: 1, includeRawChunks });
        for await (const part of r.fullStream) if (part.type === "raw") raw++;
      });
      return raw;
    };
    expect(await count(false)).toBe(0);
    expect(await count(true)).toBeGreaterThan(2);
  });

  it("records a ToolLoopAgent, generating and streaming", async () => {
    const model = compatibleModel(emu);
    const { system, ...settings } = agentSettings(13);
    const agent = new ToolLoopAgent({ model, instructions: system, ...settings });
    const generated = await new Recorder().rollout(async () => {
      await agent.generate({ prompt: "weather in oslo" });
    });
    expectWeatherConversation(generated, "weather in oslo");
    const streamed = await new Recorder().rollout(async () => {
      const r = await agent.stream({ prompt: "weather in oslo" });
      await r.consumeStream();
    });
    expectWeatherConversation(streamed, "weather in oslo");
    // Same seed, same agent: streaming records the same turns as generating.
    const turns = (t: Trajectory) =>
      entries(t).map((e) =>
        isChoice(e) ? [e.message.content || null, e.message.tool_calls ?? [], e.token_ids] : e,
      );
    expect(turns(streamed)).toEqual(turns(generated));
  });

  it("records the results of tools run after the last model call", async () => {
    const model = compatibleModel(emu);
    const once = { tools, seed: 5, toolChoice: "required" as const, stopWhen: stepCountIs(1) };
    for (const stream of [false, true]) {
      const t = await new Recorder().rollout(async () => {
        if (stream) await streamText({ model, ...once, prompt: "weather in lima" }).consumeStream();
        else await generateText({ model, ...once, prompt: "weather in lima" });
      });
      const items = entries(t);
      expect(items.map((e) => (isChoice(e) ? "choice" : e.role))).toEqual([
        "user",
        "choice",
        "tool",
      ]);
      const call = items[1]!.message.tool_calls[0];
      expect(items[2]).toEqual({
        role: "tool",
        tool_call_id: call.id,
        content: forecast(JSON.parse(call.function.arguments).city),
      });
    }
  });

  it("records them too when a call brings its own telemetry integrations, with or without recorderTelemetry", async () => {
    const model = compatibleModel(emu);
    const seen: string[] = [];
    // ai 6 names the option experimental_telemetry, and ends a generation
    // with onFinish; ai 7 names it telemetry, and ends with onEnd.
    const TELEMETRY = AI_MAJOR === 6 ? "experimental_telemetry" : "telemetry";
    const mine = { onEnd: () => void seen.push("end"), onFinish: () => void seen.push("end") };
    const once = { tools, seed: 6, toolChoice: "required" as const, stopWhen: stepCountIs(1) };
    const without = await new Recorder().rollout(async () => {
      await generateText({
        model,
        ...once,
        prompt: "weather in nice",
        [TELEMETRY]: { integrations: [mine] },
      });
    });
    // ai 6 calls a call's own integrations besides the global ones; ai 7
    // replaces the global ones with them, and the result comes from its
    // "ai:telemetry" tracing channel instead.
    const items = entries(without);
    expect(items.map((e) => e.role ?? "choice")).toEqual(["user", "choice", "tool"]);
    const call = items[1]!.message.tool_calls[0];
    expect(items[2]).toEqual({
      role: "tool",
      tool_call_id: call.id,
      content: forecast(JSON.parse(call.function.arguments).city),
    });
    expect(without.logs).toEqual([]);
    const withIt = await new Recorder().rollout(async () => {
      await generateText({
        model,
        ...once,
        prompt: "weather in nice",
        [TELEMETRY]: { integrations: [mine, recorderTelemetry] },
      });
    });
    // The same with recorderTelemetry among them.
    expect(entries(withIt).map((e) => e.role ?? "choice")).toEqual(["user", "choice", "tool"]);
    expect(withIt.logs).toEqual([]);
    expect(seen).toEqual(["end", "end"]);
  });
});

describe("equality with the raw openai client", () => {
  for (const stream of [false, true]) {
    it(`records what a hand-written agent on a wrapped openai client records (${stream ? "streaming" : "non-streaming"})`, async () => {
      const prompt = "weather in kyoto";
      const viaSdk = await new Recorder().rollout(async () => {
        const model = compatibleModel(emu);
        if (stream) await streamText({ model, ...agentSettings(21), prompt }).consumeStream();
        else await generateText({ model, ...agentSettings(21), prompt });
      });
      const recorder = new Recorder();
      const openai = recorder.wrap(new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 }));
      const viaClient = await recorder.rollout(async () => {
        await handWrittenAgent(openai, { prompt, seed: 21, stream });
      });
      expectWeatherConversation(viaSdk, prompt);
      expect(viaSdk.toJSON()).toEqual(viaClient.toJSON());
    });
  }

  it("records what the raw client records for the very same wire requests (@ai-sdk/openai, no token ids)", async () => {
    const bodies: Bodies = [];
    const model = openaiChatModel(emu, bodies);
    const opts = { logprobs: true, tokenIds: false };
    const viaSdk = await new Recorder(opts).rollout(async () => {
      await generateText({ model, ...agentSettings(22), prompt: "weather in cairo" });
      await streamText({ model, ...agentSettings(23), prompt: "weather in lagos" }).consumeStream();
    });
    const recorder = new Recorder(opts);
    const openai = recorder.wrap(new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 }));
    const viaClient = await recorder.rollout(async () => {
      for (const body of bodies) {
        const res = await openai.chat.completions.create(body as never);
        if (body.stream) for await (const _ of res as unknown as AsyncIterable<unknown>);
      }
    });
    expect(bodies).toHaveLength(6);
    expect(viaSdk.toJSON()).toEqual(viaClient.toJSON());
    // The second agent's calls do not extend the first conversation: together
    // they make one additional history of their own, for both recordings alike.
    expect(viaSdk.additional_histories).toHaveLength(1);
    expect(JSON.stringify(viaSdk.additional_histories[0])).toContain("weather in lagos");
    expect(JSON.stringify(viaSdk.messages_and_choices)).not.toContain("weather in lagos");
  });
});

describe("what the middleware leaves alone", () => {
  it("passes calls outside a rollout through untouched", async () => {
    const wrappedBodies: Bodies = [];
    const plainBodies: Bodies = [];
    const wrapped = compatibleModel(emu, wrappedBodies);
    const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
    const plain = createOpenAICompatible({
      name: "emu",
      baseURL: emu.url,
      apiKey: KEY,
      includeUsage: true,
      fetch: async (url, init) => {
        plainBodies.push(JSON.parse(String(init?.body)));
        return fetch(url, init);
      },
    })("emulator/tiny");
    const a = await generateText({
      model: wrapped,
      ...agentSettings(31),
      prompt: "weather in bern",
    });
    const b = await generateText({ model: plain, ...agentSettings(31), prompt: "weather in bern" });
    expect(wrappedBodies).toEqual(plainBodies);
    expect(wrappedBodies[0]).not.toHaveProperty("logprobs");
    expect(a.steps.map((s) => s.content)).toEqual(b.steps.map((s) => s.content));
    expect(a.warnings).toEqual(b.warnings);
  });

  it("keeps its own provider options from showing up as warnings", async () => {
    // openai-compatible warns about options under a non-camelCase provider name.
    const model = compatibleModel(emu, [], "local-emu");
    const t = await new Recorder().rollout(async () => {
      const g = await generateText({ model, prompt: "say red", seed: 2 });
      expect(g.warnings).toEqual([]);
      const s = streamText({ model, prompt: "say red", seed: 2 });
      await s.consumeStream();
      expect(await s.warnings).toEqual([]);
    });
    expect(entries(t).filter(isChoice)[0]!.token_ids.length).toBeGreaterThan(0);
  });

  it("respects the recorder's logprobs and tokenIds options", async () => {
    const bodies: Bodies = [];
    const model = compatibleModel(emu, bodies);
    const t = await new Recorder({ logprobs: false, tokenIds: false }).rollout(async () => {
      await generateText({ model, prompt: "say red", seed: 4 });
    });
    expect(bodies[0]).not.toHaveProperty("logprobs");
    expect(bodies[0]).not.toHaveProperty("return_token_ids");
    const choice = entries(t)[1]!;
    expect(choice.logprobs).toBeNull();
    expect(choice.token_ids).toBeUndefined();
    expect(t.logs).toEqual([]);
  });

  it("keeps concurrent rollouts apart", async () => {
    const model = compatibleModel(emu);
    const cities = ["paris", "rome", "oslo", "lima", "kyoto", "cairo"];
    const recorder = new Recorder();
    const trajectories = await Promise.all(
      cities.map((city, i) =>
        recorder.rollout(async () => {
          const prompt = `weather in ${city}`;
          if (i % 2) await streamText({ model, ...agentSettings(40 + i), prompt }).consumeStream();
          else await generateText({ model, ...agentSettings(40 + i), prompt });
        }),
      ),
    );
    trajectories.forEach((t, i) => {
      expectWeatherConversation(t, `weather in ${cities[i]}`);
    });
  });

  it("records a failed call and hands the caller the provider's error", async () => {
    const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
    const { wrapLanguageModel } = await import("ai");
    const { recorderMiddleware } = await import("trajectory-recorder/ai-sdk");
    const bad = createOpenAICompatible({ name: "emu", baseURL: emu.url, apiKey: "wrong-key" });
    const model = wrapLanguageModel({
      model: bad("emulator/tiny"),
      middleware: recorderMiddleware(),
    });
    let thrown: unknown;
    const t = await new Recorder().rollout(async () => {
      thrown = await generateText({ model, prompt: "say red", maxRetries: 0 }).catch((e) => e);
    });
    expect((thrown as { statusCode?: number }).statusCode).toBe(401);
    expect(entries(t)).toEqual([{ role: "user", content: "say red" }]);
    expect(t.logs.some((l) => l.includes("error"))).toBe(true);
  });
});

describe("providers that cannot carry everything", () => {
  it("@ai-sdk/openai chat: records logprobs, and says why there are no token ids", async () => {
    const bodies: Bodies = [];
    const model = openaiChatModel(emu, bodies);
    const t = await new Recorder().rollout(async () => {
      await generateText({ model, ...agentSettings(51), prompt: "weather in quito" });
      await generateText({ model, prompt: "say red", seed: 1 });
    });
    expectWeatherConversation(t, "weather in quito", { tokenIds: false, histories: 1 });
    expect(bodies[0]).toMatchObject({ logprobs: true });
    expect(bodies[0]).not.toHaveProperty("return_token_ids");
    // Said once per rollout, not once per call; and so histories follow messages only.
    expect(t.logs).toEqual([
      expect.stringContaining("does not forward return_token_ids"),
      expect.stringContaining("token lineage not checked"),
    ]);
  });

  it("a Responses API model: the conversation is recorded without logprobs, and the trajectory says so", async () => {
    const { wrapLanguageModel } = await import("ai");
    const { recorderMiddleware } = await import("trajectory-recorder/ai-sdk");
    // A model of the specification version the installed `ai` speaks (v3 and
    // v4 share this result's shape), answering like the Responses API.
    const calls: Array<{ providerOptions?: unknown }> = [];
    const responses = {
      specificationVersion: AI_MAJOR === 6 ? "v3" : "v4",
      provider: "openai.responses",
      modelId: "gpt-test",
      supportedUrls: {},
      doStream: async () => {
        throw new Error("not streamed here");
      },
      doGenerate: async (options: { providerOptions?: unknown }) => {
        calls.push(options);
        return {
          content: [
            { type: "text", text: "Let me look." },
            {
              type: "tool-call",
              toolCallId: "fc_1",
              toolName: "weather",
              input: '{"city":"pisa"}',
            },
          ],
          finishReason: { unified: "tool-calls", raw: "completed" },
          usage: {
            inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 2, text: 2, reasoning: 0 },
          },
          warnings: [],
          request: { body: { model: "gpt-test", input: [] } },
          response: { id: "resp_1", modelId: "gpt-test", body: { output: [] } },
        };
      },
    };
    const model = wrapLanguageModel({
      model: responses as never,
      middleware: recorderMiddleware(),
    });
    const t = await new Recorder().rollout(async () => {
      await generateText({ model, tools, system: INSTRUCTIONS, prompt: "weather in pisa" });
    });
    expect(entries(t)).toEqual([
      { role: "system", content: INSTRUCTIONS },
      { role: "user", content: "weather in pisa" },
      {
        index: 0,
        finish_reason: "tool_calls",
        logprobs: null,
        message: {
          role: "assistant",
          content: "Let me look.",
          refusal: null,
          // As openai-python dumps a Choice: its optional fields present as null.
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: [
            {
              id: "fc_1",
              type: "function",
              function: { name: "weather", arguments: '{"city":"pisa"}' },
            },
          ],
        },
      },
      // Run after the last (and only) model call.
      { role: "tool", tool_call_id: "fc_1", content: forecast("pisa") },
    ]);
    expect(t.tools).toEqual(CHAT_TOOLS);
    expect(t.logs).toEqual([expect.stringContaining("does not use the Chat Completions API")]);
    // The Responses model was not handed Chat Completions options.
    expect(calls[0]!.providerOptions).toBeUndefined();
  });
});
