// The emulator answers token-id requests as a vLLM server does, so rollouts
// recorded with the recorder's defaults pass the library's own check.
import type OpenAI from "openai";
import {
  gatherTrajectoryGroups,
  Recorder,
  TrainableModel,
  TrainingClient,
  TrajectoryGroup,
  validateGroup,
} from "trajectory-recorder";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { KEY, start } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "lookup",
      parameters: { type: "object", properties: { fruit: { type: "string" } } },
    },
  },
];

async function agentGroup(stream: boolean) {
  const client = new TrainingClient({ apiKey: KEY, baseURL: emu.url });
  const model = await TrainableModel.register(client, {
    project: "vllm-ids",
    name: stream ? "streamed" : "whole",
    baseModel: "emulator/tiny",
  });
  const recorder = new Recorder();
  const openai = model.openai({ recorder });
  const rollout = (seed: number) =>
    recorder.rollout(async (t) => {
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
        { role: "system", content: "look it up" },
        { role: "user", content: "what colour is the apple" },
      ];
      for (let turn = 0; turn < 3; turn++) {
        const params = {
          model: "",
          messages,
          tools: TOOLS,
          tool_choice: turn === 0 ? ("required" as const) : ("auto" as const),
          max_tokens: 3,
          seed: seed * 10 + turn,
        };
        let message: OpenAI.Chat.Completions.ChatCompletionMessage;
        if (stream) {
          const s = await openai.chat.completions.create({ ...params, stream: true });
          let content = "";
          const calls: any[] = [];
          for await (const chunk of s) {
            const d = chunk.choices[0]?.delta;
            content += d?.content ?? "";
            for (const c of d?.tool_calls ?? []) {
              calls[c.index] ??= {
                id: c.id,
                type: "function",
                function: { name: "", arguments: "" },
              };
              calls[c.index].function.name += c.function?.name ?? "";
              calls[c.index].function.arguments += c.function?.arguments ?? "";
            }
          }
          message = {
            role: "assistant",
            content: calls.length ? null : content,
            refusal: null,
            ...(calls.length ? { tool_calls: calls } : {}),
          };
        } else message = (await openai.chat.completions.create(params)).choices[0]!.message;
        if (!message) break;
        messages.push(message);
        if (!message.tool_calls?.length) break;
        for (const c of message.tool_calls)
          messages.push({ role: "tool", tool_call_id: c.id, content: "red" });
      }
      t.reward = seed % 2;
    });
  const [group] = await gatherTrajectoryGroups([
    TrajectoryGroup.from([1, 2, 3, 4].map((s) => () => rollout(s))),
  ]);
  return group!;
}

for (const stream of [false, true])
  it(`records ${stream ? "streamed" : "whole"} agent turns that pass validateGroup, each prompt extending the last turn`, async () => {
    const group = await agentGroup(stream);
    expect(validateGroup(group, { mode: "throw" }).problems).toEqual([]);
    for (const t of group.trajectories) {
      const choices = (t.toJSON() as any).messages_and_choices.filter((x: any) => "message" in x);
      expect(choices.length).toBeGreaterThan(1);
      let before: number[] = [];
      for (const c of choices) {
        // As vLLM answers: one `token_id:N` logprob per completion token id.
        expect(c.logprobs.content.map((x: any) => x.token)).toEqual(
          c.token_ids.map((id: number) => `token_id:${id}`),
        );
        // A chat template's prompt: the previous prompt and completion come first.
        expect(c.prompt_token_ids.slice(0, before.length)).toEqual(before);
        before = [...c.prompt_token_ids, ...c.token_ids];
      }
    }
  });

it("sends the prompt's token ids with the first chunk of every choice, and a token's text as its bytes", async () => {
  const res = await fetch(`${emu.url}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "emulator/tiny",
      messages: [{ role: "user", content: "say red" }],
      n: 2,
      stream: true,
      seed: 1,
      logprobs: true,
      top_logprobs: 1,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
    }),
  });
  const chunks = (await res.text())
    .split("\n\n")
    .filter((l) => l.startsWith("data: {"))
    .map((l) => JSON.parse(l.slice(6)));
  for (const index of [0, 1]) {
    const first = chunks.find((c) => c.choices[0]?.index === index);
    expect(first.prompt_token_ids).toEqual(expect.any(Array));
  }
  const entry = chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? [])[0];
  expect(entry.token).toMatch(/^token_id:\d+$/);
  const text = Buffer.from(entry.bytes).toString("utf8");
  expect(text).not.toMatch(/^token_id:/);
  expect(Buffer.from(entry.top_logprobs[0].bytes).toString("utf8")).toBe(
    entry.top_logprobs[0].token,
  );
});
