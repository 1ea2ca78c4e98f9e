// The training coordinator: exactly one trains at a time (a second one waits).
// It also collects groups; rewards are made relative within each group.
// `npx tsx examples/distributed/coordinator.ts`
import { applyGroupReward } from "trajectory-recorder";
import { TrainingCoordinator } from "trajectory-recorder/bullmq";
import { connection, openModel } from "./shared.js";

const model = await openModel();
const coordinator = await TrainingCoordinator.start({
  connection,
  model,
  trainEvery: 4,
  config: { learningRate: 0.05 },
  maxStaleness: 4, // this example enqueues everything at step 0
  maxExceptions: 0.25,
  afterEach: async (group) => {
    // The service learns nothing from a group whose rewards are all equal.
    const mean = group.trajectories.reduce((s, t) => s + t.reward, 0) / group.trajectories.length;
    await applyGroupReward(group, (g) => g.trajectories.map((t, i) => t.reward - mean + i * 1e-3));
  },
  onTrained: ({ batch, step, groups }) =>
    console.log(`coordinator: batch ${batch} (${groups.length} groups) trained, step ${step}`),
});
console.log(`coordinator ${process.pid} ready`);
process.on("SIGTERM", () => void coordinator.close().then(() => process.exit(0)));
