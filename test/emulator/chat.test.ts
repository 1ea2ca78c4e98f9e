import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { VOCAB } from "../../src/emulator/model.js";
import { TEMPLATE_TOKENS } from "../../src/emulator/template.js";
import { call, createModel, KEY, start, waitForJob } from "./helpers.js";

let emu: Emulator;
let client: OpenAI;
beforeAll(async () => {
  emu = await start();
  client = new OpenAI({ baseURL: emu.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(async () => {
  await emu.close();
});

const base = { model: "emulator/tiny", messages: [{ role: "user" as const, content: "say red" }] };

async function reassemble(params: Record<string, unknown>) {
  const stream = await client.chat.completions.create({ ...base, ...params, stream: true } as any);
  const chunks: any[] = [];
  for await (const c of stream as any) chunks.push(c);
  return chunks;
}

describe("chat completions", () => {
  it("gives the same output for the same seed and real logprobs that map back to the vocabulary", async () => {
    const a = await client.chat.completions.create({
      ...base,
      seed: 7,
      logprobs: true,
      top_logprobs: 3,
      n: 3,
    });
    const b = await client.chat.completions.create({
      ...base,
      seed: 7,
      logprobs: true,
      top_logprobs: 3,
      n: 3,
    });
    expect(a.choices.map((c) => c.message.content)).toEqual(
      b.choices.map((c) => c.message.content),
    );
    expect(a.choices).toHaveLength(3);
    const c0 = a.choices[0]!;
    const lp = c0.logprobs!.content!;
    // As in vLLM, an answer that ended by itself carries its end token's
    // logprob entry; the token is never part of the content.
    const ends = c0.finish_reason === "stop";
    expect(lp.map((t) => t.token).join("")).toBe(`${c0.message.content}${ends ? "<eos>" : ""}`);
    // An untrained model starts uniformly over the 24 words and the end
    // token; after a word it ends half the time, each word 1 in 48.
    lp.forEach((t, i) => {
      const expected = i === 0 ? 1 / 25 : t.token === "<eos>" ? 1 / 2 : 1 / 48;
      expect(t.logprob).toBeCloseTo(Math.log(expected), 6);
      expect(t.top_logprobs).toHaveLength(3);
      expect(VOCAB).toContain(t.token.trim());
    });
    expect(a.usage!.completion_tokens).toBe(
      a.choices.reduce((s, c) => s + c.logprobs!.content!.length, 0),
    );
    // `<|im_start|> user say red <eos>` then the generation prompt `<|im_start|> assistant`.
    expect(a.usage!.prompt_tokens).toBe(7);
  });
  it("honours max_tokens, max_completion_tokens, stop and temperature", async () => {
    const short = await client.chat.completions.create({ ...base, seed: 1, max_tokens: 2, n: 8 });
    for (const c of short.choices)
      expect((c.message.content ?? "").split(" ").filter(Boolean).length).toBeLessThanOrEqual(2);
    expect(short.choices.some((c) => c.finish_reason === "length")).toBe(true);
    const mct = await client.chat.completions.create({
      ...base,
      seed: 1,
      max_completion_tokens: 1,
    });
    expect(mct.usage!.completion_tokens).toBeLessThanOrEqual(1);
    const full = await client.chat.completions.create({
      ...base,
      seed: 3,
      max_tokens: 30,
      temperature: 1,
    });
    const words = (full.choices[0]!.message.content ?? "").split(" ");
    if (words.length > 1) {
      const stopped = await client.chat.completions.create({
        ...base,
        seed: 3,
        max_tokens: 30,
        stop: [` ${words[1]}`],
      });
      expect(stopped.choices[0]!.message.content).toBe(words[0]);
      expect(stopped.choices[0]!.finish_reason).toBe("stop");
    }
    const g1 = await client.chat.completions.create({ ...base, temperature: 0, max_tokens: 5 });
    const g2 = await client.chat.completions.create({ ...base, temperature: 0, max_tokens: 5 });
    expect(g1.choices[0]!.message.content).toBe(g2.choices[0]!.message.content);
  });
  it("samples greedily at a temperature too small to divide by, with or without tools", async () => {
    const tools = [
      { type: "function" as const, function: { name: "look", parameters: { type: "object" } } },
    ];
    for (const extra of [{}, { tools }, { tools, tool_choice: "required" as const }]) {
      const tiny = await client.chat.completions.create({
        ...base,
        ...extra,
        temperature: 1e-310,
        max_tokens: 5,
        logprobs: true,
      });
      const greedy = await client.chat.completions.create({
        ...base,
        ...extra,
        temperature: 0,
        max_tokens: 5,
        logprobs: true,
      });
      expect(tiny.choices[0]!.message).toEqual(
        expect.objectContaining({ content: greedy.choices[0]!.message.content }),
      );
      expect(tiny.choices[0]!.message.tool_calls?.map((c: any) => c.function)).toEqual(
        greedy.choices[0]!.message.tool_calls?.map((c: any) => c.function),
      );
      for (const t of tiny.choices[0]!.logprobs!.content!)
        expect(Number.isFinite(t.logprob)).toBe(true);
    }
  });
  it("returns token ids and token_id:N labels when asked", async () => {
    const r = await call(emu, "POST", "/chat/completions", {
      ...base,
      seed: 4,
      logprobs: true,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
    });
    const c = r.json.choices[0];
    // The chat template: `<|im_start|> user say red <eos> <|im_start|> assistant`,
    // its own tokens numbered after the policy's vocabulary.
    const special = (t: string) => VOCAB.length + TEMPLATE_TOKENS.indexOf(t);
    expect(r.json.prompt_token_ids).toEqual([
      special("<|im_start|>"),
      special("user"),
      VOCAB.indexOf("<unk>"),
      VOCAB.indexOf("red"),
      VOCAB.indexOf("<eos>"),
      special("<|im_start|>"),
      special("assistant"),
    ]);
    expect(c.logprobs.content.map((t: any) => t.token)).toEqual(
      c.token_ids.map((id: number) => `token_id:${id}`),
    );
    // vLLM's token_ids end with the end token when the answer ended by itself.
    const eos = VOCAB.indexOf("<eos>");
    expect(c.token_ids.at(-1) === eos).toBe(c.finish_reason === "stop");
    expect(
      c.token_ids
        .filter((id: number) => id !== eos)
        .map((id: number) => VOCAB[id])
        .join(" "),
    ).toBe(c.message.content);
  });
  it("answers with tool calls whose arguments follow the schema", async () => {
    const tools = [
      {
        type: "function" as const,
        function: {
          name: "paint",
          parameters: {
            type: "object",
            properties: {
              color: { type: "string" },
              coats: { type: "integer", minimum: 1, maximum: 3 },
              glossy: { type: "boolean" },
              finish: { enum: ["matte", "satin"] },
            },
            required: ["color", "coats", "glossy", "finish"],
          },
        },
      },
    ];
    const r = await client.chat.completions.create({
      ...base,
      tools,
      tool_choice: "required",
      seed: 2,
      logprobs: true,
    });
    const c = r.choices[0]!;
    expect(c.finish_reason).toBe("tool_calls");
    const tc = c.message.tool_calls![0] as any;
    expect(tc.function.name).toBe("paint");
    const args = JSON.parse(tc.function.arguments);
    expect(typeof args.color).toBe("string");
    expect(Number.isInteger(args.coats) && args.coats >= 1 && args.coats <= 3).toBe(true);
    expect(typeof args.glossy).toBe("boolean");
    expect(["matte", "satin"]).toContain(args.finish);
    const none = await client.chat.completions.create({
      ...base,
      tools,
      tool_choice: "none",
      seed: 2,
      n: 5,
    });
    for (const ch of none.choices) expect(ch.finish_reason).not.toBe("tool_calls");
    const chunks = await reassemble({
      tools,
      tool_choice: { type: "function", function: { name: "paint" } },
      seed: 2,
    });
    const deltas = chunks.flatMap((ch) => ch.choices.flatMap((c: any) => c.delta.tool_calls ?? []));
    expect(deltas[0]).toMatchObject({
      index: 0,
      id: tc.id,
      type: "function",
      function: { name: "paint", arguments: "" },
    });
    expect(deltas.map((d: any) => d.function.arguments).join("")).toBe(tc.function.arguments);
    expect(deltas.length).toBeGreaterThan(2);
  });
  it("streams chunks that reassemble to the non-streamed answer, with usage and token ids", async () => {
    const params = {
      seed: 11,
      n: 2,
      logprobs: true,
      top_logprobs: 2,
      return_token_ids: true,
      max_tokens: 12,
    };
    const whole = await call(emu, "POST", "/chat/completions", { ...base, ...params });
    const chunks = await reassemble({ ...params, stream_options: { include_usage: true } });
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks[0].prompt_token_ids).toEqual(whole.json.prompt_token_ids);
    for (const [i, choice] of whole.json.choices.entries()) {
      const mine = chunks.flatMap((ch) => ch.choices.filter((c: any) => c.index === i));
      expect(mine.map((c: any) => c.delta.content ?? "").join("")).toBe(choice.message.content);
      expect(mine.flatMap((c: any) => c.logprobs?.content ?? [])).toEqual(choice.logprobs.content);
      expect(mine.flatMap((c: any) => c.token_ids ?? [])).toEqual(choice.token_ids);
      expect(mine.at(-1).finish_reason).toBe(choice.finish_reason);
    }
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(whole.json.usage);
    for (const ch of chunks) expect(ch.object).toBe("chat.completion.chunk");
  });
  it("ends the stream with data: [DONE] and stops when the client aborts", async () => {
    const res = await fetch(`${emu.url}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ ...base, stream: true, seed: 5 }),
    });
    const text = await res.text();
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { ...base, stream: true, max_tokens: 200, temperature: 0 },
      { signal: controller.signal },
    );
    let seen = 0;
    // The SDK ends the iteration quietly on abort; the stream must stop early.
    try {
      for await (const _ of stream) {
        seen++;
        if (seen === 2) controller.abort();
      }
    } catch (error) {
      expect((error as Error).name).toMatch(/Abort/);
    }
    expect(seen).toBeLessThan(10);
    expect((await call(emu, "GET", "/health")).status).toBe(200);
  });
  it("serves trained checkpoints by wandb-artifact name and step, and rejects unknown ones", async () => {
    const m = await createModel(emu, "served");
    const name = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
    const r0 = await client.chat.completions.create({
      ...base,
      model: `${name}:step0`,
      logprobs: true,
      seed: 1,
    });
    expect(r0.choices[0]!.logprobs!.content![0]?.logprob ?? -Math.log(25)).toBeCloseTo(
      -Math.log(25),
      6,
    );
    const traj = (r: number, word: string) => ({
      messages_and_choices: [
        base.messages[0],
        {
          index: 0,
          finish_reason: "length",
          message: { role: "assistant", content: word },
          logprobs: { content: [{ token: word, logprob: -Math.log(25) }] },
        },
      ],
      reward: r,
    });
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [{ trajectories: [traj(1, "red"), traj(0, "blue")] }],
    });
    await waitForJob(emu, job.json.id);
    const latest = await client.chat.completions.create({
      ...base,
      model: name,
      logprobs: true,
      top_logprobs: 25,
      max_tokens: 1,
      temperature: 0,
    });
    expect(latest.choices[0]!.message.content).toBe("red");
    const step1 = await client.chat.completions.create({
      ...base,
      model: `${name}:step1`,
      max_tokens: 1,
      temperature: 0,
    });
    expect(step1.choices[0]!.message.content).toBe("red");
    await expect(
      client.chat.completions.create({ ...base, model: `${name}:step9` }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      client.chat.completions.create({ ...base, model: "wandb-artifact:///x/y/z" }),
    ).rejects.toMatchObject({ status: 404 });
  });
  it("samples at the request's temperature but reports the policy's own logprobs, so fresh rollouts train with ratio 1", async () => {
    const m = await createModel(emu, "temperature");
    const name = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
    const word = (w: string, r: number) => ({
      messages_and_choices: [
        base.messages[0],
        {
          index: 0,
          finish_reason: "length",
          message: { role: "assistant", content: w },
          logprobs: { content: [{ token: w, logprob: -Math.log(25) }] },
        },
      ],
      reward: r,
    });
    // One step away from uniform, so temperature matters.
    const warm = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [{ trajectories: [word("red", 1), word("blue", 0)] }],
    });
    await waitForJob(emu, warm.json.id);
    const dist = await call(emu, "POST", "/chat/completions", {
      ...base,
      model: name,
      max_tokens: 1,
      temperature: 0,
      logprobs: true,
      top_logprobs: 25,
    });
    const t1: Record<string, number> = {};
    for (const t of dist.json.choices[0].logprobs.content[0].top_logprobs) t1[t.token] = t.logprob;
    const sampled = async (temperature: number) =>
      (
        await call(emu, "POST", "/chat/completions", {
          ...base,
          model: name,
          n: 64,
          max_tokens: 3,
          temperature,
          logprobs: true,
          seed: 5,
        })
      ).json.choices as any[];
    const cold = await sampled(0.5);
    for (const c of cold) {
      const first = c.logprobs.content[0];
      if (first) expect(first.logprob).toBeCloseTo(t1[first.token]!, 12);
    }
    // Still sampled at 0.5: the favoured word comes up more often than at 2.
    const reds = (cs: any[]) => cs.filter((c) => c.message.content.startsWith("red")).length;
    expect(reds(cold)).toBeGreaterThan(reds(await sampled(2)) + 10);
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [
        {
          trajectories: cold.map((c) => ({
            messages_and_choices: [base.messages[0], c],
            reward: c.message.content.startsWith("red") ? 1 : 0,
          })),
        },
      ],
      experimental_config: { ppo: true, epsilon: 1e-6, learning_rate: 1e-12 },
    });
    const events = await waitForJob(emu, job.json.id);
    expect(events[1].type).toBe("gradient_step");
    expect(events[1].data.clipped_tokens).toBe(0);
    expect(events[1].data.mean_importance_ratio).toBeCloseTo(1, 9);
  });
  it("answers 400 for top_logprobs without logprobs: true, as OpenAI and vLLM do", async () => {
    const r = await call(emu, "POST", "/chat/completions", { ...base, top_logprobs: 2 });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: "invalid_request_error", param: "top_logprobs" });
    expect(r.json.error.message).toMatch(/logprobs: true/);
    const off = await call(emu, "POST", "/chat/completions", {
      ...base,
      logprobs: false,
      top_logprobs: 2,
    });
    expect(off.status).toBe(400);
    const zero = await call(emu, "POST", "/chat/completions", { ...base, top_logprobs: 0 });
    expect(zero.status).toBe(200);
  });
  it("rejects priority other than 0 and invalid bodies with 422 detail", async () => {
    await expect(
      client.chat.completions.create({ ...base, priority: 1 } as any),
    ).rejects.toMatchObject({ status: 400 });
    const ok = await call(emu, "POST", "/chat/completions/", { ...base, priority: 0 });
    expect(ok.status).toBe(200);
    const bad = await call(emu, "POST", "/chat/completions", { ...base, n: 0 });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "n"]);
    const noMsg = await call(emu, "POST", "/chat/completions", { model: "m" });
    expect(noMsg.json.detail[0].loc).toEqual(["body", "messages"]);
  });
});
