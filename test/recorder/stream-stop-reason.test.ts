// vLLM says on each Choice what ended it (`stop_reason`: a stop string, a
// stop token id, or null for the end token). A streamed Choice is rebuilt
// from chunks and must keep it as a non-streamed one does: the token lineage
// reads it to tell a stop string (text the model sampled) from an end token.
import OpenAI from "openai";
import { Recorder } from "trajectory-recorder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { KEY, start } from "../emulator/helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

const base = {
  model: "emulator/tiny",
  messages: [{ role: "user" as const, content: "say red" }],
  ignore_eos: true,
  max_tokens: 8,
  seed: 9,
};

async function recorded(body: Record<string, unknown>, stream: boolean) {
  const recorder = new Recorder();
  const openai = recorder.wrap(new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 }));
  const t = await recorder.rollout(async () => {
    if (!stream) {
      await openai.chat.completions.create({ ...base, ...body } as never);
      return;
    }
    const s = (await openai.chat.completions.create({
      ...base,
      ...body,
      stream: true,
    } as never)) as unknown as AsyncIterable<unknown>;
    for await (const _ of s);
  });
  return t.messages_and_choices.at(-1) as unknown as Record<string, unknown>;
}

describe("a streamed Choice keeps vLLM's stop_reason", () => {
  it("names the stop string that ended it, as the non-streamed Choice does", async () => {
    const free = await recorded({}, false);
    const second = String((free.message as { content: string }).content).split(" ")[1];
    const stop = [` ${second}`];
    const plain = await recorded({ stop }, false);
    const streamed = await recorded({ stop }, true);
    expect(plain.stop_reason).toBe(` ${second}`);
    expect(streamed.stop_reason).toBe(plain.stop_reason);
    expect(streamed.finish_reason).toBe(plain.finish_reason);
  });

  it("names the stop token id, and keeps null for the end token", async () => {
    const free = await recorded({}, false);
    const third = (free.token_ids as number[])[2] as number;
    const plain = await recorded({ stop_token_ids: [third] }, false);
    const streamed = await recorded({ stop_token_ids: [third] }, true);
    expect(plain.stop_reason).toBe(third);
    expect(streamed.stop_reason).toBe(third);
    const ended = await recorded({ ignore_eos: false, max_tokens: undefined, seed: 1 }, true);
    expect(ended).toHaveProperty("stop_reason", null);
  });

  it("keeps null when the length limit ended it, as the non-streamed Choice does", async () => {
    const plain = await recorded({ max_tokens: 2 }, false);
    const streamed = await recorded({ max_tokens: 2 }, true);
    expect(streamed.finish_reason).toBe("length");
    expect(plain).toHaveProperty("stop_reason", null);
    expect(streamed).toHaveProperty("stop_reason", null);
  });
});
