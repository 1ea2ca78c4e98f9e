// Replayed groups for RL: recorded production states are sampled again from
// the current checkpoint (the emulator on loopback), scored as a group, and
// the groups whose rewards differ train with model.train.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { InvalidArgumentError, TrainableModel, TrainingClient } from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { type ReplayOptions, replayGroups } from "trajectory-recorder/replay";
import { TrajectoryStore } from "trajectory-recorder/store";
import { afterEach, beforeEach, expect, it } from "vitest";
import { isChoice, toChatMessages } from "../../src/trajectory/index.js";
import type { TrajectoryWire } from "../../src/wire/index.js";
import { tempDir } from "../store/helpers.js";

let emu: Emulator;
let store: TrajectoryStore;
let model: TrainableModel;
beforeEach(async () => {
  emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  model = await TrainableModel.register(
    new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 }),
    { project: "p", name: "replay", baseModel: "toy" },
  );
  store = await TrajectoryStore.open({ dir: tempDir(), logger: { warn: () => {} } });
});
afterEach(async () => {
  await store.close();
  await emu.close();
});

const TOOLS = [
  {
    type: "function",
    function: {
      name: "check_stock",
      parameters: { type: "object", properties: { fruit: { type: "string" } } },
    },
  },
];

/** A production conversation as the recorder stores it: two calls, the second answer last. */
function recorded(topic: string): TrajectoryWire {
  const answer = (content: string) => ({
    finish_reason: "stop",
    index: 0,
    logprobs: null,
    message: { role: "assistant" as const, content, refusal: null },
  });
  return {
    messages_and_choices: [
      { role: "system", content: "You keep a fruit stall." },
      { role: "user", content: `please say ${topic}` },
      answer(`${topic} is here`),
      { role: "user", content: `and how many ${topic} are left?` },
      answer("none"),
    ],
    tools: TOOLS as never,
    additional_histories: [],
    reward: 0,
    initial_policy_version: null,
    final_policy_version: null,
    metrics: {},
    metadata: {},
    logs: [],
  };
}

function record(id: string, topic: string, reward?: number) {
  store.put({ id, session: `s-${id}`, status: "finished", trajectory: recorded(topic), calls: 2 });
  if (reward !== undefined) store.addFeedback({ trajectory_id: id, reward });
}

const lines = () => {
  const out: string[] = [];
  return { out, logger: { info: (m: string) => out.push(m) } };
};
const lastText = (t: { messages(): { content?: unknown }[] }) =>
  String(t.messages().at(-1)?.content ?? "");
const byLength: ReplayOptions["reward"] = (t) => lastText(t).length;
const quiet = { info: () => {} };

it("replays negative-feedback states first, then a seeded sample of the rest, each as a group of N starting with the recorded prefix", async () => {
  record("trj_up", "apple", 1);
  record("trj_down1", "cat", 0);
  record("trj_plain1", "red");
  record("trj_down2", "two", -1);
  record("trj_plain2", "pear");
  record("trj_plain3", "plum", 0.5);
  const run = (seed: number) =>
    replayGroups({
      store,
      model,
      n: 3,
      reward: byLength,
      select: { limit: 4, seed },
      requestOptions: { max_tokens: 4, seed: 5 },
      logger: quiet,
    });
  const result = await run(7);
  const ids = result.states.map((s) => s.state.trajectoryId);
  expect(ids).toHaveLength(4);
  expect(new Set(ids.slice(0, 2))).toEqual(new Set(["trj_down1", "trj_down2"]));
  expect(result.states.map((s) => s.state.negative)).toEqual([true, true, false, false]);
  // Seeded: the same seed chooses the same states again.
  expect((await run(7)).states.map((s) => s.state.trajectoryId)).toEqual(ids);

  for (const s of result.states) {
    const stored = recorded("x").messages_and_choices;
    // The replayed turn is the last answer; the prefix is everything before it.
    expect(s.state.turn).toBe(stored.length - 1);
    const topic = s.state.messages[1]?.content;
    const group = result.groups.find((g) => g.metadata.replay_of === s.state.trajectoryId);
    expect(group?.trajectories).toHaveLength(3);
    for (const t of group?.trajectories ?? []) {
      const prefix = toChatMessages(
        recorded(String(topic).replace("please say ", "")).messages_and_choices.slice(
          0,
          4,
        ) as never,
      );
      expect(t.messages().slice(0, 4)).toEqual(prefix);
      expect(t.tools).toEqual(TOOLS);
      // One new answer, sampled by the checkpoint and recorded with its logprobs.
      const last = t.messages_and_choices.at(-1);
      expect(t.messages_and_choices).toHaveLength(5);
      expect(last && isChoice(last) && last.logprobs).toBeTruthy();
      expect(t.metadata).toMatchObject({ replay_of: s.state.trajectoryId, replay_turn: 4 });
    }
  }
});

it("trains the groups whose rewards differ with model.train, and a step completes", async () => {
  record("trj_a", "apple", 0);
  record("trj_b", "cat", 1);
  const result = await replayGroups({
    store,
    model,
    n: 4,
    reward: byLength,
    requestOptions: { max_tokens: 4, seed: 11 },
    logger: quiet,
  });
  expect(result.groups).toHaveLength(2);
  expect(result.states.every((s) => s.outcome === "trainable")).toBe(true);
  expect(new Set(result.states[0]?.rewards).size).toBeGreaterThan(1);
  const trained = await model.train(result.groups, {}, { pollIntervalMs: 10, logger: quiet });
  expect(trained.jobId).not.toBeNull();
  expect(trained.step).toBe(1);
  expect(trained.noSignalGroups).toBe(0);
});

it("every replayed sample records the checkpoint that sampled it, even from a model that has not asked for its step yet", async () => {
  record("trj_a", "apple", 0);
  record("trj_b", "cat", 1);
  const replay = () =>
    replayGroups({
      store,
      model,
      n: 3,
      reward: byLength,
      requestOptions: { max_tokens: 4, seed: 3 },
      logger: quiet,
    });
  // A model just registered: it has seen no step, and replay asks for it.
  const first = await replay();
  const sampled = first.groups.flatMap((g) => g.trajectories);
  expect(sampled.length).toBeGreaterThan(0);
  for (const t of sampled) {
    expect(t.initial_policy_version).toBe(0);
    expect(t.final_policy_version).toBe(0);
  }
  await model.train(first.groups, {}, { pollIntervalMs: 10, logger: quiet });
  // A step trained elsewhere (another process, another model object) is seen too.
  const other = await TrainableModel.register(
    new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 }),
    { project: "p", name: "replay", baseModel: "toy" },
  );
  const second = await replayGroups({
    store,
    model: other,
    n: 3,
    reward: byLength,
    requestOptions: { max_tokens: 4, seed: 3 },
    logger: quiet,
  });
  for (const t of second.groups.flatMap((g) => g.trajectories))
    expect(t.initial_policy_version).toBe(1);
});

it("leaves out and counts the groups whose rewards are all equal, with a log line", async () => {
  record("trj_tie", "apple", 0);
  record("trj_spread", "cat", 1);
  const log = lines();
  const result = await replayGroups({
    store,
    model,
    n: 3,
    // One state's answers all score alike: its group teaches nothing.
    reward: (t, state) => (state.trajectoryId === "trj_tie" ? 1 : lastText(t).length),
    requestOptions: { max_tokens: 4, seed: 3 },
    logger: log.logger,
  });
  expect(result.noSignalGroups).toBe(1);
  expect(result.groups.map((g) => g.metadata.replay_of)).toEqual(["trj_spread"]);
  expect(result.states.map((s) => [s.state.trajectoryId, s.outcome])).toEqual([
    ["trj_tie", "no_reward_signal"],
    ["trj_spread", "trainable"],
  ]);
  expect(log.out).toContain(
    "replayGroups: left out 1 of 2 replayed group(s) whose rewards are all equal (nothing to learn); 1 to train on.",
  );
});

it("continues the agent loop through a tool runner, and stops at the replayed turn without one", async () => {
  record("trj_tools", "apple", 0);
  const base = {
    store,
    model,
    n: 2,
    // Tool-call answers carry no text: the sample's index keeps the rewards apart.
    reward: (t) => Number(t.metadata.replay_sample),
    // The emulator answers with a tool call whenever one is required.
    requestOptions: { max_tokens: 4, seed: 9, tool_choice: "required" },
    logger: quiet,
  } satisfies ReplayOptions;
  const seen: string[] = [];
  const looped = await replayGroups({
    ...base,
    maxTurns: 3,
    toolRunner: (calls, { state }) =>
      calls.map((c) => {
        seen.push(`${state.trajectoryId} ${c.function?.name}`);
        return { role: "tool" as const, tool_call_id: c.id, content: "7 left" };
      }),
  });
  expect(looped.groups[0]?.trajectories).toHaveLength(2);
  for (const t of looped.groups[0]?.trajectories ?? []) {
    const after = t.messages().slice(4);
    // Three answers (maxTurns), the tool runner's answers between them.
    expect(after.map((m) => m.role)).toEqual([
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(after[1]).toMatchObject({ role: "tool", content: "7 left" });
    expect(t.messages_and_choices.filter((m) => isChoice(m))).toHaveLength(3);
  }
  // Two tool rounds per sample; none after the last answer the loop allows.
  expect(seen).toHaveLength(4);
  expect(new Set(seen)).toEqual(new Set(["trj_tools check_stock"]));

  const once = await replayGroups(base);
  expect(once.groups[0]?.trajectories).toHaveLength(2);
  for (const t of once.groups[0]?.trajectories ?? []) {
    expect(
      t
        .messages()
        .slice(4)
        .map((m) => m.role),
    ).toEqual(["assistant"]);
    const last = t.messages().at(-1) as { tool_calls?: unknown[] };
    expect(last.tool_calls?.length).toBeGreaterThan(0);
  }
});

it("scores with the judge, which sees the whole group, and adds its score to the reward function's", async () => {
  record("trj_j", "apple", 0);
  const judge = await judgeServer();
  try {
    const judged = await replayGroups({
      store,
      model,
      n: 3,
      judge: { client: judge.client, model: "judge" },
      requestOptions: { max_tokens: 4, seed: 2 },
      logger: quiet,
    });
    expect(judged.states[0]?.rewards).toEqual([0.1, 0.5, 0.9]);
    // One request for the group, holding every sample's answer.
    expect(judge.requests).toHaveLength(1);
    const prompt = JSON.stringify(judge.requests[0]);
    for (const t of judged.groups[0]?.trajectories ?? [])
      expect(prompt).toContain(JSON.stringify(lastText(t)).slice(1, -1));
    const both = await replayGroups({
      store,
      model,
      n: 3,
      reward: () => 1,
      judge: { client: judge.client, model: "judge" },
      requestOptions: { max_tokens: 4, seed: 2 },
      logger: quiet,
    });
    expect(both.states[0]?.rewards).toEqual([1.1, 1.5, 1.9]);
    expect(both.groups[0]?.trajectories[0]?.metrics).toMatchObject({
      independent_reward: 1,
      ruler_score: 0.1,
    });
  } finally {
    await judge.close();
  }
});

it("refuses bad options before reading the store or sending anything, naming the field", async () => {
  record("trj_x", "apple", 0);
  let sampled = 0;
  const watched = Object.assign(Object.create(model), {
    openai: (...args: Parameters<TrainableModel["openai"]>) => {
      sampled++;
      return model.openai(...args);
    },
  });
  const bad = async (options: Record<string, unknown>) => {
    const error = await replayGroups({
      store,
      model: watched,
      reward: byLength,
      ...options,
    } as never).catch((e: unknown) => e);
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    return (error as Error).message;
  };
  expect(await bad({ n: 1 })).toMatch(/options\.n: expected a whole number of at least 2/);
  expect(await bad({ select: { limit: 0 } })).toMatch(
    /options\.select\.limit: expected a whole number/,
  );
  expect(await bad({ select: { negativeBelow: 0 } })).toMatch(/options\.select\.negativeBelow/);
  expect(await bad({ store: {} })).toMatch(/options\.store: expected a TrajectoryStore/);
  expect(await bad({ toolRunner: "yes" })).toMatch(/options\.toolRunner: expected a function/);
  expect(await bad({ reward: undefined })).toMatch(
    /options\.reward: expected a reward function, or options\.judge/,
  );
  // Nothing was asked of the model.
  expect(sampled).toBe(0);
});

/** An OpenAI-compatible judge on loopback: scores 0.1, 0.5, 0.9 for ids 1 to 3. */
async function judgeServer() {
  const requests: unknown[] = [];
  const server: Server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    requests.push(JSON.parse(body));
    const scores = [0.1, 0.5, 0.9].map((reward, i) => ({ id: i + 1, reward, explanation: "" }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "chatcmpl-judge",
        object: "chat.completion",
        created: 0,
        model: "judge",
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            logprobs: null,
            message: { role: "assistant", content: JSON.stringify({ scores }) },
          },
        ],
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "j", maxRetries: 0 });
  return { client, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

it("replays the ids it is given, in order, and counts and logs those it cannot", async () => {
  record("trj_one", "apple", 1);
  record("trj_two", "cat");
  store.addFeedback({ trajectory_id: "trj_two", eligible: false });
  const log = lines();
  const result = await replayGroups({
    store,
    model,
    n: 2,
    reward: (t) => Number(t.metadata.replay_sample),
    select: { ids: ["trj_one", "trj_nowhere", "trj_two"] },
    requestOptions: { max_tokens: 4 },
    logger: log.logger,
  });
  expect(result.states.map((s) => s.state.trajectoryId)).toEqual(["trj_one"]);
  expect(result.unusable).toBe(2);
  expect(log.out).toContain(
    "replayGroups: 2 of the ids in select.ids cannot be replayed (not in the store, outside since/until, without calls, or marked eligible: false): trj_nowhere, trj_two.",
  );
});
