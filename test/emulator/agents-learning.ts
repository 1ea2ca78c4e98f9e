// An OpenAI Agents SDK agent written as the docs write one (one strict
// function tool, instructions, `recordingRunner`, `maxTurns: 4`,
// `scoreError: scoreMaxTurns(0)`), trained on the emulator as the README's
// quickstart trains (2 scenarios x 16 rollouts a step, 8 steps, 2e-5).
// Shared by `test/emulator/agents-learning.test.ts` and
// `scripts/agents-learning.ts`, which prints the figures in MODEL.md.
import {
  gatherTrajectoryGroups,
  Recorder,
  TrainableModel,
  TrainingClient,
  TrajectoryGroup,
} from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";

const FRUITS = ["apple", "banana", "cherry", "grape"] as const;
const COLOURS = ["red", "green", "blue", "yellow"] as const;

export interface AgentsRunOptions {
  /** Seeds the scenarios and every rollout's sampling. */
  seed: number;
  /** Default 8. */
  steps?: number;
  /** Groups a step (each a fruit and a world of colours). Default 2. */
  scenarios?: number;
  /** Rollouts a group. Default 16. */
  groupSize?: number;
  /** Default 2e-5. */
  learningRate?: number;
  /**
   * Send no seed (the README's agents send none): sampling is then random,
   * so runs differ. Default false: every rollout sends its own seed.
   */
  unseeded?: boolean;
}

/** One step's rollouts, measured before that step's training. */
export interface AgentsStep {
  /** Mean reward. */
  reward: number;
  /** Share of rollouts that called the tool for the fruit asked about. */
  toolUse: number;
  /** Share of rollouts that ended in `MaxTurnsExceededError` (scored 0, kept). */
  maxTurns: number;
  /** Mean number of tool calls a rollout made. */
  calls: number;
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

interface Scenario {
  fruit: string;
  colours: Record<string, string>;
}

/** The quickstart's two questions; today's colours change every scenario, so only the tool knows them. */
function scenario(draw: () => number, i: number): Scenario {
  const colours: Record<string, string> = {};
  for (const f of FRUITS) colours[f] = COLOURS[Math.floor(draw() * COLOURS.length)] as string;
  return { fruit: i % 2 === 0 ? "cherry" : "banana", colours };
}

/** Trains the agent from a fresh model and returns each step's figures. */
export async function runAgentsLearning(o: AgentsRunOptions): Promise<AgentsStep[]> {
  const { Agent, setTracingDisabled, tool } = await import("@openai/agents");
  const { recordingRunner, scoreMaxTurns } = await import("trajectory-recorder/openai-agents");
  setTracingDisabled(true);
  const emulator = await startEmulator({ port: 0 });
  try {
    const client = new TrainingClient({ apiKey: "local", baseURL: emulator.url });
    const model = await TrainableModel.register(client, {
      project: "agents-learning",
      name: `lookup-${o.seed}`,
      baseModel: "emulator/tiny",
    });
    const recorder = new Recorder();
    const runner = recordingRunner({ client: model.openai(), recorder });
    const draw = drawFrom(o.seed);
    let counter = o.seed * 1_000_003;

    const rollout = (s: Scenario) => {
      const seed = counter++;
      let calls = 0;
      let right = false;
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
          calls++;
          if (fruit === s.fruit) right = true;
          return fruit in s.colours ? (s.colours[fruit] as string) : `no fruit called ${fruit}`;
        },
      });
      const agent = new Agent({
        name: "fruit-stall",
        instructions: "Look the fruit up with the lookup tool, then answer with its colour alone.",
        model: model.inferenceName(),
        tools: [lookup],
        modelSettings: o.unseeded ? {} : { providerData: { seed } },
      });
      return recorder.rollout(
        async (t) => {
          t.metadata.fruit = s.fruit;
          try {
            const result = await runner.run(agent, `what colour is the ${s.fruit} today`, {
              maxTurns: 4,
            });
            // Strict: the answer is the colour and nothing else.
            const answer = String(result.finalOutput ?? "")
              .trim()
              .toLowerCase();
            t.reward = answer === s.colours[s.fruit] ? 1 : 0;
          } finally {
            t.metrics.right_tool = right ? 1 : 0;
            t.metrics.tool_calls = calls;
          }
        },
        { scoreError: scoreMaxTurns(0) },
      );
    };

    const out: AgentsStep[] = [];
    for (let step = 0; step < (o.steps ?? 8); step++) {
      const groups = await gatherTrajectoryGroups(
        Array.from({ length: o.scenarios ?? 2 }, (_, i) => {
          const s = scenario(draw, i);
          return TrajectoryGroup.from(
            Array.from({ length: o.groupSize ?? 16 }, () => () => rollout(s)),
          );
        }),
      );
      const all = groups.flatMap((g) => g.trajectories);
      const mean = (f: (t: (typeof all)[number]) => number) =>
        all.reduce((a, t) => a + f(t), 0) / all.length;
      out.push({
        reward: mean((t) => t.reward),
        toolUse: mean((t) => Number(t.metrics.right_tool ?? 0)),
        maxTurns: mean((t) => (t.logs.some((l) => /scoreError/.test(l)) ? 1 : 0)),
        calls: mean((t) => Number(t.metrics.tool_calls ?? 0)),
      });
      // train() leaves out groups whose rewards all tie, and skips a step where all do.
      await model.train(groups, { learningRate: o.learningRate ?? 2e-5 }, { pollIntervalMs: 2 });
    }
    return out;
  } finally {
    await emulator.close();
  }
}
