// The training coordinator: exactly one trains at a time (a second one waits).
// It also collects groups; rewards are made relative within each group.
// `npx tsx examples/distributed/coordinator.ts`; with SHIPPER_SPOOL_DIR set,
// groups go through a TrajectoryShipper (spooled there) that trains instead.
import { applyGroupReward, TrajectoryShipper } from "trajectory-recorder";
import { TrainingCoordinator } from "trajectory-recorder/bullmq";
import { connection, openModel } from "./shared.js";

const model = await openModel();
const config = { learningRate: 0.05 };
const spoolDir = process.env.SHIPPER_SPOOL_DIR;
const shipper =
  spoolDir === undefined
    ? undefined
    : new TrajectoryShipper({ model, spoolDir, trainEvery: { groups: 4, config } });
const coordinator = await TrainingCoordinator.start({
  connection,
  model,
  ...(shipper
    ? { sink: shipper }
    : {
        trainEvery: 4,
        config,
        onTrained: ({ batch, step, groups }: { batch: number; step: number; groups: string[] }) =>
          console.log(
            `coordinator: batch ${batch} (${groups.length} groups) trained, step ${step}`,
          ),
      }),
  maxStaleness: 4, // this example enqueues everything at step 0
  maxExceptions: 0.25,
  afterEach: async (group) => {
    // The service learns nothing from a group whose rewards are all equal.
    const mean = group.trajectories.reduce((s, t) => s + t.reward, 0) / group.trajectories.length;
    await applyGroupReward(group, (g) => g.trajectories.map((t, i) => t.reward - mean + i * 1e-3));
  },
});
console.log(
  `coordinator ${process.pid} ready${shipper ? ` (through a shipper, spool ${spoolDir})` : ""}`,
);
process.on("SIGTERM", async () => {
  await coordinator.close();
  // After the coordinator: it may be handing a group to the shipper.
  await shipper?.close();
  process.exit(0);
});
