import { InvalidTrainingOptionsError, Trajectory } from "trajectory-recorder";
import { ExperimentalTrainingConfigSchema } from "trajectory-recorder/wire";
import { expect, it } from "vitest";
import { toExperimentalConfig, toSftConfig, toSftJsonl } from "../../src/training/index.js";

it("converts every camelCase training option to the wire's snake_case key", () => {
  const wireKeys = Object.keys(ExperimentalTrainingConfigSchema.shape);
  expect(Object.keys(toExperimentalConfig()).sort()).toEqual([...wireKeys].sort());
  expect(
    toExperimentalConfig({ learningRate: 1e-5, klPenaltyStepLag: 2, lossFn: "cispo" }),
  ).toMatchObject({
    learning_rate: 1e-5,
    kl_penalty_step_lag: 2,
    loss_fn: "cispo",
  });
});

it("names the camelCase option and what was expected when one is wrong", () => {
  expect(() => toExperimentalConfig({ importanceSamplingLevel: "tokens" as never })).toThrow(
    /importanceSamplingLevel: .*"token"/,
  );
  expect(() => toExperimentalConfig({ klPenaltyStepLag: 0 })).toThrow(/klPenaltyStepLag: .*>= 1/);
  expect(() => toExperimentalConfig({ lr: 1 } as never)).toThrow(InvalidTrainingOptionsError);
});

it("builds SFT config: batchSize auto is left to the service, learningRate defaults to ART's", () => {
  expect(toSftConfig({ batchSize: "auto" })).toEqual({ learning_rate: 5e-5 });
  expect(toSftConfig({ batchSize: 4, learningRate: [1e-5, 2e-5] })).toEqual({
    batch_size: 4,
    learning_rate: [1e-5, 2e-5],
  });
  expect(() => toSftConfig({ batchSize: 0 })).toThrow(/batchSize/);
});

it("writes one {messages, tools?} line per trajectory, tools only when there are some", () => {
  const tool = { type: "function", function: { name: "lookup", parameters: {} } };
  const withTools = new Trajectory({
    messages_and_choices: [
      { role: "user", content: "hi" },
      {
        index: 0,
        finish_reason: "stop",
        logprobs: null,
        message: { role: "assistant", content: "hello" },
      },
    ],
    tools: [tool],
  });
  const plain = {
    messages: [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ],
  };
  const { jsonl, lines } = toSftJsonl([withTools, plain]);
  expect(lines).toBe(2);
  expect(jsonl.split("\n")).toEqual([
    JSON.stringify({
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
      tools: [tool],
    }),
    JSON.stringify(plain),
    "",
  ]);
});

it("checks JSONL given as text line by line, naming the bad line", () => {
  const ok = '{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}';
  expect(toSftJsonl(`${ok}\n\n`).lines).toBe(1);
  expect(() => toSftJsonl(`${ok}\nnope`)).toThrow(/line 2: expected JSON/);
  expect(() => toSftJsonl('{"messages":[{"role":"user","content":"x"}]}')).toThrow(
    /line 1\.messages: expected the last message to be an assistant message/,
  );
  expect(() => toSftJsonl('{"messages":[]}')).toThrow(
    /line 1\.messages: expected at least one message/,
  );
  expect(() => toSftJsonl([{ messages: () => [] }])).toThrow(/trajectories\[0\]\.messages/);
});
