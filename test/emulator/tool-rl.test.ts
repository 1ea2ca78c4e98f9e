// A two-tool agent learns on the emulator: the right tool with the right
// argument, trained from chance by RL through the HTTP API.
import { tmpdir } from "node:os";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { VOCAB } from "../../src/emulator/model.js";
import { call, createModel, start, waitForJob } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  // SFT data is read from files under the temporary directory only.
  emu = await start({ sftDataDir: tmpdir() });
});
afterAll(async () => {
  await emu.close();
});

const FRUITS = ["apple", "banana", "cherry", "grape"];
const fruitParam = {
  type: "object",
  properties: { fruit: { type: "string", enum: FRUITS } },
  required: ["fruit"],
};
const TOOLS = [
  { type: "function", function: { name: "get_color", parameters: fruitParam } },
  { type: "function", function: { name: "get_shape", parameters: fruitParam } },
];
const TASKS = FRUITS.flatMap((fruit) => [
  { fruit, tool: "get_color", prompt: `what colour is the ${fruit}` },
  { fruit, tool: "get_shape", prompt: `what shape is the ${fruit}` },
]);

/** 1 for a call of the right tool on the right fruit, else 0. */
function score(task: (typeof TASKS)[number], choice: any): number {
  const call = choice.message.tool_calls?.[0]?.function;
  if (!call || call.name !== task.tool) return 0;
  return JSON.parse(call.arguments).fruit === task.fruit ? 1 : 0;
}

async function rollouts(model: string, task: (typeof TASKS)[number], n: number, seed: number) {
  const r = await call(emu, "POST", "/chat/completions", {
    model,
    messages: [{ role: "user", content: task.prompt }],
    tools: TOOLS,
    n,
    max_tokens: 4,
    logprobs: true,
    return_token_ids: true,
    seed,
  });
  expect(r.status).toBe(200);
  return r.json.choices as any[];
}

async function meanReward(model: string): Promise<number> {
  let total = 0;
  for (const task of TASKS)
    for (const c of await rollouts(model, task, 50, 7)) total += score(task, c);
  return total / (TASKS.length * 50);
}

it("trains a two-tool agent from untrained to choosing the right tool with the right argument", async () => {
  const m = await createModel(emu, "fruit-agent");
  const name = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
  const first = (await Promise.all(TASKS.map((t) => rollouts(name, t, 50, 3)))).flat();
  const calls = first.filter((c) => c.finish_reason === "tool_calls").length / first.length;
  // Untrained, it calls a tool about half the time, so a first batch has reward spread.
  expect(calls).toBeGreaterThan(0.35);
  expect(calls).toBeLessThan(0.65);
  const curve = [await meanReward(name)];
  const ratios: number[] = [];
  for (let step = 0; step < 4; step++) {
    const groups = [];
    for (const [i, task] of TASKS.entries()) {
      const choices = await rollouts(name, task, 16, 1000 + step * 100 + i);
      groups.push({
        trajectories: choices.map((c) => ({
          messages_and_choices: [{ role: "user", content: task.prompt }, c],
          tools: TOOLS,
          reward: score(task, c),
        })),
      });
    }
    // A group whose rewards all tie teaches nothing: leave it out, as the quickstart does.
    const mixed = groups.filter((g) => new Set(g.trajectories.map((t) => t.reward)).size > 1);
    if (mixed.length === 0) {
      curve.push(curve.at(-1)!);
      continue;
    }
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: mixed,
      experimental_config: { learning_rate: 2e-5 },
    });
    expect(job.status).toBe(200);
    const events = await waitForJob(emu, job.json.id);
    expect(events.at(-1)).toMatchObject({ type: "training_ended" });
    ratios.push(events.find((e) => e.type === "gradient_step").data.mean_importance_ratio);
    curve.push(await meanReward(name));
  }
  console.log(
    `two-tool agent, expected reward per step: ${curve.map((x) => x.toFixed(3)).join(" -> ")}`,
  );
  // Untrained: half the time a tool, half of those the right one, and the
  // fruit asked about nearly always (an instruct model's copy prior).
  expect(curve[0]!).toBeGreaterThan(0.15);
  expect(curve[0]!).toBeLessThan(0.35);
  expect(curve.at(-1)!).toBeGreaterThanOrEqual(0.8);
  // The first gradient step of each job runs on fresh rollouts: ratio 1.
  for (const r of ratios) expect(r).toBeCloseTo(1, 6);
});

it("records forced tool_choice with the policy's own logprobs, so training on it has ratio 1", async () => {
  const m = await createModel(emu, "forced-agent");
  const name = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
  const task = TASKS[0]!;
  const trajectories = [];
  for (const tool_choice of ["required", { type: "function", function: { name: "get_shape" } }]) {
    const r = await call(emu, "POST", "/chat/completions", {
      model: name,
      messages: [{ role: "user", content: task.prompt }],
      tools: TOOLS,
      tool_choice,
      n: 8,
      logprobs: true,
      seed: 5,
    });
    for (const c of r.json.choices) {
      expect(c.finish_reason).toBe("tool_calls");
      // <tool>, the name, the fruit: each with its untrained logprob, not 0;
      // then the call's end, its only possible token (logprob 0), as vLLM's
      // tool calls end with the end-of-turn token.
      const lps = c.logprobs.content.map((t: any) => t.logprob);
      expect(c.logprobs.content.map((t: any) => t.token)).toEqual([
        "<tool>",
        c.message.tool_calls[0].function.name,
        JSON.parse(c.message.tool_calls[0].function.arguments).fruit,
        "<eos>",
      ]);
      expect(lps[3]).toBe(0);
      expect(lps[0]).toBeCloseTo(Math.log(0.5), 9);
      expect(lps[1]).toBeCloseTo(Math.log(0.5), 9);
      // The fruit asked about carries the copy prior: 4 in 5 of the mass over 24 words.
      const fruit = JSON.parse(c.message.tool_calls[0].function.arguments).fruit;
      expect(lps[2]).toBeCloseTo(fruit === task.fruit ? Math.log(0.8) : Math.log(0.2 / 23), 9);
      trajectories.push({
        messages_and_choices: [{ role: "user", content: task.prompt }, c],
        tools: TOOLS,
        // Any tool, the right fruit: forced and sampled tokens both carry the signal.
        reward: JSON.parse(c.message.tool_calls[0].function.arguments).fruit === task.fruit ? 1 : 0,
      });
    }
  }
  // tool_choice "none" masks <tool> in the draw, not in the logprob either.
  const none = await call(emu, "POST", "/chat/completions", {
    model: name,
    messages: [{ role: "user", content: task.prompt }],
    tools: TOOLS,
    tool_choice: "none",
    n: 4,
    max_tokens: 2,
    logprobs: true,
    seed: 6,
  });
  for (const c of none.json.choices) {
    expect(c.finish_reason).not.toBe("tool_calls");
    // Untrained: a first word has 1/50 (half the mass went to the masked <tool>).
    expect(c.logprobs.content[0].logprob).toBeCloseTo(Math.log(1 / 50), 9);
    trajectories.push({
      messages_and_choices: [{ role: "user", content: task.prompt }, c],
      tools: TOOLS,
      reward: 0,
    });
  }
  expect(new Set(trajectories.map((t) => t.reward)).size).toBe(2);
  const job = await call(emu, "POST", "/preview/training-jobs", {
    model_id: m.id,
    trajectory_groups: [{ trajectories }],
  });
  const events = await waitForJob(emu, job.json.id);
  const step = events.find((e) => e.type === "gradient_step");
  expect(step.data.mean_importance_ratio).toBeCloseTo(1, 9);
  expect(step.data.clipped_tokens).toBe(0);
});

it("streams a tool call's tokens and logprobs as the answer has them", async () => {
  const body = {
    model: "emulator/tiny",
    messages: [{ role: "user", content: TASKS[1]!.prompt }],
    tools: TOOLS,
    tool_choice: "required",
    logprobs: true,
    return_token_ids: true,
    seed: 3,
  };
  const whole = (await call(emu, "POST", "/chat/completions", body)).json.choices[0];
  const res = await fetch(`${emu.url}/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer test-key", "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const chunks = (await res.text())
    .split("\n\n")
    .filter((l) => l.startsWith("data: {"))
    .map((l) => JSON.parse(l.slice(6)).choices[0])
    .filter(Boolean);
  expect(chunks.flatMap((c) => c.logprobs?.content ?? [])).toEqual(whole.logprobs.content);
  expect(chunks.flatMap((c) => c.token_ids ?? [])).toEqual(whole.token_ids);
  // <tool>, the name, the fruit, and the end token.
  expect(whole.token_ids).toHaveLength(4);
  expect(whole.token_ids.at(-1)).toBe(VOCAB.indexOf("<eos>"));
  const args = chunks.flatMap((c) => c.delta.tool_calls ?? []).map((d) => d.function.arguments);
  expect(args.join("")).toBe(whole.message.tool_calls[0].function.arguments);
});

it("learns a tool call by SFT: the tool's name and its argument word", async () => {
  const { mkdtemp, writeFile } = await import("node:fs/promises");
  const path = await import("node:path");
  const dir = await mkdtemp(path.join(tmpdir(), "sft-tools-"));
  const file = path.join(dir, "data.jsonl");
  const rows = TASKS.map((task) => ({
    messages: [
      { role: "user", content: task.prompt },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "c",
            type: "function",
            function: { name: task.tool, arguments: JSON.stringify({ fruit: task.fruit }) },
          },
        ],
      },
    ],
    tools: TOOLS,
  }));
  await writeFile(
    file,
    `${Array(10)
      .fill(rows.map((r) => JSON.stringify(r)).join("\n"))
      .join("\n")}\n`,
  );
  const m = await createModel(emu, "sft-tools");
  const job = await call(emu, "POST", "/preview/sft-training-jobs", {
    model_id: m.id,
    training_data_url: `file://${file}`,
  });
  expect(job.status).toBe(200);
  const events = await waitForJob(emu, job.json.id);
  expect(events.at(-1)).toMatchObject({ type: "training_ended" });
  const name = `wandb-artifact:///${m.entity}/${m.project}/${m.name}`;
  for (const task of TASKS) {
    const r = await call(emu, "POST", "/chat/completions", {
      model: name,
      messages: [{ role: "user", content: task.prompt }],
      tools: TOOLS,
      temperature: 0,
    });
    expect(score(task, r.json.choices[0])).toBe(1);
  }
});
