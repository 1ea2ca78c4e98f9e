// The report shows token lineage splits: per step, how many splits and how
// many prefix tokens histories repeat; per trajectory, where a history split
// and the diverging tokens (the recorder's log lines).
import { expect, it } from "vitest";
import { renderReport } from "../../src/report/index.js";
import { SCRIPT } from "../../src/report/viewer.js";

const choice = (prompt: number[], sampled: number[]) => ({
  index: 0,
  finish_reason: "stop",
  message: { role: "assistant", content: "x" },
  logprobs: {
    content: sampled.map((id) => ({
      token: `token_id:${id}`,
      logprob: -0.5,
      top_logprobs: [],
      bytes: null,
    })),
  },
  token_ids: sampled,
  prompt_token_ids: prompt,
});

const SPLIT =
  "token lineage split: messages_and_choices[3] does not extend the tokens of messages_and_choices[1]: its prompt_token_ids depart at position 3 (at token 0 of the previous turn's sampled tokens): the lineage holds 1 2 3 [7] 8, the prompt holds 1 2 3 [9] 8; messages_and_choices ends at [1] and the turn goes on in additional_histories[0].messages_and_choices[3]";

const split = (reward: number) => ({
  messages_and_choices: [{ role: "user", content: "go" }, choice([1, 2, 3], [7, 8])],
  additional_histories: [
    {
      messages_and_choices: [
        { role: "user", content: "go" },
        { role: "assistant", content: "x" },
        { role: "user", content: "more" },
        choice([1, 2, 3, 9, 8, 4], [5]),
      ],
      tools: null,
    },
  ],
  reward,
  logs: [SPLIT],
});

function pageData(html: string) {
  const index = JSON.parse(
    /<script type="application\/json" id="report-index">([^<]*)<\/script>/.exec(html)![1]!,
  );
  const chunks: any[] = [];
  for (const m of html.matchAll(
    /<script type="application\/json" id="chunk-(\d+)">([^<]*)<\/script>/g,
  ))
    chunks[Number(m[1])] = JSON.parse(m[2]!);
  return { index, trajectories: chunks.flat() };
}

it("counts splits and repeated prefix tokens per step, and keeps each trajectory's split lines", () => {
  const html = renderReport({
    steps: [
      { step: 0, split: "train", groups: [{ trajectories: [split(1), split(0)] as never }] },
      { step: 1, split: "train", groups: [{ trajectories: [] }] },
    ],
  });
  const { index, trajectories } = pageData(html);
  // Two trajectories, each split once; four histories: [1 2 3 7 8] twice, [1 2 3 9 8 4 5] twice.
  // Repeated prefix tokens: 5 + 3 (the shared 1 2 3) + 7.
  expect(index.steps[0]).toMatchObject({ splits: 2, dup: 5 + 3 + 7 });
  expect(index.steps[1]).toMatchObject({ splits: 0, dup: 0 });
  expect(trajectories[0].splits).toEqual([SPLIT]);
  // The viewer draws them: in the step list and as their own section of the trajectory.
  expect(SCRIPT).toContain("token lineage splits");
  expect(SCRIPT).toContain("Where a history split");
});
