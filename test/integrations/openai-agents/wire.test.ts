// Agents written as the Agents SDK's docs write them (handoffs, agents as
// tools, parallel tools, tools returning output items, streamed runs),
// against a server that answers like vLLM and logs every request: each
// recorded history equals the requests on the wire, message for message, and
// only the policy's turns are trainable Choices.
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { Recorder, type Trajectory, validateTrajectory } from "trajectory-recorder";
import { attachRecorder, recordingRunner } from "trajectory-recorder/openai-agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Exchange,
  startVllmServer,
  type VllmServer,
  wireMismatches,
} from "../../helpers/vllm-server.js";
import { runToEnd } from "./helpers.js";

setTracingDisabled(true);

const POLICY = "policy-m";
const OTHER = "other-m";

type Json = Record<string, any>;

/** The rollout's marker (`<m7>`), carried by every request the rollout makes. */
function markerOf(body: Json): string {
  const text = JSON.stringify(body.messages);
  return /<m\d+>/.exec(text)?.[0] ?? "<none>";
}

/** The scripted model: each agent's turn, chosen by its instructions. */
function respond(body: Json) {
  const messages = body.messages as Json[];
  const system = String(messages[0]?.content ?? "");
  const last = messages.at(-1) as Json;
  const marker = markerOf(body);
  const afterTool = last.role === "tool";
  const toolNames = ((body.tools ?? []) as Json[]).map((t) => t.function.name as string);
  if (system.startsWith("Triage")) {
    const transfer = toolNames.find((n) => n.startsWith("transfer_to"));
    return { tool_calls: [{ name: transfer as string, arguments: {} }] };
  }
  if (system.startsWith("Weather")) {
    // The handoff's own tool result comes first; the weather tool's follows.
    if (afterTool && String(last.content).startsWith("sunny"))
      return { content: `It is ${last.content}` };
    return { tool_calls: [{ name: "weather", arguments: { city: marker } }] };
  }
  if (system.startsWith("Manager")) {
    if (afterTool) return { content: `manager says ${last.content}` };
    return { tool_calls: [{ name: "ask_expert", arguments: { input: `look up ${marker}` } }] };
  }
  if (system.startsWith("Expert")) {
    if (afterTool) return { content: `expert found ${last.content}` };
    return { tool_calls: [{ name: "lookup", arguments: { city: marker } }] };
  }
  if (system.startsWith("Parallel")) {
    if (afterTool) return { content: "both done" };
    return {
      tool_calls: [
        { name: "slow", arguments: { city: marker } },
        { name: "fast", arguments: { city: marker } },
      ],
    };
  }
  if (system.startsWith("Items")) {
    if (afterTool) return { content: "seen" };
    return {
      tool_calls: toolNames.map((name) => ({ name, arguments: { city: marker } })),
    };
  }
  return { content: "?" };
}

let server: VllmServer;
let recorder: Recorder;
let client: OpenAI;
beforeAll(async () => {
  server = await startVllmServer({ respond });
  recorder = new Recorder({ policy: [POLICY] });
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "k", maxRetries: 0 });
});
afterAll(() => server.close());

let markers = 0;
const nextMarker = () => `<m${++markers}>`;

const CITY = {
  type: "object" as const,
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false as const,
};

function cityTool(name: string, execute: (city: string) => unknown) {
  return tool({
    name,
    description: `The ${name} tool.`,
    parameters: CITY,
    strict: true,
    execute: async (args) => execute((args as { city: string }).city) as never,
  });
}

function weatherAgent(model = POLICY) {
  return new Agent({
    name: "Weather agent",
    instructions: "Weather agent: you tell the weather.",
    model,
    tools: [cityTool("weather", (city) => `sunny in ${city}`)],
  });
}

function triageAgent(weather: Agent) {
  return new Agent({
    name: "Triage agent",
    instructions: "Triage agent: hand the user to the right agent.",
    model: POLICY,
    handoffs: [weather],
  });
}

function managerAgent() {
  const expert = new Agent({
    name: "Expert",
    instructions: "Expert: look things up.",
    model: POLICY,
    tools: [cityTool("lookup", (city) => `records of ${city}`)],
  });
  const manager = new Agent({
    name: "Manager",
    instructions: "Manager: ask the expert.",
    model: POLICY,
    tools: [expert.asTool({ toolName: "ask_expert", toolDescription: "Ask the expert." })],
  });
  // As the docs' hooks examples do: every agent hooked.
  attachRecorder(manager);
  attachRecorder(expert);
  return manager;
}

const exchangesOf = (marker: string): Exchange[] =>
  server.exchanges.filter((x) => markerOf(x.body) === marker);

const isPolicy = (m: string) => m === POLICY;

/** The roles of a history's items, Choices as "choice". */
const shape = (items: readonly unknown[]) =>
  (items as Json[]).map((m) => (m.message ? "choice" : (m.role as string)));

function expectWireExact(t: Trajectory, marker: string) {
  expect(wireMismatches(t, exchangesOf(marker), isPolicy)).toEqual([]);
  // Every tool message answers a call of its own history; every Choice is trainable.
  expect(validateTrajectory(t)).toEqual([]);
}

describe("handoffs", () => {
  for (const stream of [false, true]) {
    it(`records each agent's conversation in its own history, the tool result where its call was made (stream: ${stream})`, async () => {
      const runner = recordingRunner({ client, recorder });
      const marker = nextMarker();
      let output: unknown;
      const t = await recorder.rollout(async () => {
        output = await runToEnd(runner, triageAgent(weatherAgent()), `weather ${marker}`, stream);
      });
      expect(output).toBe(`It is sunny in ${marker}`);
      expectWireExact(t, marker);
      expect(shape(t.messages_and_choices)).toEqual(["system", "user", "choice"]);
      expect(t.additional_histories).toHaveLength(1);
      const weather = t.additional_histories[0]!.messages_and_choices as Json[];
      expect(shape(weather)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "choice",
        "tool",
        "choice",
      ]);
      expect(weather[5]!.content).toBe(`sunny in ${marker}`);
    });
  }

  it("keeps only the policy's turns trainable when the agents run on two models", async () => {
    const runner = recordingRunner({ client, recorder });
    const marker = nextMarker();
    const t = await recorder.rollout(() =>
      runner.run(triageAgent(weatherAgent(OTHER)), `weather ${marker}`),
    );
    expectWireExact(t, marker);
    const weather = t.additional_histories[0]!.messages_and_choices as Json[];
    // The weather agent's turns are context: plain assistant messages.
    expect(weather.filter((m) => m.message)).toEqual([]);
    expect(shape(weather).filter((r) => r === "assistant")).toHaveLength(3);
    expect(t.messages_and_choices.filter((m: Json) => m.message)).toHaveLength(1);
    expect(t.logs.filter((l) => l.includes(`"${OTHER}" is not the policy`))).toHaveLength(1);
  });
});

describe("agents as tools", () => {
  it("records the expert's history apart and keeps the manager's conversation whole", async () => {
    const runner = recordingRunner({ client, recorder });
    const marker = nextMarker();
    let output: unknown;
    const t = await recorder.rollout(async () => {
      output = (await runner.run(managerAgent(), `question ${marker}`)).finalOutput;
    });
    expect(output).toBe(`manager says expert found records of ${marker}`);
    expectWireExact(t, marker);
    expect(shape(t.messages_and_choices)).toEqual(["system", "user", "choice", "tool", "choice"]);
    expect(t.additional_histories).toHaveLength(1);
    const expert = t.additional_histories[0]!.messages_and_choices as Json[];
    expect(shape(expert)).toEqual(["system", "user", "choice", "tool", "choice"]);
  });

  it("keeps 50 concurrent rollouts apart", async () => {
    const runner = recordingRunner({ client, recorder });
    const runs = Array.from({ length: 50 }, () => nextMarker());
    const trajectories = await Promise.all(
      runs.map((marker) =>
        recorder.rollout(() => runner.run(managerAgent(), `question ${marker}`)),
      ),
    );
    trajectories.forEach((t, i) => {
      const marker = runs[i] as string;
      expectWireExact(t, marker);
      expect(shape(t.messages_and_choices)).toEqual(["system", "user", "choice", "tool", "choice"]);
      expect(
        JSON.stringify(t)
          .match(/<m\d+>/g)
          ?.every((m) => m === marker),
      ).toBe(true);
    });
  });
});

describe("parallel tools", () => {
  it("records results in the order the next request sends them when the fast tool finishes first", async () => {
    let fastDone: () => void = () => {};
    const fastFinished = new Promise<void>((resolve) => (fastDone = resolve));
    const finished: string[] = [];
    const agent = new Agent({
      name: "Parallel",
      instructions: "Parallel: call both tools.",
      model: POLICY,
      tools: [
        // The slow tool ends only after the fast one: out of call order, every time.
        cityTool("slow", async (city) => {
          await fastFinished;
          finished.push("slow");
          return `slow ${city}`;
        }),
        cityTool("fast", (city) => {
          finished.push("fast");
          fastDone();
          return `fast ${city}`;
        }),
      ],
    });
    const runner = recordingRunner({ client, recorder });
    const marker = nextMarker();
    const t = await recorder.rollout(() => runner.run(agent, `go ${marker}`));
    expect(finished).toEqual(["fast", "slow"]);
    expectWireExact(t, marker);
    expect(t.additional_histories).toHaveLength(0);
    const mc = t.messages_and_choices as Json[];
    expect(shape(mc)).toEqual(["system", "user", "choice", "tool", "tool", "choice"]);
    expect([mc[3]!.content, mc[4]!.content]).toEqual([`slow ${marker}`, `fast ${marker}`]);
  });
});

describe("tools returning output items", () => {
  function itemsAgent(stopAtTool: boolean) {
    return new Agent({
      name: "Items",
      instructions: "Items: use the tools.",
      model: POLICY,
      tools: [
        cityTool("text_item", (city) => ({ type: "text", text: `sunny in ${city}` })),
        cityTool("image_item", () => ({
          type: "image",
          image: "data:image/png;base64,iVBORw0KGgo=",
        })),
      ],
      ...(stopAtTool ? { toolUseBehavior: "stop_on_first_tool" as const } : {}),
    });
  }

  it("records the text the next request carried, and the SDK's placeholder for an image", async () => {
    const runner = recordingRunner({ client, recorder });
    const marker = nextMarker();
    const t = await recorder.rollout(() => runner.run(itemsAgent(false), `go ${marker}`));
    expectWireExact(t, marker);
    const mc = t.messages_and_choices as Json[];
    expect(shape(mc)).toEqual(["system", "user", "choice", "tool", "tool", "choice"]);
    expect([mc[3]!.content, mc[4]!.content]).toEqual([
      `sunny in ${marker}`,
      "[tool output omitted]",
    ]);
  });

  it("records a last step's output items as Chat Completions would send them, not as JSON", async () => {
    const runner = recordingRunner({ client, recorder });
    const marker = nextMarker();
    const t = await recorder.rollout(() => runner.run(itemsAgent(true), `go ${marker}`));
    expectWireExact(t, marker);
    const mc = t.messages_and_choices as Json[];
    expect(shape(mc)).toEqual(["system", "user", "choice", "tool", "tool"]);
    const calls = mc[2]!.message.tool_calls as Json[];
    // In call order, each answering its call.
    expect(mc.slice(3).map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect([mc[3]!.content, mc[4]!.content]).toEqual([
      `sunny in ${marker}`,
      "[tool output omitted]",
    ]);
  });
});
