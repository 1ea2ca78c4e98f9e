// The wire writer's quick yes (src/trajectory/wire-fast.ts) never accepts
// what the wire schema refuses: each value below goes through both, and the
// usual shapes (what the recorder, workers and collector write) are taken on
// the quick test, so the schema is left for the rest.
import { describe, expect, it } from "vitest";
import { choiceToJson } from "../../src/trajectory/choice-json.js";
import {
  fastGroupShellOk,
  fastItemOk,
  fastTrajectoryShellOk,
} from "../../src/trajectory/wire-fast.js";
import { groupWirePieces, type WireIssue } from "../../src/trajectory/wire-writer.js";
import {
  MessageOrChoiceWireSchema,
  TrajectoryGroupWireSchema,
  TrajectoryWireSchema,
} from "../../src/wire/index.js";

const call = { id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } };
const choice = {
  finish_reason: "tool_calls",
  index: 0,
  logprobs: null,
  message: { content: null, refusal: null, role: "assistant", tool_calls: [call] },
};
const tool = {
  type: "function",
  function: { name: "lookup", description: "d", parameters: { type: "object" } },
};

const goodItems: unknown[] = [
  { role: "system", content: "s" },
  { role: "developer", content: null },
  { role: "user", content: [{ type: "text", text: "hi" }], name: "u" },
  { role: "assistant", content: "a", tool_calls: [call], refusal: null },
  { role: "tool", tool_call_id: "c1", content: "42" },
  { role: "function", name: "f", content: "x" },
  choice,
  { ...choice, finish_reason: null, message: { role: "assistant", content: "hi" } },
];
const badItems: unknown[] = [
  { role: "user", content: 42 },
  { role: "robot", content: "x" },
  { role: "tool", content: "x" },
  { role: "function", content: "x" },
  { role: "assistant", content: "a", tool_calls: [{ id: 1, function: { name: "f" } }] },
  { role: "assistant", content: "a", tool_calls: [undefined] },
  { ...choice, index: 0.5 },
  { ...choice, index: Number.NaN },
  { ...choice, finish_reason: undefined },
  { ...choice, message: { ...choice.message, role: "user" } },
  { ...choice, message: { ...choice.message, content: 3 } },
  { ...choice, logprobs: { content: [{ token: 1 }] } },
  { role: "user", content: "x", name: 3 },
  new (class Message {
    role = "user";
    content = "x";
  })(),
  { role: "user", content: "x", toJSON: () => ({ role: "user", content: 1 }) },
  "text",
  null,
  [],
];

const shell = {
  messages_and_choices: [],
  tools: [tool],
  additional_histories: [{ messages_and_choices: [], tools: null }],
  reward: 1,
  initial_policy_version: 0,
  final_policy_version: null,
  metrics: { score: 0.5, ok: true },
  metadata: { group_id: "g", nested: { a: [1, 2] } },
  logs: ["a"],
};
const badShells: unknown[] = [
  { ...shell, reward: "1" },
  { ...shell, reward: Number.POSITIVE_INFINITY },
  { ...shell, initial_policy_version: 1.5 },
  { ...shell, metrics: { score: "high" } },
  { ...shell, metrics: { score: Number.NaN } },
  { ...shell, metadata: [] },
  { ...shell, logs: [1] },
  { ...shell, tools: [{ function: { name: "" } }] },
  { ...shell, tools: [{ function: { name: "f", parameters: [] } }] },
  { ...shell, additional_histories: [{ tools: null }] },
  { ...shell, start_time: 3 },
  { ...shell, messages_and_choices: [{ role: "user", content: "hi" }] },
];

const group = {
  trajectories: [],
  exceptions: [{ type: "<class 'E'>", message: "m", traceback: "" }],
  metadata: { scenario: 1 },
  metrics: { m: 1 },
  logs: [],
};
const badGroups: unknown[] = [
  { ...group, exceptions: [{ type: "E" }] },
  { ...group, metrics: { m: "x" } },
  { ...group, logs: "x" },
  { ...group, trajectories: [{}] },
  { ...group, trajectories: undefined },
];

const roundTrip = (v: unknown) => {
  const text = JSON.stringify(v);
  return text === undefined ? undefined : JSON.parse(text);
};

describe("the quick test accepts a subset of what the schema accepts", () => {
  it.each(goodItems.map((v) => [JSON.stringify(v), v]))(
    "item %s: quick yes, schema yes",
    (_, v) => {
      expect(fastItemOk(v)).toBe(true);
      expect(MessageOrChoiceWireSchema.safeParse(roundTrip(v)).success).toBe(true);
    },
  );

  it("a Choice as the writer checks it (choiceToJson's nulls filled in) gets a quick yes", () => {
    const written = choiceToJson({ ...choice, logprobs: null } as never);
    expect(written.message).toMatchObject({ tool_calls: [call], audio: null });
    expect(fastItemOk(written)).toBe(true);
  });

  it.each(badItems.map((v, i) => [i, v]))("bad item %i: no quick yes", (_, v) => {
    expect(fastItemOk(v)).toBe(false);
  });

  it("every bad item the schema refuses, the quick test refuses too", () => {
    for (const v of badItems) {
      if (!MessageOrChoiceWireSchema.safeParse(roundTrip(v)).success)
        expect(fastItemOk(v)).toBe(false);
    }
  });

  it("trajectory and group shells: the usual ones pass quickly, bad ones go to the schema", () => {
    expect(fastTrajectoryShellOk(shell)).toBe(true);
    expect(TrajectoryWireSchema.safeParse(shell).success).toBe(true);
    expect(fastTrajectoryShellOk({})).toBe(true);
    for (const v of badShells) {
      expect(fastTrajectoryShellOk(v)).toBe(false);
      if (v && (v as { messages_and_choices?: unknown[] }).messages_and_choices?.length === 0)
        expect(TrajectoryWireSchema.safeParse(roundTrip(v)).success).toBe(false);
    }
    expect(fastGroupShellOk(group)).toBe(true);
    expect(TrajectoryGroupWireSchema.safeParse(group).success).toBe(true);
    for (const v of badGroups) expect(fastGroupShellOk(v)).toBe(false);
  });
});

describe("the writer still names the bad field", () => {
  const issuesOf = (g: unknown) => {
    const issues: WireIssue[] = [];
    for (const _ of groupWirePieces(g, issues));
    return issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it("in an item, a trajectory's fields and the group's", () => {
    const trajectory = {
      ...shell,
      messages_and_choices: [...goodItems, { role: "tool", content: "x" }],
    };
    expect(issuesOf({ ...group, trajectories: [trajectory] })).toEqual([
      expect.stringMatching(/^trajectories\.0\.messages_and_choices\.8/),
    ]);
    expect(
      issuesOf({
        ...group,
        trajectories: [{ ...trajectory, messages_and_choices: [], reward: "1" }],
      }),
    ).toEqual([expect.stringMatching(/^trajectories\.0\.reward/)]);
    expect(issuesOf({ ...group, metrics: { m: "x" }, trajectories: [] })).toEqual([
      expect.stringMatching(/^metrics\.m/),
    ]);
  });

  it("what JSON cannot write still throws", () => {
    expect(() => issuesOf({ ...group, trajectories: [{ ...shell, metadata: { n: 1n } }] })).toThrow(
      /BigInt/,
    );
  });
});
