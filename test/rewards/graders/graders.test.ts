import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { InvalidArgumentError, JudgeResponseError } from "trajectory-recorder/errors";
import { afterEach, describe, expect, it } from "vitest";
import { applyReward, graderReward } from "../../../src/rewards/index.js";

// A tiny OpenAI-compatible server: chat answers from a queue, embeddings from a table.
async function modelServer(answers: string[], vectors: Record<string, number[]> = {}) {
  const requests: Record<string, any>[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const json = JSON.parse(body);
    requests.push(json);
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url?.endsWith("/embeddings")) {
      const data = (json.input as string[]).map((text, index) => ({
        object: "embedding",
        index,
        embedding: vectors[text] ?? [0, 0],
      }));
      res.end(
        JSON.stringify({
          object: "list",
          data,
          model: json.model,
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
      return;
    }
    const content = answers.shift() ?? "";
    res.end(
      JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 0,
        model: json.model,
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            logprobs: null,
            message: { role: "assistant", content },
          },
        ],
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const client = new OpenAI({
    baseURL: `http://127.0.0.1:${port}/v1`,
    apiKey: "test-key",
    maxRetries: 0,
  });
  close = () => new Promise<void>((r) => server.close(() => r()));
  return { client, requests };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const said = (content: string, toolCalls?: unknown[]) =>
  new Trajectory({
    messages_and_choices: [
      { role: "user", content: "Classify: my card was charged twice." },
      {
        finish_reason: "stop",
        index: 0,
        logprobs: null,
        message: {
          role: "assistant" as const,
          content,
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
      },
    ] as never,
  });

const check = (operation: string, reference = "{{ item.label }}") => ({
  type: "string_check",
  name: "label_check",
  input: "{{ sample.output_text }}",
  reference,
  operation,
});

describe("string_check", () => {
  it("scores each operation as OpenAI documents it", async () => {
    const item = { label: "Billing" };
    const score = (op: string, text: string) => graderReward(check(op))(said(text), item);
    expect(await score("eq", "Billing")).toBe(1);
    expect(await score("eq", "billing")).toBe(0);
    expect(await score("ne", "billing")).toBe(1);
    expect(await score("ne", "Billing")).toBe(0);
    expect(await score("like", "Category: Billing.")).toBe(1);
    expect(await score("like", "category: billing.")).toBe(0);
    expect(await score("ilike", "category: BILLING.")).toBe(1);
    expect(await score("ilike", "category: shipping.")).toBe(0);
  });

  it("reads nested item fields, output_json and output_tools", async () => {
    const json = graderReward({
      ...check("eq", "{{ item.expected.category }}"),
      input: "{{ sample.output_json.category }}",
    });
    expect(await json(said('{"category":"billing"}'), { expected: { category: "billing" } })).toBe(
      1,
    );
    const call = { id: "c1", type: "function", function: { name: "refund", arguments: "{}" } };
    const tools = graderReward({
      ...check("like", '"name":"refund"'),
      input: "{{ sample.output_tools }}",
    });
    expect(await tools(said("", [call]), {})).toBe(1);
    expect(await tools(said("no call"), {})).toBe(0);
  });

  it("names a template reference the item does not have", async () => {
    const reward = graderReward(check("eq", "{{ item.lable }}"));
    await expect(reward(said("x"), { label: "x" })).rejects.toThrow(
      "graderReward(grader, options): {{ item.lable }}: the dataset item has no lable here (the template refers to item.lable).",
    );
  });

  it("is a reward function for applyReward, writing each grader's score into the metrics", async () => {
    const reward = graderReward(check("eq"));
    const group = new TrajectoryGroup([said("Billing"), said("Shipping")]);
    await applyReward(group, (t) => reward(t, { label: "Billing" }));
    expect(group.trajectories.map((t) => t.reward)).toEqual([1, 0]);
    expect(group.trajectories[0]?.metrics.grader_label_check).toBe(1);
  });
});

describe("text_similarity", () => {
  const sim = (metric: string) => ({
    type: "text_similarity",
    name: "sim",
    input: "{{ sample.output_text }}",
    reference: "{{ item.reference }}",
    evaluation_metric: metric,
    pass_threshold: 0.8,
  });
  const item = { reference: "the quick brown fox jumped over the lazy dog" };
  const out = said("the quick brown fox jumps over the lazy dog");

  it("computes fuzzy_match as rapidfuzz's ratio", async () => {
    // rapidfuzz's documentation: fuzz.ratio("this is a test", "this is a test!") == 96.55...
    const r = await graderReward(sim("fuzzy_match"))(said("this is a test"), {
      reference: "this is a test!",
    });
    expect(r).toBeCloseTo(0.9655172, 6);
  });

  it("computes BLEU, GLEU, ROUGE-n and ROUGE-L by their standard definitions", async () => {
    // Matched n-grams of 1..4: 8/9, 6/8, 4/7, 2/6; same length: no brevity penalty.
    expect(await graderReward(sim("bleu"))(out, item)).toBeCloseTo(
      ((8 / 9) * (6 / 8) * (4 / 7) * (2 / 6)) ** 0.25,
      10,
    );
    expect(await graderReward(sim("gleu"))(out, item)).toBeCloseTo(20 / 30, 10);
    expect(await graderReward(sim("rouge_1"))(out, item)).toBeCloseTo(8 / 9, 10);
    expect(await graderReward(sim("rouge_2"))(out, item)).toBeCloseTo(6 / 8, 10);
    expect(await graderReward(sim("rouge_l"))(out, item)).toBeCloseTo(8 / 9, 10);
    expect(await graderReward(sim("bleu"))(said(item.reference), item)).toBe(1);
  });

  it("records whether the score passed its threshold", async () => {
    const t = out;
    await graderReward(sim("rouge_2"))(t, item);
    expect(t.metrics.grader_sim_pass).toBe(0);
    await graderReward(sim("rouge_1"))(t, item);
    expect(t.metrics.grader_sim_pass).toBe(1);
  });

  it("computes cosine from an embeddings endpoint, and refuses it without one", async () => {
    expect(() => graderReward(sim("cosine"))).toThrow(
      /options\.embeddings: the text_similarity grader at grader uses cosine, which needs embeddings/,
    );
    const { client, requests } = await modelServer([], { a: [1, 0], b: [1, 1] });
    const reward = graderReward(
      { ...sim("cosine"), reference: "b" },
      { embeddings: { client, model: "embed-small" } },
    );
    expect(await reward(said("a"), {})).toBeCloseTo(Math.SQRT1_2, 10);
    expect(requests[0]).toEqual({
      model: "embed-small",
      encoding_format: "float",
      input: ["a", "b"],
    });
  });

  it("refuses meteor, naming the metric", () => {
    expect(() => graderReward(sim("meteor"))).toThrow(InvalidArgumentError);
    expect(() => graderReward(sim("meteor"))).toThrow(
      /grader\.evaluation_metric: meteor needs WordNet/,
    );
  });
});

const scoreModel = {
  type: "score_model",
  name: "quality",
  model: "gpt-4o-2024-08-06",
  input: [
    { role: "system", content: "Score the ticket label from 0 to 10." },
    { role: "user", content: "Ticket: {{ item.ticket }}\nLabel: {{ sample.output_text }}" },
  ],
  range: [0, 10],
  pass_threshold: 5,
  sampling_params: { temperature: 0, max_completions_tokens: 50, seed: 7 },
};

describe("score_model and label_model", () => {
  it("renders the prompt, asks the model through the client, and clamps to range", async () => {
    const { client, requests } = await modelServer([
      '{"result": 7}',
      "I would say 12 out of 10",
      "no idea",
    ]);
    const reward = graderReward(scoreModel, { client, model: "served-judge" });
    const item = { ticket: "my card was charged twice" };
    expect(await reward(said("billing"), item)).toBe(7);
    expect(await reward(said("billing"), item)).toBe(10);
    await expect(reward(said("billing"), item)).rejects.toThrow(JudgeResponseError);
    expect(requests[0]).toMatchObject({
      model: "served-judge",
      temperature: 0,
      seed: 7,
      max_completion_tokens: 50,
    });
    expect(requests[0]?.messages[1]).toEqual({
      role: "user",
      content: "Ticket: my card was charged twice\nLabel: billing",
    });
  });

  it("scores label_model 1 for a passing label and 0 for another", async () => {
    const { client } = await modelServer(["correct", "Incorrect.", "maybe"]);
    const reward = graderReward(
      {
        type: "label_model",
        name: "lbl",
        model: "gpt-4o",
        input: [{ role: "user", content: "{{ sample.output_text }}" }],
        labels: ["correct", "incorrect"],
        passing_labels: ["correct"],
      },
      { client },
    );
    expect(await reward(said("x"), {})).toBe(1);
    expect(await reward(said("x"), {})).toBe(0);
    await expect(reward(said("x"), {})).rejects.toThrow(
      /got none of its labels \(correct, incorrect\)/,
    );
  });

  it("refuses a model grader without a client", () => {
    expect(() => graderReward(scoreModel)).toThrow(
      /options\.client: the score_model grader at grader needs options\.client/,
    );
  });
});

describe("multi", () => {
  const multi = {
    type: "multi",
    name: "overall",
    graders: {
      label: check("eq"),
      quality: scoreModel,
    },
    calculate_output: "0.5 * label + 0.5 * quality / 10",
  };

  it("combines its graders with its formula and records each part", async () => {
    const { client } = await modelServer(['{"result": 8}']);
    const t = said("billing");
    expect(await graderReward(multi, { client })(t, { label: "billing", ticket: "t" })).toBeCloseTo(
      0.9,
      10,
    );
    expect(t.metrics).toMatchObject({
      grader_label_check: 1,
      grader_quality: 8,
      grader_quality_pass: 1,
      grader_overall: 0.9,
    });
  });

  it("names a bad field deep inside with its path, before anything runs", () => {
    const bad = { ...multi, graders: { label: { ...check("eq"), operation: "contains" } } };
    expect(() => graderReward(bad)).toThrow(
      /grader\.graders\.label\.operation: Invalid option: expected one of "eq"\|"ne"\|"like"\|"ilike"/,
    );
    expect(() =>
      graderReward({ ...multi, calculate_output: "label + qualty" }, { client: {} as never }),
    ).toThrow(InvalidArgumentError);
    expect(() =>
      graderReward({
        ...multi,
        graders: { label: check("eq") },
        calculate_output: "label + qualty",
      }),
    ).toThrow(
      "graderReward(grader, options): grader.calculate_output: it names qualty, which is not one of its graders (label).",
    );
    expect(() =>
      graderReward({
        ...multi,
        graders: { label: check("eq") },
        calculate_output: "label.constructor",
      }),
    ).toThrow(/unexpected character "\."/);
  });

  it("refuses python graders, saying how to port them", () => {
    const python = {
      type: "python",
      name: "py",
      source: "def grade(sample, item):\n    return 1.0",
    };
    expect(() =>
      graderReward({ ...multi, graders: { py: python }, calculate_output: "py" }),
    ).toThrow(
      /grader\.graders\.py\.type: python graders are not run by this library .*port its grade\(sample, item\) to a TypeScript reward function/,
    );
  });
});
