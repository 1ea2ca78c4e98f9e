// How an answer ends, as with vLLM: the policy emits its end token and the
// answer stops there (`finish_reason: "stop"`, the token last in `token_ids`
// and `logprobs` but never in the content), or runs into `max_tokens` /
// `max_completion_tokens` ("length"); stop strings, `stop_token_ids`,
// `min_tokens`, `ignore_eos` and `include_stop_str_in_output` as vLLM reads them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { VOCAB } from "../../src/emulator/model.js";
import { call, createModel, start, waitForJob } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

const EOS = VOCAB.indexOf("<eos>");
const base = {
  model: "emulator/tiny",
  messages: [{ role: "user", content: "say red" }],
  logprobs: true,
  return_token_ids: true,
};
const chat = async (body: Record<string, unknown>) => {
  const r = await call(emu, "POST", "/chat/completions", { ...base, ...body });
  expect(r.status).toBe(200);
  return r.json;
};
const words = (content: string | null) => (content ?? "").split(" ").filter(Boolean);

describe("an answer that ends by itself", () => {
  it("stops at its end token: finish_reason stop, the token last in token_ids and logprobs, not in the content", async () => {
    const r = await chat({ n: 32, seed: 1 });
    const stopped = r.choices.filter((c: any) => c.finish_reason === "stop");
    // Without max_tokens the answer may run to the context's end; an untrained one ends soon.
    expect(stopped).toHaveLength(32);
    for (const c of stopped) {
      expect(c.stop_reason).toBeNull();
      expect(c.token_ids.at(-1)).toBe(EOS);
      expect(c.token_ids.filter((id: number) => id === EOS)).toHaveLength(1);
      expect(c.logprobs.content.at(-1).token).toBe("<eos>");
      expect(c.logprobs.content).toHaveLength(c.token_ids.length);
      expect(c.message.content).not.toContain("<eos>");
      expect(words(c.message.content)).toHaveLength(c.token_ids.length - 1);
    }
    // The end token counts as a completion token, as in vLLM.
    expect(r.usage.completion_tokens).toBe(
      r.choices.reduce((a: number, c: any) => a + c.token_ids.length, 0),
    );
    // Some answers are one word, some longer: the model learns when to stop.
    const lengths = new Set(stopped.map((c: any) => words(c.message.content).length));
    expect(lengths.size).toBeGreaterThan(1);
  });

  it("streams the same tokens, with finish_reason and stop_reason on the last chunk", async () => {
    const whole = (await chat({ seed: 5 })).choices[0];
    const res = await fetch(`${emu.url}/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer test-key", "content-type": "application/json" },
      body: JSON.stringify({ ...base, seed: 5, stream: true }),
    });
    const chunks = (await res.text())
      .split("\n\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)).choices[0])
      .filter(Boolean);
    expect(chunks.flatMap((c) => c.token_ids ?? [])).toEqual(whole.token_ids);
    expect(chunks.map((c) => c.delta.content ?? "").join("")).toBe(whole.message.content);
    expect(chunks.at(-1)).toMatchObject({ finish_reason: "stop", stop_reason: null });
  });
});

describe("limits and stops as vLLM's", () => {
  it("ends at max_tokens or max_completion_tokens with length, the end token counted among them", async () => {
    for (const limit of [{ max_tokens: 2 }, { max_completion_tokens: 2 }]) {
      const r = await chat({ ...limit, n: 32, seed: 2 });
      for (const c of r.choices) {
        expect(c.token_ids.length).toBeLessThanOrEqual(2);
        if (c.finish_reason === "stop") expect(c.token_ids.at(-1)).toBe(EOS);
        else {
          expect(c.finish_reason).toBe("length");
          expect(c.token_ids).toHaveLength(2);
        }
        // vLLM checks the length first: an end token drawn as the last allowed token is "length".
        if (c.token_ids.length === 2 && c.token_ids[1] === EOS)
          expect(c.finish_reason).toBe("length");
      }
      expect(new Set(r.choices.map((c: any) => c.finish_reason))).toEqual(
        new Set(["stop", "length"]),
      );
    }
  });

  it("ignore_eos runs to max_tokens, the end token adding no text; min_tokens holds the end back", async () => {
    const ignored = await chat({ ignore_eos: true, max_tokens: 6, n: 16, seed: 3 });
    for (const c of ignored.choices) {
      expect(c.finish_reason).toBe("length");
      expect(c.token_ids).toHaveLength(6);
      const said = c.token_ids.filter((id: number) => id !== EOS).length;
      expect(words(c.message.content)).toHaveLength(said);
    }
    expect(ignored.choices.some((c: any) => c.token_ids.includes(EOS))).toBe(true);
    const held = await chat({ min_tokens: 3, n: 16, seed: 3 });
    for (const c of held.choices) {
      expect(c.token_ids.slice(0, 3)).not.toContain(EOS);
      expect(c.token_ids.length).toBeGreaterThanOrEqual(4);
    }
  });

  it("cuts at a stop string (kept with include_stop_str_in_output), its token in token_ids, stop_reason naming it", async () => {
    const free = (await chat({ ignore_eos: true, max_tokens: 8, seed: 9 })).choices[0];
    const second = words(free.message.content)[1]!;
    // Where the second word was sampled (an ignored end token says nothing).
    const at = free.token_ids.findIndex(
      (id: number, i: number) =>
        id !== EOS && free.token_ids.slice(0, i).filter((x: number) => x !== EOS).length === 1,
    );
    const cut = (await chat({ ignore_eos: true, max_tokens: 8, seed: 9, stop: [` ${second}`] }))
      .choices[0];
    expect(cut).toMatchObject({ finish_reason: "stop", stop_reason: ` ${second}` });
    expect(cut.message.content).toBe(words(free.message.content)[0]);
    // The token that completed the stop string was sampled: it is in token_ids.
    expect(cut.token_ids).toEqual(free.token_ids.slice(0, at + 1));
    const kept = (
      await chat({
        ignore_eos: true,
        max_tokens: 8,
        seed: 9,
        stop: [` ${second}`],
        include_stop_str_in_output: true,
      })
    ).choices[0];
    expect(kept.message.content).toBe(`${words(free.message.content)[0]} ${second}`);
  });

  it("stops at a stop_token_ids token, naming it as stop_reason and keeping its text out", async () => {
    const free = (await chat({ ignore_eos: true, max_tokens: 8, seed: 9 })).choices[0];
    const third = free.token_ids[2] as number;
    const r = (await chat({ ignore_eos: true, max_tokens: 8, seed: 9, stop_token_ids: [third] }))
      .choices[0];
    const at = free.token_ids.indexOf(third);
    expect(r).toMatchObject({ finish_reason: "stop", stop_reason: third });
    expect(r.token_ids).toEqual(free.token_ids.slice(0, at + 1));
    expect(words(r.message.content)).toEqual(words(free.message.content).slice(0, at));
  });

  it("refuses min_tokens above max_tokens with a 400, and malformed fields with a 422 naming them", async () => {
    const r = await call(emu, "POST", "/chat/completions", {
      ...base,
      min_tokens: 5,
      max_tokens: 2,
    });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe("min_tokens");
    expect(r.json.error.message).toContain("min_tokens must be at most max_tokens (2)");
    for (const [body, field] of [
      [{ min_tokens: -1 }, "min_tokens"],
      [{ stop_token_ids: ["x"] }, "stop_token_ids"],
      [{ ignore_eos: "yes" }, "ignore_eos"],
    ] as const) {
      const bad = await call(emu, "POST", "/chat/completions", { ...base, ...body });
      expect(bad.status).toBe(422);
      expect(JSON.stringify(bad.json.detail)).toContain(field);
    }
  });
});

it("trains on a recorded answer's end token once: the tokens trained are the token ids", async () => {
  const m = await createModel(emu, "ending");
  const model = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
  const r = await chat({ model, n: 8, seed: 4 });
  const trajectories = r.choices.map((c: any, i: number) => ({
    messages_and_choices: [...base.messages, c],
    reward: i % 2,
  }));
  const job = await call(emu, "POST", "/preview/training-jobs", {
    model_id: m.id,
    trajectory_groups: [{ trajectories }],
  });
  const events = await waitForJob(emu, job.json.id);
  const step = events.find((e: any) => e.type === "gradient_step").data;
  expect(step.num_trainable_tokens).toBe(
    r.choices.reduce((a: number, c: any) => a + c.token_ids.length, 0),
  );
  // Fresh rollouts: every token's recorded logprob is the trainer's, the end token's too.
  expect(step.mean_importance_ratio).toBeCloseTo(1, 9);
});

it("gives a tool call the same id for the same request, and a new one on the next turn of the same seed", async () => {
  const tools = [
    {
      type: "function",
      function: { name: "lookup", parameters: { type: "object", properties: {} } },
    },
  ];
  const first = { ...base, tools, tool_choice: "required", seed: 6 };
  const a = (await chat(first)).choices[0];
  const again = (await chat(first)).choices[0];
  expect(again.message.tool_calls[0].id).toBe(a.message.tool_calls[0].id);
  // An agent framework sends the same seed every turn (the Agents SDK's providerData.seed).
  const next = (
    await chat({
      ...first,
      messages: [
        ...base.messages,
        a.message,
        { role: "tool", tool_call_id: a.message.tool_calls[0].id, content: "red" },
      ],
    })
  ).choices[0];
  expect(next.message.tool_calls[0].id).not.toBe(a.message.tool_calls[0].id);
});
