import { readFileSync } from "node:fs";
import type OpenAI from "openai";
import { Trajectory, TrajectoryGroup, TrajectoryValidationError } from "trajectory-recorder";
import { History } from "trajectory-recorder/core";
import { isChoice, TrajectoryWireSchema } from "trajectory-recorder/wire";
import { describe, expect, it } from "vitest";

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/art/${name}`, import.meta.url), "utf8");

describe("Trajectory wire JSON", () => {
  it("round-trips ART's dump of a multi-turn tool-calling trajectory with nothing lost and ART's key order", () => {
    const text = fixture("trajectory-tool-calling.json");
    const t = Trajectory.fromJSON(text);
    // Same keys in the same order at every depth, same values.
    expect(JSON.stringify(t)).toBe(JSON.stringify(JSON.parse(text)));
    expect(t.toJSON()).toEqual(JSON.parse(text));
  });

  it("keeps logprobs, engine token ids and extra message keys on the Choices", () => {
    const t = Trajectory.fromJSON(fixture("trajectory-tool-calling.json"));
    const choices = t.messages_and_choices.filter(isChoice);
    expect(choices).toHaveLength(2);
    const first = choices[0] as unknown as Record<string, any>;
    expect(first.token_ids).toEqual([151657, 4913, 151658]);
    expect(first.prompt_token_ids).toEqual([151644, 8948, 198, 2610, 525]);
    expect(first.logprobs.content[1]).toMatchObject({ token: "token_id:4913", logprob: -0.25 });
    expect(first.message.reasoning_content).toBe("Two cities, two calls.");
    expect(first.message.tool_calls).toHaveLength(2);
    expect(t.additional_histories[0]).toBeInstanceOf(History);
    expect(t.additional_histories[0]?.messages()).toEqual([
      { role: "user", content: "Summarise: Paris sunny, Oslo rainy." },
      { role: "assistant", content: "Sunny Paris, rainy Oslo." },
    ]);
    expect(t).toMatchObject({ reward: 0.75, initial_policy_version: 3, final_policy_version: 4 });
    expect(t.metrics).toEqual({ turns: 2, tool_calls: 2, correct: true, duration: 1.834512 });
  });

  it("reads a compact dump (defaults omitted) with ART's defaults, keeping unknown keys and start_time", () => {
    const t = Trajectory.fromJSON(JSON.parse(fixture("trajectory-compact.json")));
    expect(t).toMatchObject({
      tools: null,
      additional_histories: [],
      initial_policy_version: null,
      final_policy_version: null,
      metrics: {},
      metadata: {},
      logs: [],
      reward: 1,
    });
    // Python isoformat: microseconds, no zone.
    expect(t.start_time.getFullYear()).toBe(2025);
    expect(t.start_time.getMilliseconds()).toBe(123);
    const out = t.toJSON() as Record<string, unknown>;
    expect(Object.keys(out)).toEqual([
      "messages_and_choices",
      "tools",
      "additional_histories",
      "reward",
      "initial_policy_version",
      "final_policy_version",
      "metrics",
      "metadata",
      "logs",
      "start_time",
      "future_field",
    ]);
    expect(out.start_time).toBe("2025-07-01T12:30:05.123456");
    expect(out.future_field).toEqual({ kept: true });
  });

  it("dumps a recorded Choice as ART does: openai-python's field order, optional fields as null, extras after", () => {
    const art = JSON.parse(fixture("trajectory-tool-calling.json"));
    const dumped = art.messages_and_choices.filter((m: object) => "message" in m);
    // The same Choices as a server or the JS SDK hands them over: other key
    // order, unset optional fields missing.
    const shuffle = (o: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(o).reverse()) as Record<string, any>;
    const recorded = dumped.map((c: Record<string, any>) => {
      const message = shuffle(c.message);
      for (const key of ["annotations", "audio", "function_call", "refusal"])
        if (message[key] === null) delete message[key];
      if (Array.isArray(message.tool_calls))
        message.tool_calls = message.tool_calls.map((tc: Record<string, any>) => ({
          ...shuffle(tc),
          function: shuffle(tc.function),
        }));
      const logprobs = c.logprobs && {
        content: c.logprobs.content.map((t: Record<string, any>) => ({
          ...shuffle(t),
          top_logprobs: t.top_logprobs.map(shuffle),
        })),
      };
      // Extra keys (vLLM's) keep their own order; the known ones come scrambled.
      const { finish_reason, index, logprobs: _, message: __, ...extras } = c;
      return { message, logprobs, index, finish_reason, ...extras };
    });
    const t = new Trajectory({ messages_and_choices: recorded });
    const out = t.toJSON().messages_and_choices.filter((m) => "message" in (m as object));
    expect(JSON.stringify(out)).toBe(JSON.stringify(dumped));
  });

  it("dumps a new trajectory with every field and ART's defaults, and never start_time", () => {
    const json = new Trajectory().toJSON();
    expect(JSON.stringify(json)).toBe(
      '{"messages_and_choices":[],"tools":null,"additional_histories":[],"reward":0,"initial_policy_version":null,"final_policy_version":null,"metrics":{},"metadata":{},"logs":[]}',
    );
    expect(TrajectoryWireSchema.parse({})).toEqual(json);
  });

  it("snapshots what it is given, so later mutation of the dump does not touch the trajectory", () => {
    const t = new Trajectory({ messages_and_choices: [{ role: "user", content: "hi" }] });
    const json = t.toJSON();
    (json.messages_and_choices[0] as { content: string }).content = "changed";
    expect(t.messages_and_choices[0]).toEqual({ role: "user", content: "hi" });
  });

  it("rejects bad JSON with the path of each bad field and what was expected", () => {
    const bad = {
      reward: "high",
      metrics: { turns: "three" },
      messages_and_choices: [{ role: "user" }, { role: "tool" }],
    };
    const error = (() => {
      try {
        Trajectory.fromJSON(bad);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(TrajectoryValidationError);
    const message = (error as Error).message;
    expect(message).toContain("reward: Invalid input: expected number, received string");
    expect(message).toContain("metrics.turns");
    // Within a message-or-Choice union, the closest branch is reported.
    expect(message).toContain(
      "messages_and_choices[1].tool_call_id: Invalid input: expected string, received undefined",
    );
    expect(message).not.toContain("messages_and_choices[0]");
    expect(() => Trajectory.fromJSON({ messages_and_choices: [{ role: "wizard" }] })).toThrow(
      /messages_and_choices\[0\]\.role: Invalid discriminator value/,
    );
  });
});

describe("Trajectory helpers", () => {
  it("accepts the openai SDK's own message params, Choices and tools as they are", () => {
    const choice: OpenAI.Chat.Completions.ChatCompletion.Choice = {
      finish_reason: "stop",
      index: 0,
      logprobs: null,
      message: { role: "assistant", content: "hi", refusal: null },
    };
    const sent: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: "hello" },
    ];
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      { type: "function", function: { name: "f", parameters: { type: "object" } } },
    ];
    const t = new Trajectory({ messages_and_choices: [...sent, choice], tools });
    expect(Trajectory.fromJSON(JSON.parse(JSON.stringify(t))).toJSON()).toEqual(t.toJSON());
  });

  it("messages() turns Choices into plain assistant messages as ART does", () => {
    const t = Trajectory.fromJSON(fixture("trajectory-tool-calling.json"));
    const messages = t.messages() as unknown as Record<string, unknown>[];
    expect(messages).toHaveLength(6);
    expect(messages[2]).toEqual({
      role: "assistant",
      content: "",
      tool_calls: [
        {
          id: "chatcmpl-tool-1",
          function: { arguments: '{"city": "Paris"}', name: "get_weather" },
          type: "function",
        },
        {
          id: "chatcmpl-tool-2",
          function: { arguments: '{"city": "Oslo"}', name: "get_weather" },
          type: "function",
        },
      ],
    });
    // An empty tool_calls list is left out; the reasoning is dropped.
    expect(messages[5]).toEqual({
      role: "assistant",
      content: "Paris is sunny (21°C); Oslo is rainy (9°C).",
    });
    expect(messages[3]).toEqual({
      role: "tool",
      tool_call_id: "chatcmpl-tool-1",
      content: '{"temp": 21, "sky": "sunny"}',
    });
    expect(
      new Trajectory({ messages_and_choices: [{ role: "assistant", content: null }] }).messages(),
    ).toEqual([{ role: "assistant", content: "" }]);
  });

  it("log() appends to logs and finish() records the duration in seconds", () => {
    const t = new Trajectory({ start_time: new Date("2026-01-01T00:00:00Z") });
    t.log("first");
    t.log("second");
    t.finish(new Date("2026-01-01T00:00:02.5Z"));
    expect(t.logs).toEqual(["first", "second"]);
    expect(t.metrics.duration).toBe(2.5);
  });
});

describe("TrajectoryGroup wire JSON", () => {
  it("round-trips ART's dump of a group with a failed rollout", () => {
    const text = fixture("group-with-exception.json");
    const group = TrajectoryGroup.fromJSON(text);
    expect(JSON.stringify(group)).toBe(JSON.stringify(JSON.parse(text)));
    expect(group.trajectories).toHaveLength(2);
    expect(group.trajectories[0]).toBeInstanceOf(Trajectory);
    expect(group.exceptions[0]).toMatchObject({
      type: "<class 'httpx.ReadTimeout'>",
      message: "timed out",
    });
    expect(group.metadata).toEqual({ scenario_id: "weather-17" });
  });

  it("names the trajectory and field at fault", () => {
    expect(() => TrajectoryGroup.fromJSON({ trajectories: [{}, { reward: null }] })).toThrow(
      /trajectories\[1\]\.reward/,
    );
    expect(() => TrajectoryGroup.fromJSON({ trajectories: "none" })).toThrow(
      "The trajectory group is not valid ART JSON: trajectories: Invalid input: expected array, received string.",
    );
  });

  it("records errors found among its items as exceptions, the way ART does", () => {
    class ToolTimeout extends Error {
      override name = "ToolTimeout";
    }
    const group = new TrajectoryGroup(
      [new Trajectory({ reward: 1 }), new ToolTimeout("search took 30 s")],
      {
        metadata: { scenario: "s1" },
        exceptions: [{ type: "<class 'ValueError'>", message: "bad", traceback: "" }],
      },
    );
    expect(group.trajectories).toHaveLength(1);
    expect(group.exceptions).toEqual([
      {
        type: "<class 'ToolTimeout'>",
        message: "search took 30 s",
        traceback: expect.stringContaining("ToolTimeout"),
      },
      { type: "<class 'ValueError'>", message: "bad", traceback: "" },
    ]);
    expect(Object.keys(group.toJSON())).toEqual([
      "trajectories",
      "exceptions",
      "metadata",
      "metrics",
      "logs",
    ]);
  });
});
