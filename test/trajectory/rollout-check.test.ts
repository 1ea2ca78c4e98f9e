// What a RolloutWorker checks before BullMQ writes its result: the fields a
// rollout sets, and the items it added itself; not the items the recorder
// built from the SDK's request and answer (the check before training does).
import OpenAI from "openai";
import { Recorder, Trajectory } from "trajectory-recorder";
import { expect, it } from "vitest";
import { recordedItems } from "../../src/trajectory/recorded.js";
import { checkRolloutTrajectory, type WireIssue } from "../../src/trajectory/wire-writer.js";

const issuesOf = (t: Trajectory) => {
  const issues: WireIssue[] = [];
  checkRolloutTrajectory(t, issues);
  return issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

it("checks a rollout's own fields and the items it added, not those the recorder built", () => {
  const built = { role: "user", content: 42 } as never; // stands for an item the recorder made
  const t = new Trajectory({
    messages_and_choices: [built, { role: "user", content: 7 } as never],
    metrics: { score: "high" as never },
  });
  recordedItems(t).add(built);
  const issues = issuesOf(t);
  expect(issues.some((i) => i.startsWith("messages_and_choices.1"))).toBe(true);
  expect(issues.some((i) => i.startsWith("messages_and_choices.0"))).toBe(false);
  expect(issues.some((i) => i.startsWith("metrics.score"))).toBe(true);
  // Built for another trajectory: checked here.
  const other = new Trajectory({ messages_and_choices: [built] });
  expect(issuesOf(other).some((i) => i.startsWith("messages_and_choices.0"))).toBe(true);
});

it("the items of a recorded rollout are marked as the recorder's, and pass", async () => {
  const recorder = new Recorder();
  const fetch = async () =>
    new Response(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            logprobs: null,
            message: { role: "assistant", content: "hi" },
          },
        ],
      }),
      { headers: { "content-type": "application/json" } },
    );
  const openai = recorder.wrap(
    new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:1/v1", fetch }),
  );
  const t = await recorder.rollout(async (t) => {
    await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    t.reward = 1;
  });
  expect(t.messages_and_choices).toHaveLength(2);
  expect(issuesOf(t)).toEqual([]);
  // JSON.stringify writes it once, as the wire writer would.
  expect(JSON.parse(JSON.stringify(t))).toEqual(t.toJSON());
});
