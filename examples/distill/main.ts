// Distillation, offline: record a teacher's sessions through the Responses
// API, keep the best, fine-tune the student on them (SFT), and compare
// student and teacher on the same scenarios.
//
//   npx tsx examples/distill/main.ts                 # 32 sessions per scenario
//   npx tsx examples/distill/main.ts --sessions 64 --eval 64
//
// The teacher is any model name the student is not ("teacher-large" here); the
// embedded emulator answers every such name from its untrained policy, so the
// teacher is only as good as its best sessions: what the student learns comes
// from choosing them. Against OpenAI, the teacher would be `gpt-5` on a client
// of its own, wrapped the same way.
import { parseArgs } from "node:util";
import OpenAI from "openai";
import {
  evaluateCheckpoints,
  Recorder,
  TrainableModel,
  TrainingClient,
  type Trajectory,
} from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { sftRowsFromTrajectories } from "trajectory-recorder/store";

const { values } = parseArgs({
  options: { sessions: { type: "string" }, eval: { type: "string" } },
});
const SESSIONS = Number(values.sessions ?? 32);
const EVAL_ROLLOUTS = Number(values.eval ?? 32);
const TEACHER = "teacher-large";

/** A question whose answer only the tool knows. */
interface Scenario {
  id: string;
  fruit: string;
  colour: string;
}
const scenarios: Scenario[] = [
  { id: "apple", fruit: "apple", colour: "green" },
  { id: "banana", fruit: "banana", colour: "yellow" },
  { id: "cherry", fruit: "cherry", colour: "red" },
  { id: "grape", fruit: "grape", colour: "blue" },
];

const tools: OpenAI.Responses.FunctionTool[] = [
  {
    type: "function",
    name: "lookup",
    description: "The colour of a fruit.",
    parameters: {
      type: "object",
      properties: { fruit: { type: "string", enum: ["apple", "banana", "cherry", "grape"] } },
      required: ["fruit"],
      additionalProperties: false,
    },
    strict: true,
  },
];

/**
 * One session, as an agent written against the Responses API runs it: ask,
 * run the tool the model calls, send its output back, until the model
 * answers in text. Reward 1 when the answer names the colour.
 */
async function solve(openai: OpenAI, model: string, s: Scenario, t: Trajectory): Promise<void> {
  const input: OpenAI.Responses.ResponseInput = [
    { role: "user", content: `what colour is the ${s.fruit}` },
  ];
  for (let turn = 0; turn < 4; turn++) {
    const response = await openai.responses.create({
      model,
      instructions: "Look the fruit up, then say its colour.",
      input,
      tools,
    });
    input.push(...(response.output as OpenAI.Responses.ResponseInputItem[]));
    const calls = response.output.filter((item) => item.type === "function_call");
    if (calls.length === 0) {
      t.reward = response.output_text.split(" ").includes(s.colour) ? 1 : 0;
      return;
    }
    for (const call of calls) {
      const { fruit } = JSON.parse(call.arguments) as { fruit: string };
      const colour = scenarios.find((x) => x.fruit === fruit)?.colour ?? "unknown";
      input.push({ type: "function_call_output", call_id: call.call_id, output: colour });
    }
  }
  t.reward = 0;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const emulator = await startEmulator({ port: 0 });
try {
  const client = new TrainingClient({ apiKey: "local", baseURL: emulator.url });
  const student = await TrainableModel.register(client, {
    project: "distill",
    name: "student",
    baseModel: "Qwen/Qwen3-4B",
  });
  const recorder = new Recorder();
  const teacher = recorder.wrap(new OpenAI({ apiKey: "local", baseURL: emulator.url }));

  // 1. The teacher's sessions, recorded through the Responses API.
  const sessions: Trajectory[] = [];
  for (const s of scenarios)
    for (let i = 0; i < SESSIONS; i++)
      sessions.push(
        await recorder.rollout((t) => solve(teacher, TEACHER, s, t), {
          metadata: { scenario: s.id },
        }),
      );
  const teacherScore = mean(sessions.map((t) => t.reward));

  // 2. The best of them as SFT rows (the other sessions are left out and counted).
  const { rows, counts } = sftRowsFromTrajectories(sessions, { minReward: 1 });
  console.log(
    `teacher ${TEACHER}: ${sessions.length} sessions, mean reward ${teacherScore.toFixed(2)}; ` +
      `${counts.selected} kept (reward 1) as ${rows.length} SFT rows, ${counts.dropped.reward} left out`,
  );

  // 3. The student fine-tuned on them.
  const { step } = await student.trainSft(rows, { batchSize: 4 });
  console.log(`student trained: step ${step}`);

  // 4. Student before and after, on the teacher's scenarios, the same agent code.
  const results = await evaluateCheckpoints(student, {
    scenarios,
    steps: [0, step],
    rolloutsPerScenario: EVAL_ROLLOUTS,
    recorder,
    // The student's Responses turns are messages (no token ids): logged as they are.
    validate: { requireTrainable: false },
    rollout: (s, ctx) => recorder.rollout((t) => solve(ctx.openai, "", s, t)),
  });
  const teacherEval = await Promise.all(
    scenarios.flatMap((s) =>
      Array.from({ length: EVAL_ROLLOUTS }, () =>
        recorder.rollout((t) => solve(teacher, TEACHER, s, t)),
      ),
    ),
  );
  const line = (who: string, score: number) =>
    console.log(`  ${who.padEnd(22)} ${score.toFixed(2)}`);
  console.log(
    `\nmean reward on the same ${scenarios.length} scenarios (${EVAL_ROLLOUTS} rollouts each):`,
  );
  line(`teacher ${TEACHER}`, mean(teacherEval.map((t) => t.reward)));
  for (const r of results) line(`student step ${r.step}`, r.meanReward);
} finally {
  await emulator.close();
}
