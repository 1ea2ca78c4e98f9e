// Recorded logprobs kept in columns read, compare and serialize like the SDK's objects.
import { Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { expect, it } from "vitest";
import { CompactLogprobs } from "../../src/logprobs/index.js";
import { recordedChoices } from "../../src/recorder/response.js";
import { prepareGroup } from "../../src/trajectory/index.js";

const tok = (token: string, logprob: number, bytes = [...Buffer.from(token)]) => ({
  token,
  logprob,
  bytes,
  top_logprobs: [
    { token, logprob, bytes },
    { token: " x", logprob: -3.25e-7, bytes: [32, 120] },
  ],
});
// A character split over two tokens: their bytes are not their text's UTF-8.
const split = { token: "\ufffd", logprob: -0.5, bytes: [0xe2, 0x82], top_logprobs: [] };

function sdkChoice() {
  return {
    index: 0,
    finish_reason: "stop" as const,
    message: { role: "assistant" as const, content: "Paris", refusal: null },
    logprobs: { content: [tok("Par", -0.01), tok("is", -1e-9), split, tok("", -2)], refusal: null },
    token_ids: [1, 2, 3, 4],
  };
}

it("keeps a recorded Choice's logprobs in columns that read and serialize exactly as the SDK's", async () => {
  const [recorded] = recordedChoices({ choices: [sdkChoice()], prompt_token_ids: [9] });
  expect(recorded!.logprobs).toBeInstanceOf(CompactLogprobs);
  const plain = { prompt_token_ids: [9], ...sdkChoice() };
  const user = { role: "user", content: "capital of France?" };
  const compactT = new Trajectory({ messages_and_choices: [user, recorded!], reward: 1 });
  const plainT = new Trajectory({ messages_and_choices: [user, plain], reward: 1 });
  expect(JSON.stringify(compactT)).toBe(JSON.stringify(plainT));
  expect(compactT.toJSON()).toEqual(plainT.toJSON());
  const g = (t: Trajectory) => new TrajectoryGroup([t]);
  const bytes = async (t: Trajectory) =>
    new TextDecoder().decode((await prepareGroup(g(t), "test")).bytes);
  expect(await bytes(compactT)).toBe(await bytes(plainT));
  expect(await bytes(compactT)).toBe(JSON.stringify(g(plainT)));
  // Read like the SDK's object, and edits stick.
  expect(recorded!.logprobs).toEqual(sdkChoice().logprobs);
  const content = (recorded!.logprobs as { content: { logprob: number }[] }).content;
  content[0]!.logprob = -7;
  expect(
    JSON.parse(JSON.stringify(compactT)).messages_and_choices[1].logprobs.content[0].logprob,
  ).toBe(-7);
  expect(await bytes(compactT)).toBe(JSON.stringify(g(compactT)));
});

it("reads ART JSON into the compact form, and leaves logprobs of another shape as they are", () => {
  const wire = new Trajectory({ messages_and_choices: [sdkChoice()] }).toJSON();
  const read = Trajectory.fromJSON(JSON.stringify(wire));
  const choice = read.messages_and_choices[0] as { logprobs: unknown };
  expect(choice.logprobs).toBeInstanceOf(CompactLogprobs);
  expect(read.toJSON()).toEqual(wire);
  const odd = sdkChoice();
  (odd.logprobs.content[0] as Record<string, unknown>).extra_field = 1;
  const [kept] = recordedChoices({ choices: [odd] });
  // Read when compacted (the rollout's end): another shape is then kept as it came.
  expect(JSON.parse(JSON.stringify(kept!.logprobs))).toEqual(odd.logprobs);
  expect(kept!.logprobs).toEqual(odd.logprobs);
  expect((kept!.logprobs!.content![0] as unknown as Record<string, unknown>).extra_field).toBe(1);
});

it("keeps each token's own bytes when two tokens share a text but not their bytes", () => {
  const halves = [
    { token: "\ufffd", logprob: -0.5, bytes: [0xe2, 0x82], top_logprobs: [] },
    { token: "\ufffd", logprob: -0.25, bytes: [0xac], top_logprobs: [] },
    { token: "\ufffd", logprob: -0.125, bytes: null, top_logprobs: [] },
    { token: "\ufffd", logprob: -1, bytes: [239, 191, 189], top_logprobs: [] },
  ];
  const compact = CompactLogprobs.from({ content: halves, refusal: null })!;
  expect(compact).toBeInstanceOf(CompactLogprobs);
  expect(JSON.parse(JSON.stringify(compact)).content).toEqual(halves);
  expect(compact.content).toEqual(halves);
});

it("stringifies the same with a replacer that edits what it is given, and the edits reach nothing recorded", () => {
  const [recorded] = recordedChoices({ choices: [sdkChoice()], prompt_token_ids: [9] });
  const t = new Trajectory({ messages_and_choices: [recorded!] });
  const before = JSON.stringify(t);
  JSON.stringify(t, (key, value) => {
    if (key === "bytes" && Array.isArray(value)) {
      try {
        value.push(0);
      } catch {
        // A shared array may refuse the edit; it must never take it.
      }
    }
    return value;
  });
  expect(JSON.stringify(t)).toBe(before);
  expect(JSON.stringify(t.toJSON())).toBe(before);
});

it("serializes tokens exactly past the size of one token table", () => {
  // More distinct tokens than one table takes: later ones go to a new table.
  const many = Array.from({ length: (1 << 18) + 5 }, (_, i) => ({
    token: `t${i}`,
    bytes: [...Buffer.from(`t${i}`)],
    logprob: -i / 7,
    top_logprobs: [],
  }));
  const first = CompactLogprobs.from({ content: many, refusal: null })!;
  const after = CompactLogprobs.from({ content: [many[3]!, many[(1 << 18) + 4]!], refusal: null })!;
  const text = (c: CompactLogprobs) => Buffer.from(c.wireBytes()!).toString("utf8");
  expect(text(first)).toBe(JSON.stringify({ content: many, refusal: null }));
  expect(JSON.parse(text(after))).toEqual({
    content: [many[3], many[(1 << 18) + 4]],
    refusal: null,
  });
  expect(JSON.stringify(after)).toBe(text(after));
});
