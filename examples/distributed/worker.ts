// A rollout worker: run as many as you like, on any machine that reaches Redis
// and the Training Service. `node --import tsx --import ./scripts/lua-hooks.mjs examples/distributed/worker.ts`
import { Recorder } from "trajectory-recorder";
import { RolloutWorker } from "trajectory-recorder/bullmq";
import { connection, openModel } from "./shared.js";

const model = await openModel();
const recorder = new Recorder();
// Your own client, wrapped once; ctx.model() names the newest checkpoint.
const openai = recorder.wrap(model.client.createOpenAI());
const worker = await RolloutWorker.start<{ target: string }>({
  connection,
  recorder,
  concurrency: 8,
  inferenceName: (step) => model.inferenceName(step > 0 ? step : undefined),
  rollout: async ({ payload, trajectory, model: modelName, index }) => {
    const r = await openai.chat.completions.create({
      model: modelName(),
      messages: [{ role: "user", content: `please say ${payload.target}` }],
      max_tokens: 4,
      seed: Date.now() + index,
    });
    const said = r.choices[0]?.message.content?.split(/\s+/).includes(payload.target);
    trajectory.reward = said ? 1 : 0;
  },
});
console.log(`worker ${process.pid} ready`);
process.on("SIGTERM", () => void worker.close().then(() => process.exit(0)));
