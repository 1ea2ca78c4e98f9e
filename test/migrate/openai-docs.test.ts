// OpenAI's documented example files, written here in our own words with the
// same shapes (a chat file with tools and per-message weights, a DPO file, an
// RFT dataset with a multi grader over string_check and score_model): every
// line accounted for, and the graders scoring as OpenAI's docs describe.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import OpenAI from "openai";
import { Trajectory } from "trajectory-recorder";
import {
  graderReward,
  type ImportedLine,
  readOpenAiFt,
  readOpenAiScenarios,
} from "trajectory-recorder/openai-ft";
import { afterAll, describe, expect, it } from "vitest";

const fixture = (name: string) => path.join(import.meta.dirname, "fixtures/openai-docs", name);

async function lines(file: string, preferredAsSft = false): Promise<ImportedLine[]> {
  const out: ImportedLine[] = [];
  for await (const l of readOpenAiFt(fixture(file), { preferredAsSft })) out.push(l);
  return out;
}

const counts = (ls: ImportedLine[]) =>
  Object.fromEntries(
    ["accepted", "converted", "refused", "preference"].map((s) => [
      s,
      ls.filter((l) => l.status === s).length,
    ]),
  );

describe("the chat file with tools and weights", () => {
  it("accounts for all 5 lines: 2 as they are, 3 converted with what changed", async () => {
    const ls = await lines("chat-tools-weights.jsonl");
    expect(ls.map((l) => [l.line, l.status])).toEqual([
      [1, "accepted"],
      [2, "converted"],
      [3, "accepted"],
      [4, "converted"],
      [5, "converted"],
    ]);
    expect(counts(ls)).toEqual({ accepted: 2, converted: 3, refused: 0, preference: 0 });
    expect(ls[1]?.changes.join()).toMatch(/weight 0 on messages\[2\]: kept as context/);
    expect(ls[3]?.changes.join()).toMatch(/parallel_tool_calls \(false\) dropped/);
    expect(ls[4]?.changes.join()).toMatch(/functions \(1\) converted to tools/);
    // The tool call stays the trained answer, with the tool's schema beside it.
    expect(ls[2]?.row?.tools?.[0]).toMatchObject({ function: { name: "get_current_weather" } });
    expect(ls[2]?.row?.messages.at(-1)).toMatchObject({
      role: "assistant",
      tool_calls: [{ function: { name: "get_current_weather" } }],
    });
    expect(ls[4]?.row?.messages.at(-1)).toMatchObject({
      tool_calls: [{ type: "function", function: { name: "get_current_weather" } }],
    });
  });
});

describe("the DPO file", () => {
  it("counts both lines as preference examples, or trains their preferred answers on request", async () => {
    const counted = await lines("dpo.jsonl");
    expect(counts(counted)).toEqual({ accepted: 0, converted: 0, refused: 0, preference: 2 });
    expect(counted.every((l) => l.row === undefined)).toBe(true);
    const trained = await lines("dpo.jsonl", true);
    expect(counts(trained)).toEqual({ accepted: 0, converted: 2, refused: 0, preference: 0 });
    expect(trained.map((l) => l.row?.messages.at(-1)?.content)).toEqual([
      "It is around 31°C in Cairo today.",
      "Eleven.",
    ]);
  });
});

// A judge on loopback answering as a score_model's model would.
let server: Server | undefined;
async function judge(scores: number[]) {
  const prompts: string[] = [];
  server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const json = JSON.parse(body);
    prompts.push(json.messages.map((m: { content: string }) => m.content).join("\n"));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 0,
        model: json.model,
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            logprobs: null,
            message: { role: "assistant", content: `{"result": ${scores.shift()}}` },
          },
        ],
      }),
    );
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "k", maxRetries: 0 });
  return { client, prompts };
}
afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

const answered = (item: { messages: unknown[] }, content: string) =>
  new Trajectory({
    messages_and_choices: [
      ...(item.messages as never[]),
      {
        finish_reason: "stop",
        index: 0,
        logprobs: null,
        message: { role: "assistant", content },
      } as never,
    ],
  });

describe("the RFT dataset and its multi grader", () => {
  it("reads the 3 items as scenarios and scores 0.7 * exact + 0.3 * the model's score", async () => {
    const scenarios = await readOpenAiScenarios(fixture("rft-dataset.jsonl"));
    expect(scenarios.map((s) => s.item.reference_answer)).toEqual(["billing", "bug", "account"]);
    expect(scenarios[0]?.messages.map((m) => m.role)).toEqual(["developer", "user"]);
    const grader = JSON.parse(
      (await import("node:fs")).readFileSync(fixture("rft-grader.json"), "utf8"),
    );
    // The judge gives 0.9, then 1.4 (clamped to the range's 1), then 0.2.
    const { client, prompts } = await judge([0.9, 1.4, 0.2]);
    const reward = graderReward(grader, { client, model: "judge" });
    const [billing, bug, account] = scenarios.map((s) => s.item) as { messages: unknown[] }[];

    const exact = answered(billing as never, "billing");
    expect(await reward(exact, billing)).toBeCloseTo(0.7 * 1 + 0.3 * 0.9, 10);
    expect(exact.metrics).toMatchObject({
      grader_exact: 1,
      grader_reasoning: 0.9,
      grader_reasoning_pass: 1,
    });
    // string_check's eq is exact: another case is a miss.
    const cased = answered(bug as never, "Bug");
    expect(await reward(cased, bug)).toBeCloseTo(0.3 * 1, 10);
    expect(cased.metrics.grader_exact).toBe(0);
    const wrong = answered(account as never, "billing");
    expect(await reward(wrong, account)).toBeCloseTo(0.3 * 0.2, 10);
    expect(wrong.metrics.grader_reasoning_pass).toBe(0);
    // The score_model prompt has the item's and the sample's fields in place.
    expect(prompts[0]).toContain(
      "Ticket label: billing\nExpected: billing\nWhy: A duplicate charge is a billing problem.",
    );
  });
});
