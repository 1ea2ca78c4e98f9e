// OpenAI validation files as evaluation scenarios: the chat examples' answers
// become the reference a grader checks, RFT items keep their fields, and the
// scenarios run through evaluateCheckpoints on a real emulator.
import path from "node:path";
import { Readable } from "node:stream";
import { evaluateCheckpoints, Recorder, TrainableModel, TrainingClient } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import {
  graderReward,
  REFERENCE_GRADER,
  readOpenAiScenarios,
  runRft,
  scenarioRollout,
} from "trajectory-recorder/openai-ft";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const fixture = (name: string) => path.join(import.meta.dirname, "fixtures", name);
let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
});
afterAll(async () => {
  await emu.close();
});

const register = (name: string) =>
  TrainableModel.register(new TrainingClient({ apiKey: "k", baseURL: emu.url }), {
    project: "scenarios",
    name,
    baseModel: "toy",
  });

describe("readOpenAiScenarios", () => {
  it("turns chat examples into prompts with their answer as item.reference, and keeps RFT items whole", async () => {
    const scenarios = await readOpenAiScenarios(fixture("valid-chat.jsonl"));
    expect(scenarios.map((s) => [s.id, s.line])).toEqual([
      ["line 1", 1],
      ["line 2", 2],
      ["rft-item", 4],
    ]);
    expect(scenarios[0]?.messages).toEqual([
      { role: "system", content: "Answer with one word." },
      { role: "user", content: "please say red" },
    ]);
    expect(scenarios[0]?.item.reference).toBe("red");
    expect(scenarios[2]?.messages).toEqual([{ role: "user", content: "please say two" }]);
    expect(scenarios[2]?.item).toMatchObject({ id: "rft-item", word: "two" });
    expect(scenarios[2]?.item.reference).toBeUndefined();
  });

  it("names every bad line and field path, and reads a stream the same way", async () => {
    const text = [
      JSON.stringify({ messages: [{ role: "user", content: "ok" }] }),
      "{not json",
      JSON.stringify({ messages: [] }),
      JSON.stringify({ messages: [{ role: "assistant", content: "only an answer" }] }),
    ].join("\n");
    await expect(readOpenAiScenarios(Readable.from([text]))).rejects.toThrow(
      /3 of 4 line\(s\) are not usable: line 2: not JSON .*; line 3: messages: expected at least one message; line 4: messages: expected a prompt/,
    );
    await expect(readOpenAiScenarios(fixture("missing.jsonl"))).rejects.toThrow(
      /input: the file .*missing\.jsonl could not be read \(ENOENT\)/,
    );
  });
});

it("evaluates checkpoints on a validation file, graded against each example's answer", async () => {
  const model = await register("evaluated");
  const recorder = new Recorder();
  const scenarios = await readOpenAiScenarios(fixture("valid-chat.jsonl"));
  const reward = graderReward(REFERENCE_GRADER);
  const results = await evaluateCheckpoints(model, {
    scenarios: scenarios.slice(0, 2),
    steps: [0],
    recorder,
    rolloutsPerScenario: 8,
    rollout: scenarioRollout({
      recorder,
      reward,
      requestOptions: { max_tokens: 2 },
      seed: (s, attempt) => s.line * 100 + attempt,
    }),
  });
  const trajectories = results[0]?.groups.flatMap((g) => g.trajectories) ?? [];
  expect(trajectories).toHaveLength(16);
  for (const t of trajectories) {
    const answer = t.messages().at(-1)?.content;
    const expected = t.metadata.scenario === "line 1" ? "red" : "cat";
    expect(t.reward).toBe(answer === expected ? 1 : 0);
    expect(t.metrics.grader_matches_reference).toBe(t.reward);
  }
  expect(Object.keys(results[0]?.rewards ?? {})).toEqual(["line 1", "line 2"]);
});

describe("runRft", () => {
  it("refuses a bad option naming its field before sending anything", async () => {
    const model = await register("refused");
    const grader = JSON.parse(
      (await import("node:fs")).readFileSync(fixture("say-word-grader.json"), "utf8"),
    );
    const dataset = fixture("say-word.jsonl");
    await expect(runRft({ model, dataset, grader, groupSize: 1 })).rejects.toThrow(
      /runRft\(options\): options\.groupSize: Too small/,
    );
    await expect(
      runRft({ model, dataset, grader, requestOptions: "x" as unknown as Record<string, unknown> }),
    ).rejects.toThrow(/options\.requestOptions/);
    await expect(
      runRft({ model, dataset, grader: { ...grader, operation: "matches" } }),
    ).rejects.toThrow(/grader\.operation/);
    expect(await model.getStep()).toBe(0);
  });

  it("prints and returns each part of a multi grader per step, and the validation before and after", async () => {
    const model = await register("multi");
    const printed: string[] = [];
    const result = await runRft({
      model,
      dataset: fixture("say-word.jsonl"),
      grader: {
        type: "multi",
        name: "both",
        graders: {
          said: {
            type: "string_check",
            name: "said",
            input: "{{ sample.output_text }}",
            reference: "{{ item.word }}",
            operation: "ilike",
          },
          short: {
            type: "string_check",
            name: "short",
            input: "{{ sample.output_text }}",
            reference: "{{ item.word }}",
            operation: "eq",
          },
        },
        calculate_output: "0.5 * said + 0.5 * short",
      },
      steps: 1,
      groupSize: 4,
      validationSamples: 2,
      requestOptions: { max_tokens: 3 },
      out: { write: (line: string) => printed.push(line) } as unknown as NodeJS.WritableStream,
      logger: { info: () => {} },
    });
    const [step] = result.steps;
    expect(Object.keys(step?.graders ?? {}).sort()).toEqual([
      "grader_both",
      "grader_said",
      "grader_short",
    ]);
    expect(step?.score).toBeCloseTo(
      0.5 * (step?.graders.grader_said ?? 0) + 0.5 * (step?.graders.grader_short ?? 0),
      10,
    );
    expect(printed.join("")).toMatch(
      /^step 1\/1 \(checkpoint 0\): grader [\d.]+ \(said [\d.]+, short [\d.]+\) -> checkpoint 1/m,
    );
    expect(result.before?.step).toBe(0);
    expect(result.after?.step).toBe(await model.getStep());
  });
});
