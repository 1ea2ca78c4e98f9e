import { HumanMessage } from "@langchain/core/messages";
import { Recorder } from "trajectory-recorder";
import { chatOpenAIFields, TrajectoryCallbackHandler } from "trajectory-recorder/langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../../src/emulator/index.js";
import { renderPrompt } from "../../../src/emulator/template.js";
import { chatModel, paint, start } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

const handler = new TrajectoryCallbackHandler();
const say = [new HumanMessage("say red")];

describe("TrajectoryCallbackHandler on a chat model", () => {
  it("records a non-streamed tool call: the wire messages and tools, the Choice with logprobs", async () => {
    const { model, wire } = chatModel(emu, { logprobs: true, topLogprobs: 2 });
    const bound = model.bindTools([paint], { tool_choice: "required", seed: 3 } as never);
    const t = await new Recorder({ tokenIds: false }).rollout(async () => {
      await bound.invoke(say, { callbacks: [handler] });
    });
    const [body] = wire.bodies;
    const [user, choice] = t.messages_and_choices as any[];
    expect(user).toEqual(body!.messages[0]);
    expect(user).toEqual({ role: "user", content: "say red" });
    expect(t.tools).toEqual(body!.tools);
    expect(t.tools![0]).toMatchObject({ type: "function", function: { name: "paint" } });
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls[0];
    expect(call).toMatchObject({ type: "function", function: { name: "paint" } });
    expect(call.id).toMatch(/^call_/);
    expect(typeof JSON.parse(call.function.arguments).color).toBe("string");
    expect(body!.top_logprobs).toBe(2);
    expect(choice.logprobs.content.map((l: any) => l.token)).toEqual([
      "<tool>",
      "paint",
      JSON.parse(call.function.arguments).color,
      "<eos>",
    ]);
    expect(t.logs).toEqual([]);
  });

  it("records a streamed answer with the logprobs of every chunk, which LangChain itself overwrites", async () => {
    const { model, wire } = chatModel(emu, { logprobs: true, maxTokens: 8 });
    const t = await new Recorder({ tokenIds: false }).rollout(async () => {
      const chunks: string[] = [];
      for await (const c of await model.stream(say, { callbacks: [handler], seed: 5 } as never))
        chunks.push(String(c.content));
    });
    expect(wire.bodies[0]!.stream).toBe(true);
    const choice = t.messages_and_choices[1] as any;
    const tokens = choice.logprobs.content.map((l: any) => l.token);
    expect(tokens.length).toBeGreaterThan(1);
    // An answer that ended by itself carries its end token last, as vLLM's.
    const end = choice.finish_reason === "stop" ? "<eos>" : "";
    expect(tokens.join("")).toBe(`${choice.message.content}${end}`);
    expect(choice.finish_reason).toMatch(/stop|length/);
    expect(t.logs).toEqual([]);
  });

  it("keeps token ids and the exact wire Choice with chatOpenAIFields(), streamed or not", async () => {
    for (const streaming of [false, true]) {
      const { model } = chatModel(emu, chatOpenAIFields({ maxTokens: 6 }));
      const t = await new Recorder().rollout(async () => {
        if (streaming)
          for await (const _ of await model.stream(say, {
            callbacks: [handler],
            seed: 9,
          } as never));
        else await model.invoke(say, { callbacks: [handler], seed: 9 } as never);
      });
      const choice = t.messages_and_choices[1] as any;
      expect(choice.token_ids.length).toBe(choice.logprobs.content.length);
      // The emulator's chat template rendering of the one user message.
      expect(choice.prompt_token_ids).toEqual(
        renderPrompt([{ role: "user", content: "say red" }], undefined),
      );
      expect(choice.message.refusal).toBeNull();
      expect(t.logs).toEqual([]);
    }
  });

  it("says in the trajectory when a call had no logprobs or token ids", async () => {
    const { model, wire } = chatModel(emu, { modelKwargs: { return_token_ids: true } });
    const t = await new Recorder().rollout(async () => {
      await model.invoke(say, { callbacks: [handler], seed: 1 } as never);
    });
    expect(wire.bodies[0]!.logprobs).toBeUndefined();
    expect(wire.bodies[0]!.return_token_ids).toBe(true);
    const choice = t.messages_and_choices[1] as any;
    expect(choice.logprobs).toBeNull();
    // The server sent token ids, but LangChain keeps only the raw response's message.
    expect(choice.token_ids).toBeUndefined();
    expect(t.logs).toHaveLength(2);
    expect(t.logs[0]).toMatch(/no logprobs; construct ChatOpenAI with logprobs: true/);
    expect(t.logs[1]).toMatch(/no token ids/);
  });

  it("records when passed to the model's constructor instead of each call", async () => {
    const { model } = chatModel(emu, { logprobs: true, maxTokens: 4, callbacks: [handler] });
    const t = await new Recorder({ tokenIds: false }).rollout(async () => {
      await model.invoke(say, { seed: 6 } as never);
      await model.invoke([...say, new HumanMessage("again")], { seed: 6 } as never);
    });
    // The second request does not continue the first conversation: an additional history.
    expect(t.messages_and_choices).toHaveLength(2);
    expect(t.additional_histories[0]!.messages_and_choices.slice(0, 2)).toEqual([
      { role: "user", content: "say red" },
      { role: "user", content: "again" },
    ]);
  });

  it("records n > 1 choices as additional histories", async () => {
    const { model } = chatModel(emu, { logprobs: true, n: 3, maxTokens: 4 });
    const t = await new Recorder({ tokenIds: false }).rollout(async () => {
      await model.invoke(say, { callbacks: [handler], seed: 2 } as never);
    });
    expect(t.messages_and_choices).toHaveLength(2);
    expect(t.additional_histories).toHaveLength(2);
    expect((t.additional_histories[1]!.messages_and_choices[1] as any).index).toBe(2);
  });

  it("passes calls outside a rollout through untouched", async () => {
    const { model } = chatModel(emu, { logprobs: true, maxTokens: 6 });
    const plain = await model.invoke(say, { seed: 4 } as never);
    const handled = await model.invoke(say, { callbacks: [handler], seed: 4 } as never);
    expect(handled.content).toBe(plain.content);
    expect(handled.response_metadata.logprobs).toEqual(plain.response_metadata.logprobs);
    // A later rollout starts empty: nothing leaked from the calls above.
    const t = await new Recorder({ tokenIds: false }).rollout(async () => {
      await model.invoke([new HumanMessage("say cat")], { callbacks: [handler], seed: 4 } as never);
    });
    expect(t.messages_and_choices).toHaveLength(2);
    expect(t.messages_and_choices[0]).toEqual({ role: "user", content: "say cat" });
  });

  it("says when ChatOpenAI used the Responses API, which has no logprobs to record", async () => {
    const { model } = chatModel(emu, { logprobs: true, useResponsesApi: true });
    const bound = model.bindTools([paint]);
    let trajectory: any;
    await new Recorder({ tokenIds: false })
      .rollout(async (t) => {
        trajectory = t;
        await bound.invoke(say, { callbacks: [handler] });
      })
      .catch(() => {}); // the emulator serves Chat Completions only
    expect(trajectory.logs).toContainEqual(
      expect.stringMatching(/went through the OpenAI Responses API/),
    );
    // The tools are still recorded in Chat Completions form.
    expect(trajectory.tools[0]).toMatchObject({ type: "function", function: { name: "paint" } });
  });

  it("records a failed call in the logs and lets LangChain's error through", async () => {
    const { model } = chatModel(emu, { logprobs: true, model: "" });
    const bad = model.bindTools([paint], {
      tool_choice: { type: "function", function: { name: "nope" } },
    } as never);
    const recorder = new Recorder({ tokenIds: false });
    let trajectory: any;
    await expect(
      recorder.rollout(async (t) => {
        trajectory = t;
        await bad.invoke(say, { callbacks: [handler] });
      }),
    ).rejects.toThrow();
    expect(trajectory.logs[0]).toMatch(/^completion error: 422/);
    expect(trajectory.messages_and_choices).toEqual([{ role: "user", content: "say red" }]);
  });

  it("records a stream the caller stopped reading, which LangChain never ends, when the rollout ends", async () => {
    // Seed 1 makes the emulator say 24 tokens: far more than LangChain reads ahead.
    const { model } = chatModel(emu, { logprobs: true, maxTokens: 24 });
    const recorder = new Recorder({ tokenIds: false });
    const read: string[] = [];
    const t = await recorder.rollout(async () => {
      for await (const c of await model.stream(say, { callbacks: [handler], seed: 1 } as never)) {
        read.push(String(c.content));
        if (read.filter(Boolean).length === 2) break;
      }
    });
    // What LangChain reported before the caller stopped is kept, as a plain
    // message the trainer skips. ChatOpenAI reports a chunk only after handing
    // it on, and LangChain's stream reads ahead, so the record may end a little
    // before or after the chunk the caller stopped on.
    const [user, message, ...rest] = t.messages_and_choices as any[];
    expect(rest).toEqual([]);
    expect(user).toEqual({ role: "user", content: "say red" });
    expect(Object.keys(message).sort()).toEqual(["content", "role"]);
    expect(message.role).toBe("assistant");
    const seen = read.join("");
    const reported: string = message.content;
    expect(reported.startsWith(read.slice(0, -1).join(""))).toBe(true);
    expect(seen.startsWith(reported) || reported.startsWith(seen)).toBe(true);
    expect(reported).not.toBe("");
    expect(t.logs).toHaveLength(1);
    expect(t.logs[0]).toMatch(/incomplete: the rollout ended before LangChain ended this call/);
    // The handler let go of the abandoned run: the next rollout records as usual.
    const next = await recorder.rollout(async () => {
      await model.invoke(say, { callbacks: [handler] });
    });
    expect(next.messages_and_choices).toHaveLength(2);
    expect(next.logs).toEqual([]);
  });
});
