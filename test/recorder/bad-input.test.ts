import { currentRollout, InvalidArgumentError, Recorder } from "trajectory-recorder";
import { recordedChoices, recordedResponse } from "trajectory-recorder/core";
import { describe, expect, it } from "vitest";

const choice = {
  index: 0,
  finish_reason: "stop" as const,
  logprobs: null,
  message: { role: "assistant" as const, content: "ok", refusal: null },
};

describe("a message nested too deep to be JSON", () => {
  it("is left out of the trajectory with a log line naming its path, and the rollout goes on", async () => {
    let deep: unknown = "x";
    for (let i = 0; i < 10_000; i++) deep = { n: deep };
    const recorder = new Recorder();
    const t = await recorder.rollout(() => {
      const r = currentRollout()!;
      r.recordCompletion({
        request: { model: "m", messages: [{ role: "user", content: "hi", extra: deep } as never] },
        choices: [choice],
      });
      // The next, ordinary turn is recorded as usual.
      r.recordCompletion({
        request: { model: "m", messages: [{ role: "user", content: "again" }] },
        choices: [choice],
      });
    });
    expect(t.messages()).toEqual([
      { role: "user", content: "again" },
      { role: "assistant", content: "ok" },
    ]);
    expect(t.logs).toContain(
      "a completion could not be recorded and was left out of the trajectory: Copying JSON data: messages[0].extra.n.n.n.n.n.n.n...: expected JSON nested at most 256 levels deep, received deeper nesting.",
    );
    expect(() => JSON.stringify(t)).not.toThrow();
  });
});

describe("recordedChoices and recordedResponse", () => {
  it("name the field of the response body that is not a chat completion's", () => {
    expect(() => recordedChoices(null as never)).toThrow(InvalidArgumentError);
    expect(() => recordedChoices(null as never)).toThrow(
      "recordedChoices(res): res: expected a chat completion (an object), received null.",
    );
    expect(() => recordedChoices({ choices: 5 } as never)).toThrow(
      "recordedChoices(res): res.choices: expected an array of Choices, received a number.",
    );
    expect(() => recordedChoices({ choices: [choice, null] } as never)).toThrow(
      /res\.choices\[1\]: expected an object, received null/,
    );
    expect(() => recordedChoices({ choices: [{ message: 5 }] } as never)).toThrow(
      /res\.choices\[0\]\.message: expected an object, received a number/,
    );
    expect(() => recordedResponse(undefined as never)).toThrow(
      "recordedResponse(res): res: expected a chat completion (an object), received undefined.",
    );
    expect(() => recordedResponse({ prompt_token_ids: "1,2" } as never)).toThrow(
      /res\.prompt_token_ids: expected an array of token ids, received a string/,
    );
    expect(recordedChoices({ choices: [choice] })).toHaveLength(1);
  });
});

describe("the recorder's own entry points", () => {
  it("new Recorder, rollout and wrap name the bad argument; rollout rejects rather than throws", async () => {
    expect(() => new Recorder(null as never)).toThrow(
      "new Recorder(options): options: expected an object, received null.",
    );
    const recorder = new Recorder();
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = recorder.rollout(5 as never);
    }).not.toThrow();
    await expect(promise).rejects.toThrow(
      "recorder.rollout(fn, options): fn: expected a function, received a number.",
    );
    await expect(recorder.rollout(() => {}, null as never)).rejects.toThrow(
      /recorder\.rollout\(fn, options\): options: expected an object, received null/,
    );
    await expect(recorder.rollout(() => {}, { metadata: 1n as never })).rejects.toThrow(
      /options\.metadata: expected a plain object, received a BigInt/,
    );
    expect(() => recorder.wrap(null as never)).toThrow(InvalidArgumentError);
    expect(() => recorder.wrap({ chat: { completions: {} } })).toThrow(
      "recorder.wrap(client): client: expected an openai client (with chat.completions.create) or an @anthropic-ai/sdk client (with messages.create), received an object.",
    );
  });
});
