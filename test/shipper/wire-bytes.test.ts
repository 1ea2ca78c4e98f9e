// The bytes a prepared group sends are exactly the group's JSON, checked once.
import { readFileSync } from "node:fs";
import { InvalidTrainingOptionsError, Trajectory, TrajectoryGroup } from "trajectory-recorder";
import { History } from "trajectory-recorder/core";
import { expect, it } from "vitest";
import { prepareGroup } from "../../src/trajectory/index.js";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/art/${name}`, import.meta.url), "utf8"));
const text = async (g: unknown) => new TextDecoder().decode((await prepareGroup(g, "test")).bytes);

const token = (t: string, lp: number) => ({
  token: t,
  logprob: lp,
  bytes: [...Buffer.from(t)],
  top_logprobs: [
    { token: t, logprob: lp, bytes: [...Buffer.from(t)] },
    { logprob: -9.5e-7, token: "é", bytes: null },
  ],
});

function recordedGroup(): TrajectoryGroup {
  const choice = {
    index: 0,
    finish_reason: "tool_calls",
    message: {
      role: "assistant" as const,
      content: null,
      tool_calls: [{ type: "function", id: "c1", function: { name: "f", arguments: "{}" } }],
    },
    logprobs: { content: [token("a", -0.1), token(' "b"', -1e-9)], refusal: null },
    token_ids: [1, 2],
    prompt_token_ids: [5, 6, 7],
  };
  const t = new Trajectory({
    messages_and_choices: [{ role: "user", content: "hi", name: undefined } as never, choice],
    reward: 0.5,
    metrics: { turns: 1, ok: true },
    metadata: { when: new Date(0), nested: { n: Number.NaN } },
    additional_histories: [
      new History({
        messages_and_choices: [
          { role: "user", content: "sum" },
          { ...choice, logprobs: null },
        ],
      }),
    ],
  });
  const u = Trajectory.fromJSON(fixture("trajectory-tool-calling.json"));
  return new TrajectoryGroup([t, u, new Error("boom")], { metadata: { key: "k" }, logs: ["l"] });
}

it("writes exactly JSON.stringify(group) for recorded groups, read-in ART JSON and plain wire JSON", async () => {
  const group = recordedGroup();
  expect(await text(group)).toBe(JSON.stringify(group));
  const art = TrajectoryGroup.fromJSON(fixture("group-with-exception.json"));
  expect(await text(art)).toBe(JSON.stringify(art));
  const wire = JSON.parse(JSON.stringify(group));
  expect(await text(wire)).toBe(JSON.stringify(wire));
  const compact = { trajectories: [fixture("trajectory-compact.json")] };
  expect(await text(compact)).toBe(JSON.stringify(compact));
});

it("rejects a bad group naming the field, including inside recorded logprobs", async () => {
  const group = recordedGroup();
  const bad = group.trajectories[0]!.messages_and_choices[1] as {
    logprobs: { content: { logprob: unknown }[] };
  };
  bad.logprobs.content[1]!.logprob = "low";
  group.trajectories[1]!.reward = Number.NaN;
  const error = await prepareGroup(group, "TrajectoryShipper.add").catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidTrainingOptionsError);
  expect((error as Error).message).toMatch(
    /groups\[0\]\.trajectories\[0\]\.messages_and_choices\[1\]\.logprobs\.content\[1\]\.logprob: expected a finite number/,
  );
  expect((error as Error).message).toMatch(/groups\[0\]\.trajectories\[1\]\.reward/);
  await expect(
    prepareGroup({ trajectories: [{ messages_and_choices: [{ role: "robot" }] }] }, "x"),
  ).rejects.toThrow(/groups\[0\]\.trajectories\[0\]\.messages_and_choices\[0\]/);
  await expect(prepareGroup(null, "x")).rejects.toThrow(/groups\[0\]/);
});
