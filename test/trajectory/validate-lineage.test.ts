// validateGroup's token checks: a Choice whose logprobs do not pair with its
// token_ids, a lineage break inside one history (planted), and the tokens the
// histories of a group share as a common prefix.
import {
  Trajectory,
  TrajectoryCheckError,
  TrajectoryGroup,
  validateGroup,
} from "trajectory-recorder";
import { History } from "trajectory-recorder/core";
import { describe, expect, it } from "vitest";
import {
  choiceTokens,
  duplicatePrefixTokens,
  lineageDeparture,
} from "../../src/trajectory/lineage.js";

/** A trainable Choice: one logprob per sampled token, as vLLM returns it. */
function choice(prompt: number[], sampled: number[], extra: Record<string, unknown> = {}) {
  return {
    index: 0,
    finish_reason: "stop",
    logprobs: {
      content: sampled.map((id) => ({
        token: `token_id:${id}`,
        logprob: -0.5,
        bytes: null,
        top_logprobs: [],
      })),
      refusal: null,
    },
    token_ids: sampled,
    prompt_token_ids: prompt,
    message: { role: "assistant" as const, content: "x" },
    ...extra,
  };
}

const EOS = 2;
const user = (content: string) => ({ role: "user" as const, content });

/** Two turns whose second prompt extends the first prompt and its tokens. */
function unbroken(): Trajectory {
  const first = choice([10, 11, 12], [20, 21, EOS]);
  const second = choice([10, 11, 12, 20, 21, EOS, 13, 14], [22, EOS]);
  return new Trajectory({
    messages_and_choices: [user("a"), first as never, user("b"), second as never],
    reward: 1,
  });
}

const check = (t: Trajectory | Trajectory[], opts = {}) =>
  validateGroup(new TrajectoryGroup(Array.isArray(t) ? t : [t, unbroken()]), {
    mode: "warn",
    logger: { warn() {} },
    ...opts,
  });

describe("validateGroup's token checks", () => {
  it("pass a history whose every prompt extends the tokens before it", () => {
    expect(check(unbroken()).problems).toEqual([]);
  });

  it("find a planted logprob count mismatch, by path", () => {
    const t = unbroken();
    const bad = choice([10], [20, 21, EOS]);
    bad.logprobs.content.pop();
    t.additional_histories.push(new History({ messages_and_choices: [user("c"), bad as never] }));
    const { problems, badTrajectories } = check(t);
    expect(badTrajectories).toEqual([0]);
    expect(problems).toEqual([
      {
        path: "trajectories[0].additional_histories[0].messages_and_choices[1].logprobs.content",
        message: expect.stringMatching(/^holds 2 logprobs for 3 token_ids: .*RuntimeError/),
      },
    ]);
    expect(() => validateGroup(new TrajectoryGroup([t, unbroken()]))).toThrow(TrajectoryCheckError);
  });

  it("counts the logprobs of a recorded (compact) Choice without building them", () => {
    const t = Trajectory.fromJSON(JSON.stringify(unbroken()));
    expect(check(t).problems).toEqual([]);
    const edited = JSON.parse(JSON.stringify(unbroken()));
    edited.messages_and_choices[3].token_ids = [22];
    const problems = check(Trajectory.fromJSON(edited)).problems;
    expect(problems.map((p) => p.path)).toEqual([
      "trajectories[0].messages_and_choices[3].logprobs.content",
    ]);
  });

  it("find a planted lineage break inside one history, with where and both windows", () => {
    const t = unbroken();
    // The template dropped the first turn's reasoning token 20 when rendering it again.
    (t.messages_and_choices[3] as any).prompt_token_ids = [10, 11, 12, 21, EOS, 13, 14];
    const { problems } = check(t);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe("trajectories[0].messages_and_choices[3].prompt_token_ids");
    expect(problems[0]!.message).toContain(
      "does not extend the tokens of trajectories[0].messages_and_choices[1]: its prompt_token_ids depart at position 3 (at token 0 of the previous turn's sampled tokens): the lineage holds 10 11 12 [20] 21 2, the prompt holds 10 11 12 [21] 2 13 14",
    );
    expect(check(t, { allowLineageBreaks: true }).problems).toEqual([]);
  });

  it("accept a stop token the template renders its own way, or leaves out, but not a stop string's, nor text the template replaced", () => {
    const prev = choiceTokens(choice([1, 2], [5, 6, EOS]))!;
    // EOS included in token_ids and rendered back: extends.
    expect(lineageDeparture(prev, [1, 2, 5, 6, EOS, 9])).toBe(-1);
    // The template ends the turn with another token (im_end for eos): the stop token is exempt.
    expect(lineageDeparture(prev, [1, 2, 5, 6, 3, 9])).toBe(-1);
    // A server that leaves EOS out of token_ids: the template's end follows the tokens.
    const noEos = choiceTokens(choice([1, 2], [5, 6]))!;
    expect(lineageDeparture(noEos, [1, 2, 5, 6, EOS, 9])).toBe(-1);
    // A server that leaves the stop token out while the last sampled token is text:
    // Qwen3 samples `</tool_call>` `\n` (finish_reason tool_calls, stop_reason null), and its
    // template renders `</tool_call>` `<|im_end|>` `\n`. The template's end is inserted before
    // the sampled `\n`, not written in place of a stop token: the lineage breaks there.
    const NL = 198;
    const IM_END = 151645;
    const toolTurn = choiceTokens(
      choice([1, 2], [5, 6, NL], { finish_reason: "tool_calls", stop_reason: null }),
    )!;
    expect(lineageDeparture(toolTurn, [1, 2, 5, 6, IM_END, NL, 9])).toBe(4);
    // The same turn with its stop token kept and rendered back extends.
    const withEnd = choiceTokens(
      choice([1, 2], [5, 6, NL, IM_END], { finish_reason: "tool_calls", stop_reason: null }),
    )!;
    expect(lineageDeparture(withEnd, [1, 2, 5, 6, NL, IM_END, NL, 9])).toBe(-1);
    // Stopped on a stop string (vLLM's stop_reason is the string): its tokens are text the
    // message no longer holds, so a prompt without them departs.
    const stopString = choiceTokens(choice([1, 2], [5, 6, 7], { stop_reason: "\n" }))!;
    expect(lineageDeparture(stopString, [1, 2, 5, 6, 3, 9])).toBe(4);
    // Cut off at max_tokens: nothing is exempt.
    const cut = choiceTokens(choice([1, 2], [5, 6], { finish_reason: "length" }))!;
    expect(lineageDeparture(cut, [1, 2, 5, 7, 9])).toBe(3);
    // A prompt that stops inside the lineage departs where it ends.
    expect(lineageDeparture(prev, [1, 2, 5])).toBe(3);
  });

  it("report the histories, the recorder's splits and the duplicate prefix tokens per group", () => {
    const a = unbroken();
    const b = unbroken();
    // A split history: its prompt shares the first 5 tokens with a's main history.
    b.additional_histories.push(
      new History({
        messages_and_choices: [
          user("a"),
          user("b"),
          choice([10, 11, 12, 20, 21, 99], [23]) as never,
        ],
      }),
    );
    b.log("token lineage split: messages_and_choices[3] does not extend ...");
    const { tokens } = check([a, b]);
    // a and b's main histories are the same 10 tokens; b's split one shares 5 more.
    expect(tokens).toEqual({ histories: 3, splits: 1, duplicatePrefixTokens: 10 + 5 });
    expect(duplicatePrefixTokens([[1, 2, 3], [1, 2, 4], [1, 9], [7]])).toBe(2 + 1);
  });
});
