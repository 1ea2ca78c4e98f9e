// A small real run on the emulator, kept in a data directory: a tool-using
// agent recorded with the recorder's defaults (token-id logprobs), a tool
// result sent back, a sub-agent call (an additional history), logs, metrics,
// a group that carries no signal and one with a failed rollout, trained
// twice; then the same scenarios evaluated on checkpoints 0 and 2 as `val`.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { TrainingClient } from "../../src/client/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import { Recorder } from "../../src/recorder/index.js";
import { evaluateCheckpoints, TrainableModel } from "../../src/training/index.js";
import { type Trajectory, TrajectoryGroup } from "../../src/trajectory/index.js";

const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "check_stock",
      description: "How many of a fruit are left.",
      parameters: {
        type: "object",
        properties: { fruit: { type: "string", enum: ["apple", "banana"] } },
        required: ["fruit"],
      },
    },
  },
];

export const SCENARIOS = ["apple", "banana"] as const;

export async function recordedRun(): Promise<{
  dataDir: string;
  modelName: string;
  evaluations: Awaited<ReturnType<typeof evaluateCheckpoints>>;
}> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "report-run-"));
  const emu = await startEmulator({ port: 0, apiKeys: { k: "alice" }, dataDir });
  try {
    const client = new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 });
    const model = await TrainableModel.register(client, {
      project: "demo",
      name: "stall <agent>",
      baseModel: "emulator/tiny",
    });
    const recorder = new Recorder({ logger: { warn() {} } as never });
    const rolloutOn = (fruit: string, seed: number, openai = model.openai({ recorder })) =>
      recorder.rollout(
        async (t) => {
          const messages: any[] = [{ role: "user", content: `how many ${fruit} are left` }];
          const r = await openai.chat.completions.create({
            model: "",
            messages,
            tools: TOOLS,
            max_tokens: 4,
            top_logprobs: 3,
            seed,
          });
          const message = r.choices[0]!.message;
          const calls = message.tool_calls ?? [];
          if (calls.length) {
            messages.push(message);
            for (const c of calls)
              messages.push({ role: "tool", tool_call_id: c.id, content: "three left" });
            await openai.chat.completions.create({
              model: "",
              messages,
              tools: TOOLS,
              max_tokens: 3,
              top_logprobs: 3,
              seed: seed + 1,
            });
            // A sub-agent asked on its own: an additional history.
            await openai.chat.completions.create({
              model: "",
              messages: [{ role: "user", content: `say ${fruit} <b onmouseover=alert(1)>` }],
              max_tokens: 3,
              seed: seed + 2,
            });
          }
          t.reward = (calls.length ? 0.5 : 0) + (seed % 2) * 0.5;
          t.metrics.tool_calls = calls.length;
          t.log(`asked about ${fruit}`);
        },
        { metadata: { scenario: fruit } },
      );
    const groupsAt = async (seed: number) => {
      const groups: TrajectoryGroup[] = [];
      for (const fruit of SCENARIOS) {
        const ts: (Trajectory | Error)[] = [];
        for (let i = 0; i < 4; i++)
          ts.push(await rolloutOn(fruit, seed * 100 + i * 7 + fruit.length));
        groups.push(new TrajectoryGroup(ts, { metadata: { scenario: fruit } }));
      }
      // A group whose rewards are all equal: the trainer learns nothing from it.
      const flat = await Promise.all([0, 1, 2].map((i) => rolloutOn("apple", seed * 100 + 50 + i)));
      for (const t of flat) t.reward = 0.5;
      flat.push(new Error("the sandbox timed out") as never);
      groups.push(new TrajectoryGroup(flat, { metadata: { scenario: "pear" } }));
      return groups;
    };
    for (let step = 0; step < 2; step++)
      await model.train(
        await groupsAt(10 + step),
        { learningRate: 5e-5 },
        // Sent anyway, so that the run holds a group the report marks as no signal.
        { pollIntervalMs: 5, validate: false, noSignal: "send" },
      );
    const evaluations = await evaluateCheckpoints(model, {
      scenarios: SCENARIOS.map((id) => ({ id })),
      steps: [0, 2],
      rolloutsPerScenario: 2,
      recorder,
      rollout: (s, ctx) => rolloutOn(s.id, 900 + ctx.attempt, ctx.openai),
      validate: false,
    });
    return { dataDir, modelName: model.name, evaluations };
  } finally {
    await emu.close();
  }
}
