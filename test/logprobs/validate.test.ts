// validateGroup refuses, in throw mode, the logprob tokens the shipper's
// writer refuses at send time, naming each bad token; and bytes must be byte values.
import {
  Trajectory,
  TrajectoryCheckError,
  TrajectoryGroup,
  validateGroup,
} from "trajectory-recorder";
import { describe, expect, it } from "vitest";
import { toWireGroups } from "../../src/training/index.js";

const token = (extra: Record<string, unknown> = {}) => ({
  token: "a",
  logprob: -0.5,
  bytes: [97],
  top_logprobs: [],
  ...extra,
});

function groupWith(content: unknown[]): TrajectoryGroup {
  const choice = (reward: number) =>
    new Trajectory({
      reward,
      messages_and_choices: [
        { role: "user", content: "q" },
        {
          index: 0,
          finish_reason: "stop",
          message: { role: "assistant", content: "a", refusal: null },
          logprobs: { content, refusal: null },
          // One id per logprob token, as the count check (issue #33) requires.
          token_ids: content.map((_, i) => i + 1),
          prompt_token_ids: [2],
        } as never,
      ],
    });
  return new TrajectoryGroup([choice(1), choice(0)]);
}

describe("validateGroup's logprob checks", () => {
  const bad: [string, unknown[], RegExp][] = [
    ["a null entry", [token(), null], /content\[1\]: expected a token logprob object, got null/],
    [
      "a NaN logprob",
      [token({ logprob: Number.NaN })],
      /content\[0\]\.logprob: expected a finite number, got NaN/,
    ],
    [
      "a string logprob",
      [token({ logprob: "-0.5" })],
      /content\[0\]\.logprob: expected a finite number, got string/,
    ],
    [
      "bytes [300, -1]",
      [token({ bytes: [300, -1] })],
      /content\[0\]\.bytes: expected null or a list of byte values/,
    ],
    [
      "a bad alternative",
      [token({ top_logprobs: [{ token: 5, logprob: 0, bytes: null }] })],
      /top_logprobs\[0\]\.token: expected a string/,
    ],
  ];
  for (const [what, content, message] of bad) {
    it(`throws on ${what}, as sending it would`, () => {
      const group = groupWith(content);
      let error: unknown;
      try {
        validateGroup(group);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(TrajectoryCheckError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain(
        "trajectories[0].messages_and_choices[1].logprobs",
      );
      // The writer refuses the same group.
      expect(() => toWireGroups([group], "log")).toThrow();
    });
  }

  it("passes good tokens, and null bytes", () => {
    expect(validateGroup(groupWith([token(), token({ bytes: null })])).problems).toEqual([]);
  });
});
