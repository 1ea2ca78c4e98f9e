import {
  currentRollout,
  TrajectoryGroup as Group,
  Recorder,
  type TrajectoryGroup,
} from "trajectory-recorder";
import { expect, it } from "vitest";

const choice = (index: number, content: string) => ({
  index,
  finish_reason: "stop" as const,
  logprobs: null,
  message: { role: "assistant" as const, content, refusal: null },
});

it("n > 1: the first choice extends the conversation, the others become additional histories", async () => {
  const recorder = new Recorder();
  const t = await recorder.rollout(() => {
    currentRollout()!.recordCompletion({
      request: { model: "m", messages: [{ role: "user", content: "pick" }] },
      choices: [choice(0, "a"), choice(1, "b"), choice(2, "c")],
    });
  });
  expect(t.messages().map((m) => m.content)).toEqual(["pick", "a"]);
  expect(t.additional_histories.map((h) => h.messages().map((m) => m.content))).toEqual([
    ["pick", "b"],
    ["pick", "c"],
  ]);
});

it("recordToolResult appends a tool message that the next request may repeat without duplicating", async () => {
  const recorder = new Recorder();
  const t = await recorder.rollout(() => {
    const r = currentRollout()!;
    const call = {
      id: "call_1",
      type: "function" as const,
      function: { name: "f", arguments: "{}" },
    };
    const c0 = {
      ...choice(0, ""),
      message: { role: "assistant" as const, content: null, refusal: null, tool_calls: [call] },
    };
    const first = [{ role: "user" as const, content: "go" }];
    r.recordCompletion({ request: { messages: first }, choices: [c0] });
    r.recordToolResult({ tool_call_id: "call_1", content: "42" });
    r.recordCompletion({
      request: {
        messages: [...first, c0.message, { role: "tool", tool_call_id: "call_1", content: "42" }],
      },
      choices: [choice(0, "done")],
    });
  });
  expect(t.messages().map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  expect(t.additional_histories).toHaveLength(0);
});

it("gatherTrajectoryGroups ships every finished group to options.shipper", async () => {
  const shipped: TrajectoryGroup[] = [];
  const recorder = new Recorder({ shipper: { add: (g) => void shipped.push(g) } });
  const groups = await recorder.gatherTrajectoryGroups([
    Group.from([
      () =>
        recorder.rollout((t) => {
          t.reward = 1;
        }),
      () =>
        recorder.rollout((t) => {
          t.reward = 0;
        }),
    ]),
  ]);
  expect(shipped).toEqual(groups);
  expect(shipped[0]!.trajectories.map((t) => t.reward)).toEqual([1, 0]);
});

it("logOnce logs a message once per rollout, and again in the next rollout", async () => {
  const recorder = new Recorder();
  const twice = () => {
    currentRollout()!.logOnce("no logprobs here");
    currentRollout()!.logOnce("no logprobs here");
    currentRollout()!.logOnce("another note");
  };
  const a = await recorder.rollout(twice);
  const b = await recorder.rollout(twice);
  // A rollout without a call also says so, last.
  expect(a.logs.slice(0, 2)).toEqual(["no logprobs here", "another note"]);
  expect(b.logs.slice(0, 2)).toEqual(["no logprobs here", "another note"]);
  expect(b.logs.slice(2)).toEqual([expect.stringMatching(/^no chat completion was recorded/)]);
});

it("runs a plugin's end callbacks before handing the trajectory back, logs one that throws, and skips one given too late", async () => {
  const recorder = new Recorder();
  let late: (() => void) | undefined;
  const t = await recorder.rollout(async () => {
    const rollout = currentRollout()!;
    rollout.onEnd!(() => rollout.log("first"));
    rollout.onEnd!(() => {
      throw new Error("plugin bug");
    });
    rollout.onEnd!(() => rollout.log("third"));
    late = () => rollout.onEnd!(() => rollout.log("too late"));
  });
  expect(t.logs.slice(0, 3)).toEqual([
    "first",
    "recording at the rollout's end failed: plugin bug",
    "third",
  ]);
  const before = [...t.logs];
  late!();
  expect(t.logs).toEqual(before);
});
