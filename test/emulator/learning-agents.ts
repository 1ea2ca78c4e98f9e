// Agents written the ways users write them (plain `openai` calls through
// `model.openai({ recorder })`, the recorder's defaults), trained on the
// emulator step by step. Shared by the learning tests and by
// `scripts/emulator-learning.ts`, which measures them over many seeds.
import type OpenAI from "openai";
import {
  gatherTrajectoryGroups,
  Recorder,
  TrainableModel,
  TrainingClient,
  type Trajectory,
  TrajectoryGroup,
} from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";

type Messages = OpenAI.Chat.Completions.ChatCompletionMessageParam[];
type Tool = OpenAI.Chat.Completions.ChatCompletionTool;

const FRUITS = ["apple", "banana", "cherry", "grape"] as const;
const COLOURS = ["red", "green", "blue", "yellow"] as const;

/** What one scenario asks and what the world holds in it. */
interface Scenario {
  fruit: string;
  /** The colour of each fruit in this scenario (it changes between scenarios). */
  colours: Record<string, string>;
  /** For the pick-a-tool shapes: the tool that answers this question. */
  tool?: string;
}

interface Outcome {
  reward: number;
  tool: string | undefined;
  /** Look-up shapes: whether the right tool was called for the fruit asked about. */
  rightTool?: boolean;
  /** Look-up shapes: how many words the final answer has (0 without one). */
  answerWords?: number;
}

/** One agent shape: its tools, how a rollout runs, and its reward. */
export interface Shape {
  name: string;
  description: string;
  /** A scenario for step `step`, index `i` of the step, from a seeded draw. */
  scenario: (draw: () => number, i: number) => Scenario;
  /** Runs one rollout; returns its reward and the first tool it called. */
  rollout: (openai: OpenAI, s: Scenario, seed: number, env: RolloutEnv) => Promise<Outcome>;
}

/** What a rollout may need beyond the recorded client: a framework records with these. */
export interface RolloutEnv {
  /** The model's client without recording (a framework plugin records it). */
  client: OpenAI;
  recorder: Recorder;
  /** The `model` string of the model's latest checkpoint. */
  modelName: string;
}

function fn(name: string, description: string, properties: Record<string, unknown>): Tool {
  return {
    type: "function",
    function: {
      name,
      description,
      parameters: { type: "object", properties, required: Object.keys(properties) },
    },
  };
}

const LOOKUP = fn("lookup", "Look up today's colour of a fruit.", {
  fruit: { type: "string", description: "the fruit" },
});
const SUBMIT = fn("submit", "Submit the final answer.", {
  answer: { type: "string", description: "the answer" },
});
const SYSTEM =
  "You answer questions about fruit. Look the fruit up with the lookup tool, then give the colour it returned.";

function randomWorld(draw: () => number): Record<string, string> {
  const colours: Record<string, string> = {};
  for (const f of FRUITS) colours[f] = COLOURS[Math.floor(draw() * COLOURS.length)] as string;
  return colours;
}

function argsOf(call: OpenAI.Chat.Completions.ChatCompletionMessageToolCall): Record<string, any> {
  if (call.type !== "function") return {};
  try {
    return JSON.parse(call.function.arguments) as Record<string, any>;
  } catch {
    return {};
  }
}

/**
 * Look a fact up, then answer with it: up to four turns; the answer is the
 * `submit` tool's argument (or, unforced, a plain reply); reward 1 when it
 * holds today's colour of the fruit asked about, else 0.
 */
function lookupThenAnswer(forced: boolean): Shape {
  return {
    name: forced ? "lookup-answer-forced" : "lookup-answer",
    description: `two tools (lookup, submit), system prompt, up to 4 turns, tool_choice ${forced ? '"required"' : "auto"}`,
    scenario: (draw, i) => ({
      fruit: FRUITS[i % FRUITS.length] as string,
      colours: randomWorld(draw),
    }),
    rollout: async (openai, s, seed) => {
      let first: string | undefined;
      const end = (reward: number) => ({ reward, tool: first });
      const messages: Messages = [
        { role: "system", content: SYSTEM },
        { role: "user", content: `what colour is the ${s.fruit} today` },
      ];
      for (let turn = 0; turn < 4; turn++) {
        const res = await openai.chat.completions.create({
          model: "",
          messages,
          tools: [LOOKUP, SUBMIT],
          ...(forced ? { tool_choice: "required" as const } : {}),
          max_tokens: 4,
          seed: seed * 10 + turn,
        });
        const message = res.choices[0]!.message;
        messages.push(message);
        const calls = message.tool_calls ?? [];
        if (calls.length === 0) return end(said(message.content, s) ? 1 : 0);
        for (const call of calls) {
          const args = argsOf(call);
          if (call.type === "function") first ??= call.function.name;
          if (call.type === "function" && call.function.name === "submit")
            return end(said(String(args.answer ?? ""), s) ? 1 : 0);
          const fruit = String(args.fruit ?? "");
          messages.push({
            role: "tool",
            tool_call_id: call.id,
            content: fruit in s.colours ? `${s.colours[fruit]}` : `no fruit called ${fruit}`,
          });
        }
      }
      return end(0);
    },
  };
}

function said(text: string | null | undefined, s: Scenario): boolean {
  return (text ?? "")
    .toLowerCase()
    .split(/\W+/)
    .includes(s.colours[s.fruit] as string);
}

/**
 * The quickstart's shape with one to three tools: one call, no system prompt;
 * the question names a fruit, the right tool is the fruit's colour.
 */
function pickTool(count: 1 | 2 | 3, forced: boolean): Shape {
  const fixed: Record<string, string> = { cherry: "red", banana: "yellow", grape: "green" };
  const fruits = Object.keys(fixed).slice(0, Math.max(count, 2));
  const names = Object.values(fixed).slice(0, count);
  const tools = names.map((c) => fn(c, `answer ${c}`, {}));
  return {
    name: `pick-${count}-tool${count > 1 ? "s" : ""}${forced ? "-forced" : ""}`,
    description: `${count} tool(s), one call, tool_choice ${forced ? '"required"' : "auto"}`,
    scenario: (_draw, i) => {
      const fruit = fruits[i % fruits.length] as string;
      return { fruit, colours: fixed, tool: fixed[fruit] };
    },
    rollout: async (openai, s, seed) => {
      const res = await openai.chat.completions.create({
        model: "",
        messages: [{ role: "user", content: `what colour is the ${s.fruit}` }],
        tools: tools,
        ...(forced ? { tool_choice: "required" as const } : {}),
        seed,
      });
      const call = res.choices[0]?.message.tool_calls?.[0];
      // With one tool, calling it for a fruit it does not fit is wrong.
      const right = call?.type === "function" && call.function.name === s.tool;
      const none = !call && count === 1 && s.tool !== names[0];
      return {
        reward: right || none ? 1 : 0,
        tool: call?.type === "function" ? call.function.name : undefined,
      };
    },
  };
}

/** The answer as a grader reads it: lower case, words split on anything else. */
function wordsOf(text: string | null | undefined): string[] {
  return (text ?? "").toLowerCase().split(/\W+/).filter(Boolean);
}

type Grade = "exact" | "contains";
/** Exact match: the answer is the word and nothing else; contains: the word is among its words. */
function graded(grade: Grade, answer: string | null | undefined, word: string): number {
  const words = wordsOf(answer);
  if (grade === "exact") return (answer ?? "").trim().toLowerCase() === word ? 1 : 0;
  return words.includes(word) ? 1 : 0;
}

/**
 * The look-up agent as the README's reader writes it: one tool that returns a
 * word, no tool_choice, no max_tokens, a loop of up to four turns that ends
 * at the first plain answer; graded by exact match or by "contains".
 */
function lookupReply(grade: Grade): Shape {
  return {
    name: `lookup-${grade}`,
    description: `one tool (lookup) returning a word, up to 4 turns, the reply graded by ${grade === "exact" ? "exact match" : '"contains"'}`,
    scenario: (draw, i) => ({
      fruit: FRUITS[i % FRUITS.length] as string,
      colours: randomWorld(draw),
    }),
    rollout: async (openai, s, seed) => {
      let first: string | undefined;
      let rightTool = false;
      const messages: Messages = [
        { role: "system", content: SYSTEM },
        { role: "user", content: `what colour is the ${s.fruit} today` },
      ];
      for (let turn = 0; turn < 4; turn++) {
        const res = await openai.chat.completions.create({
          model: "",
          messages,
          tools: [LOOKUP],
          seed: seed * 10 + turn,
        });
        const message = res.choices[0]!.message;
        messages.push(message);
        const calls = message.tool_calls ?? [];
        if (calls.length === 0) {
          const word = s.colours[s.fruit] as string;
          return {
            reward: graded(grade, message.content, word),
            tool: first,
            rightTool,
            answerWords: wordsOf(message.content).length,
          };
        }
        for (const call of calls) {
          if (call.type !== "function") continue;
          first ??= call.function.name;
          const fruit = String(argsOf(call).fruit ?? "");
          if (fruit === s.fruit) rightTool = true;
          messages.push({
            role: "tool",
            tool_call_id: call.id,
            content: fruit in s.colours ? `${s.colours[fruit]}` : `no fruit called ${fruit}`,
          });
        }
      }
      return { reward: 0, tool: first, rightTool, answerWords: 0 };
    },
  };
}

/**
 * The same look-up, written as the OpenAI Agents SDK's docs write agents: a
 * `tool()` with a strict schema, an `Agent` with instructions, run through
 * the recording runner; the final output graded by exact match.
 */
function agentsSdkLookup(): Shape {
  return {
    name: "agents-sdk-exact",
    description:
      "OpenAI Agents SDK agent, one tool (lookup), maxTurns 4, final output graded by exact match",
    scenario: (draw, i) => ({
      fruit: FRUITS[i % FRUITS.length] as string,
      colours: randomWorld(draw),
    }),
    rollout: async (_openai, s, seed, env) => {
      const { Agent, MaxTurnsExceededError, setTracingDisabled, tool } = await import(
        "@openai/agents"
      );
      const { recordingRunner } = await import("trajectory-recorder/openai-agents");
      setTracingDisabled(true);
      let first: string | undefined;
      let rightTool = false;
      const lookup = tool({
        name: "lookup",
        description: "Look up today's colour of a fruit.",
        parameters: {
          type: "object",
          properties: { fruit: { type: "string", description: "the fruit" } },
          required: ["fruit"],
          additionalProperties: false,
        },
        strict: true,
        execute: async (args) => {
          const fruit = String((args as { fruit: string }).fruit);
          first ??= "lookup";
          if (fruit === s.fruit) rightTool = true;
          return fruit in s.colours ? `${s.colours[fruit]}` : `no fruit called ${fruit}`;
        },
      });
      const agent = new Agent({
        name: "fruit-stall",
        instructions: SYSTEM,
        model: env.modelName,
        tools: [lookup],
        modelSettings: { providerData: { seed } },
      });
      const runner = recordingRunner({ client: env.client, recorder: env.recorder });
      const word = s.colours[s.fruit] as string;
      try {
        const result = await runner.run(agent, `what colour is the ${s.fruit} today`, {
          maxTurns: 4,
        });
        const answer = String(result.finalOutput ?? "");
        return {
          reward: graded("exact", answer, word),
          tool: first,
          rightTool,
          answerWords: wordsOf(answer).length,
        };
      } catch (error) {
        if (error instanceof MaxTurnsExceededError)
          return { reward: 0, tool: first, rightTool, answerWords: 0 };
        throw error;
      }
    },
  };
}

export const SHAPES: Record<string, Shape> = Object.fromEntries(
  [
    lookupThenAnswer(true),
    lookupThenAnswer(false),
    pickTool(1, false),
    pickTool(2, false),
    pickTool(2, true),
    pickTool(3, false),
    pickTool(3, true),
    lookupReply("exact"),
    lookupReply("contains"),
    agentsSdkLookup(),
  ].map((s) => [s.name, s]),
);

/** How one run goes. */
export interface RunOptions {
  shape: Shape;
  seed: number;
  learningRate: number;
  /** Training steps. Default 4. */
  steps?: number;
  /** Scenarios per step. Default 4. */
  scenarios?: number;
  /** Rollouts per scenario. Default 4. */
  groupSize?: number;
  /** Rollouts on the last checkpoint to measure it. Default 64. */
  evalRollouts?: number;
}

export interface RunResult {
  /** Mean reward of each step's rollouts. */
  steps: number[];
  /** Mean reward on the last checkpoint. */
  final: number;
  /** Steps whose groups all tied (nothing trained). */
  skipped: number;
  /** Pick-a-tool shapes: the last checkpoint's first call is one tool whatever the question. */
  collapsed: boolean;
  /**
   * Look-up shapes, on the last checkpoint: the share of rollouts that
   * called the tool for the fruit asked about, and the answers' mean length in words.
   */
  honest?: { rightTool: number; answerWords: number };
}

function drawFrom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Trains `shape` from a fresh model as a user's loop would, and measures it. */
export async function runShape(o: RunOptions): Promise<RunResult> {
  const steps = o.steps ?? 4;
  const scenarios = o.scenarios ?? 4;
  const groupSize = o.groupSize ?? 4;
  const emulator = await startEmulator({ port: 0 });
  try {
    const client = new TrainingClient({ apiKey: "local", baseURL: emulator.url });
    const model = await TrainableModel.register(client, {
      project: "learning",
      name: `${o.shape.name}-${o.seed}`,
      baseModel: "emulator/tiny",
    });
    const recorder = new Recorder();
    const openai = model.openai({ recorder });
    const env: RolloutEnv = { client: model.openai(), recorder, modelName: model.inferenceName() };
    const draw = drawFrom(o.seed);
    let counter = o.seed * 1_000_003;
    const rollout = (s: Scenario) => {
      const seed = counter++;
      return recorder.rollout(async (t: Trajectory) => {
        const out = await o.shape.rollout(openai, s, seed, env);
        t.reward = out.reward;
        t.metadata.fruit = s.fruit;
        t.metadata.tool = out.tool ?? null;
        if (out.rightTool !== undefined) t.metrics.right_tool = out.rightTool ? 1 : 0;
        if (out.answerWords !== undefined) t.metrics.answer_words = out.answerWords;
      });
    };
    const result: RunResult = { steps: [], final: 0, skipped: 0, collapsed: false };
    for (let step = 0; step < steps; step++) {
      const groups = await gatherTrajectoryGroups(
        Array.from({ length: scenarios }, (_, i) => {
          const s = o.shape.scenario(draw, i);
          return TrajectoryGroup.from(Array.from({ length: groupSize }, () => () => rollout(s)));
        }),
      );
      const rewards = groups.flatMap((g) => g.trajectories.map((t) => t.reward));
      result.steps.push(rewards.reduce((a, b) => a + b, 0) / rewards.length);
      // RL learns from differences: a group whose rewards all tie teaches nothing.
      const mixed = groups.filter((g) => new Set(g.trajectories.map((t) => t.reward)).size > 1);
      if (mixed.length === 0) result.skipped++;
      else await model.train(mixed, { learningRate: o.learningRate }, { pollIntervalMs: 2 });
    }
    const n = o.evalRollouts ?? 64;
    const evals = await gatherTrajectoryGroups(
      Array.from({ length: scenarios }, (_, i) => {
        const s = o.shape.scenario(draw, i);
        return TrajectoryGroup.from(
          Array.from({ length: Math.ceil(n / scenarios) }, () => () => rollout(s)),
        );
      }),
    );
    const all = evals.flatMap((g) => g.trajectories);
    result.final = all.reduce((a, t) => a + t.reward, 0) / all.length;
    // Collapse: the same first tool whatever the question, while questions need different ones.
    const needs = new Set(evals.map((g) => g.trajectories[0]?.metadata.fruit));
    const used = new Set(all.map((t) => t.metadata.tool));
    result.collapsed =
      o.shape.name.startsWith("pick-") && needs.size > 1 && used.size === 1 && !used.has(null);
    if (all.some((t) => "right_tool" in t.metrics)) {
      const mean = (key: string) =>
        all.reduce((a, t) => a + Number(t.metrics[key] ?? 0), 0) / all.length;
      result.honest = { rightTool: mean("right_tool"), answerWords: mean("answer_words") };
    }
    return result;
  } finally {
    await emulator.close();
  }
}
