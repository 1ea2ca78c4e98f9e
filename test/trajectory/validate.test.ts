// The check before training rejects each corrupt shape issue #12 found, by
// path, and train / log / the shipper run it before anything is sent.
import {
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryCheckError,
  TrajectoryGroup,
  TrajectoryShipper,
  TrajectoryValidationError,
  validateGroup,
  validateTrajectory,
} from "trajectory-recorder";
import { History } from "trajectory-recorder/core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { KEY, start } from "../emulator/helpers.js";

/** A trainable Choice as a vLLM server returns it through the recorder. */
function choice(content: string | null, calls: string[] = [], extra: object = {}) {
  return {
    index: 0,
    finish_reason: calls.length ? "tool_calls" : "stop",
    logprobs: { content: [{ token: "token_id:5", logprob: -0.1, bytes: null, top_logprobs: [] }] },
    token_ids: [5],
    prompt_token_ids: [1, 2],
    message: {
      role: "assistant" as const,
      content,
      ...(calls.length
        ? {
            tool_calls: calls.map((id) => ({
              id,
              type: "function",
              function: { name: "f", arguments: "{}" },
            })),
          }
        : {}),
    },
    ...extra,
  };
}

const user = { role: "user", content: "go" };
const tool = (id: string, content = "ok") => ({ role: "tool", tool_call_id: id, content });

function problemAt(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TrajectoryCheckError);
    expect(error).toBeInstanceOf(TrajectoryValidationError);
    return (error as TrajectoryCheckError).problems;
  }
  throw new Error("the check passed");
}

describe("validateTrajectory", () => {
  it("accepts a well-formed recorded trajectory", () => {
    const t = new Trajectory({
      messages_and_choices: [
        user,
        choice(null, ["c1", "c2"]),
        tool("c1"),
        tool("c2"),
        // Its prompt extends the first turn's prompt and sampled token.
        choice("done", [], { prompt_token_ids: [1, 2, 5, 3, 4] }),
      ],
      metadata: { task: "t1", attempt: 2, ok: true, note: null },
    });
    expect(validateTrajectory(t)).toEqual([]);
    expect(validateTrajectory(JSON.stringify(t))).toEqual([]);
  });

  it("rejects a tool result appended to main after a handoff Choice that issued no such call", () => {
    // The Agents SDK handoff shape: the second agent's tool result landed in main.
    const t = new Trajectory({
      messages_and_choices: [user, choice(null, ["transfer"]), tool("expert_call")],
      additional_histories: [
        new History({ messages_and_choices: [user, choice(null, ["expert_call"])] }),
      ],
    });
    const problems = problemAt(() => validateTrajectory(t));
    expect(problems).toEqual([
      {
        path: "messages_and_choices[2].tool_call_id",
        message: expect.stringMatching(
          /answers call "expert_call", which no earlier assistant turn of this history issued/,
        ),
      },
    ]);
  });

  it("rejects a tool result recorded before the turn that issued its call (finish order, not call order)", () => {
    const t = new Trajectory({
      messages_and_choices: [user, tool("c1"), choice(null, ["c1"])],
    });
    expect(problemAt(() => validateTrajectory(t)).map((p) => p.path)).toEqual([
      "messages_and_choices[1].tool_call_id",
    ]);
  });

  it("rejects a call answered twice (a result recorded and also carried by the next request)", () => {
    const t = new Trajectory({
      messages_and_choices: [
        user,
        choice(null, ["c1"]),
        tool("c1", '{"type":"text"}'),
        tool("c1", "text"),
      ],
    });
    expect(problemAt(() => validateTrajectory(t))[0]).toMatchObject({
      path: "messages_and_choices[3].tool_call_id",
      message: "call c1 is answered a second time",
    });
  });

  it("checks each additional history on its own", () => {
    const t = new Trajectory({
      messages_and_choices: [user, choice(null, ["c1"])],
      additional_histories: [new History({ messages_and_choices: [user, tool("c1")] })],
    });
    expect(problemAt(() => validateTrajectory(t))[0]!.path).toBe(
      "additional_histories[0].messages_and_choices[1].tool_call_id",
    );
  });

  it("rejects a Choice without logprobs or token ids unless allowed", () => {
    const t = new Trajectory({
      messages_and_choices: [user, choice("a", [], { logprobs: null, token_ids: undefined })],
    });
    expect(problemAt(() => validateTrajectory(t)).map((p) => p.path)).toEqual([
      "messages_and_choices[1].logprobs",
      "messages_and_choices[1].token_ids",
    ]);
    expect(
      validateTrajectory(t, { allowMissingLogprobs: true, allowMissingTokenIds: true }),
    ).toEqual([]);
  });

  it("rejects nested metadata, which the service answers with 422", () => {
    const t = new Trajectory({
      messages_and_choices: [user, choice("a")],
      metadata: { run: { id: 1 }, tags: ["x"], ok: 1 },
    });
    const problems = problemAt(() => validateTrajectory(t));
    expect(problems.map((p) => p.path)).toEqual(["metadata.run", "metadata.tags"]);
    expect(problems[0]!.message).toMatch(/number, string, boolean or null/);
  });

  it("rejects a finish_reason outside the schema's values", () => {
    const t = new Trajectory({
      messages_and_choices: [
        user,
        choice("a", [], { finish_reason: "eos" }),
        user,
        choice("b", [], { finish_reason: null, prompt_token_ids: [1, 2, 5, 3] }),
      ],
    });
    const problems = problemAt(() => validateTrajectory(t));
    expect(problems.map((p) => p.path)).toEqual([
      "messages_and_choices[1].finish_reason",
      "messages_and_choices[3].finish_reason",
    ]);
    expect(problems[0]!.message).toMatch(/stop, length, tool_calls, content_filter, function_call/);
  });

  it("warns instead of throwing in warn mode", () => {
    const lines: string[] = [];
    const t = new Trajectory({ messages_and_choices: [user, tool("x")] });
    const problems = validateTrajectory(t, {
      mode: "warn",
      logger: { warn: (m) => lines.push(m) },
    });
    expect(problems).toHaveLength(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/messages_and_choices\[1\]\.tool_call_id/);
  });
});

describe("validateGroup", () => {
  it("refuses a group with no trainable Choice, naming the likely causes", () => {
    // What an unwrapped client gives: plain messages only.
    const group = new TrajectoryGroup([
      new Trajectory({
        messages_and_choices: [user, { role: "assistant", content: "a" }],
        reward: 1,
      }),
      new Trajectory({ messages_and_choices: [user, { role: "assistant", content: "b" }] }),
    ]);
    const problems = problemAt(() => validateGroup(group));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(/no trajectory holds a trainable Choice/);
    expect(problems[0]!.message).toMatch(/not wrapped/);
    expect(problems[0]!.message).toMatch(/outside recorder\.rollout/);
    expect(problems[0]!.message).toMatch(/not the recorder's policy/);
  });

  it("names bad trajectories by index, and drop mode lists them instead of throwing", () => {
    const good = new Trajectory({ messages_and_choices: [user, choice("a")] });
    const bad = new Trajectory({ messages_and_choices: [user, tool("x")] });
    const group = new TrajectoryGroup([good, bad, good]);
    expect(problemAt(() => validateGroup(group))[0]!.path).toBe(
      "trajectories[1].messages_and_choices[1].tool_call_id",
    );
    const r = validateGroup(group.toJSON(), { mode: "drop" });
    expect(r.badTrajectories).toEqual([1]);
    expect(r.refused).toBe(false);
  });
});

describe("before sending", () => {
  let emu: Emulator;
  let model: TrainableModel;
  const sent: string[] = [];
  beforeAll(async () => {
    emu = await start();
    const client = new TrainingClient({
      apiKey: KEY,
      baseURL: emu.url,
      maxRetries: 0,
      fetch: (url, init) => {
        sent.push(`${init?.method ?? "GET"} ${String(url)}`);
        return fetch(url, init);
      },
    });
    model = await TrainableModel.register(client, {
      project: "v",
      name: "checked",
      baseModel: "toy",
    });
  });
  afterAll(() => emu.close());

  const empty = () =>
    new TrajectoryGroup([
      new Trajectory({
        messages_and_choices: [user, { role: "assistant", content: "a" }],
        reward: 1,
      }),
      new Trajectory({ messages_and_choices: [user, { role: "assistant", content: "b" }] }),
    ]);

  it("train and log refuse a group with nothing trainable when asked to throw, before any request", async () => {
    const before = sent.length;
    await expect(model.train([empty()], undefined, { validate: "throw" })).rejects.toThrow(
      /^train: trajectory group failed the check before training: groups\[0\]: no trajectory holds a trainable Choice/,
    );
    await expect(model.log([empty()], { validate: "throw" })).rejects.toBeInstanceOf(
      TrajectoryCheckError,
    );
    // Nothing reached the service.
    expect(sent.slice(before)).toEqual([]);
    expect(await model.getStep()).toBe(0);
  });

  it("by default, log warns once per finding on the console and still sends", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const before = sent.length;
      const g = empty();
      await expect(model.log([g])).resolves.toBeUndefined();
      await expect(model.log([g])).resolves.toBeUndefined();
      expect(sent.slice(before).filter((r) => r.includes("/log"))).toHaveLength(2);
      const lines = warn.mock.calls.map((c) => String(c[0]));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^log: 1 group holds no trainable Choice \(was the openai client wrapped, and called inside recorder\.rollout\(\)\?\), first groups\[0\]; validateGroup\(\) .* lists them \(said once per process; validate: "throw" refuses such groups\)\.$/,
      );
    } finally {
      warn.mockRestore();
    }
  });

  it("in drop mode, log sends the groups that pass and refuses to send none", async () => {
    const lines: string[] = [];
    const validate = { mode: "drop" as const, logger: { warn: (m: string) => lines.push(m) } };
    const before = sent.length;
    await expect(model.log([empty()], { validate })).rejects.toBeInstanceOf(TrajectoryCheckError);
    expect(sent.slice(before)).toEqual([]);
    const good = new TrajectoryGroup([
      new Trajectory({ messages_and_choices: [user, choice("a")], reward: 1 }),
      new Trajectory({ messages_and_choices: [user, tool("x")], reward: 0 }),
      new Trajectory({ messages_and_choices: [user, choice("b")], reward: 0 }),
    ]);
    await model.log([good, empty()], { validate });
    expect(sent.slice(before).filter((r) => r.includes("/log"))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/^log: left out 3 trajectories \(1 whole groups\)/);
    expect(lines.at(-1)).toMatch(
      /groups\[0\]\.trajectories\[1\]\.messages_and_choices\[1\]\.tool_call_id/,
    );
  });

  it("the shipper's add rejects a group, or drops and counts it, as configured", async () => {
    const before = sent.length;
    const lines: string[] = [];
    const logger = { warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
    const throwing = new TrajectoryShipper({
      model,
      flushOnExit: false,
      logger,
      validate: "throw",
    });
    await expect(throwing.add(empty())).rejects.toBeInstanceOf(TrajectoryCheckError);
    expect(throwing.stats().queued).toBe(0);
    await throwing.close();

    const dropping = new TrajectoryShipper({ model, flushOnExit: false, logger, validate: "drop" });
    await dropping.add(empty());
    expect(dropping.stats().queued).toBe(0);
    expect(lines.at(-1)).toMatch(/left out 2 trajectories \(1 whole groups\)/);
    await dropping.close();
    expect(sent.slice(before).filter((r) => r.includes("/log"))).toEqual([]);
  });

  // Last in this block: their default warnings would use up the once-per-process
  // console line the log test above expects.
  it("by default, train refuses groups none of which holds a trainable Choice, naming the likely causes, and sends nothing", async () => {
    const before = sent.length;
    // Plain messages (calls made outside the rollout) and a Choice the SDK
    // returned without logprobs (an unwrapped client).
    const unwrapped = new TrajectoryGroup([
      new Trajectory({ messages_and_choices: [user, choice("a", [], { logprobs: null })] }),
    ]);
    const error = await model.train([empty(), unwrapped]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrajectoryCheckError);
    const message = (error as Error).message;
    expect(message).toMatch(
      /^train: trajectory group failed the check before training: groups: none of the 2 group\(s\) holds a trainable Choice/,
    );
    expect(message).toContain("the openai client was not wrapped");
    expect(message).toContain("the calls were made outside recorder.rollout()");
    expect(message).toContain("the model that answered is not the recorder's policy");
    // The other findings are listed too, by path.
    expect(message).toContain("groups[1].trajectories[0].messages_and_choices[1].logprobs");
    expect(sent.slice(before)).toEqual([]);
    expect(await model.getStep()).toBe(0);
  });

  it('validate: "warn" lets untrainable groups through to a training job', async () => {
    const lines: string[] = [];
    const before = sent.length;
    await model
      .train([empty()], undefined, {
        pollIntervalMs: 10,
        validate: { mode: "warn", logger: { warn: (m) => lines.push(m) } },
      })
      .catch(() => undefined);
    expect(
      sent.slice(before).filter((r) => r.startsWith("POST") && r.includes("/training-jobs")),
    ).toHaveLength(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^train: 1 group holds no trainable Choice .*, first groups\[0\];/);
  });

  it("by default, only a job with nothing at all to learn from is refused; other findings warn", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const before = sent.length;
      // One trainable group (its Choices lack vLLM token ids) beside an empty one.
      const noTokenIds = { token_ids: undefined, prompt_token_ids: undefined };
      const some = new TrajectoryGroup([
        new Trajectory({ messages_and_choices: [user, choice("a", [], noTokenIds)], reward: 1 }),
        new Trajectory({ messages_and_choices: [user, choice("b", [], noTokenIds)], reward: 0 }),
      ]);
      await model.train([some, empty()], undefined, { pollIntervalMs: 10 }).catch(() => undefined);
      const posts = sent.slice(before).filter((r) => r.startsWith("POST"));
      expect(posts.filter((r) => r.includes("/training-jobs"))).toHaveLength(1);
      expect(warn.mock.calls.map((c) => String(c[0])).join("\n")).toMatch(/token_ids/);
    } finally {
      warn.mockRestore();
    }
  });

  it("the shipper's trainEvery refuses by default to start a job on groups with nothing to learn from", async () => {
    const before = sent.length;
    const errors: string[] = [];
    const logger = { warn: () => {}, error: (m: string) => errors.push(m) };
    const shipper = new TrajectoryShipper({
      model,
      flushOnExit: false,
      logger,
      trainEvery: { groups: 1, pollIntervalMs: 10 },
    });
    await shipper.add(empty());
    const stats = await shipper.close();
    expect(stats).toMatchObject({ trainingJobs: 0, trainingFailed: 1 });
    expect(sent.slice(before).filter((r) => r.includes("/training-jobs"))).toEqual([]);
    expect(errors.join("\n")).toMatch(/could not be started \(train: .*holds a trainable Choice/);
    expect(errors.join("\n")).toContain("the openai client was not wrapped");

    // Asked to warn, the shipper trains them anyway.
    const warning = new TrajectoryShipper({
      model,
      flushOnExit: false,
      logger,
      validate: "warn",
      trainEvery: { groups: 1, pollIntervalMs: 10 },
    });
    const mid = sent.length;
    await warning.add(empty());
    await warning.close();
    expect(
      sent.slice(mid).filter((r) => r.startsWith("POST") && r.includes("/training-jobs")),
    ).toHaveLength(1);
  });
});

describe("validateTrajectory's result", () => {
  it("is { problems } as validateGroup's, and until 0.3 still the array of problems", () => {
    const t = new Trajectory({
      messages_and_choices: [{ role: "tool", tool_call_id: "nope", content: "x" } as never],
    });
    const result = validateTrajectory(t, { mode: "warn", logger: { warn: () => {} } });
    expect(result.problems.length).toBeGreaterThan(0);
    expect(result.problems[0]?.path).toContain("messages_and_choices");
    // The 0.1 shape: the problems themselves, indexable and iterable.
    expect([...result]).toEqual(result.problems);
    expect(result.length).toBe(result.problems.length);
    // `problems` is not enumerable: not written as JSON, not compared.
    expect(JSON.parse(JSON.stringify(result))).toEqual(JSON.parse(JSON.stringify(result.problems)));
    expect(Object.keys(result)).not.toContain("problems");
    expect(
      validateGroup(new TrajectoryGroup({ trajectories: [t] }), {
        mode: "warn",
        logger: { warn: () => {} },
      }).problems,
    ).toEqual(result.problems.map((p) => ({ ...p, path: `trajectories[0].${p.path}` })));
  });
});
