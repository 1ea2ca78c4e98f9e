// The training coordinator: exactly one trains at a time (a second one waits).
// It also collects groups; rewards are made relative within each group.
// `node --import tsx --import ./scripts/lua-hooks.mjs examples/distributed/coordinator.ts`; with SHIPPER_SPOOL_DIR set,
// groups go through a TrajectoryShipper (spooled there) that trains instead.
import {
  applyGroupReward,
  rankRewards,
  type Trajectory,
  TrajectoryShipper,
} from "trajectory-recorder";
import { TrainingCoordinator } from "trajectory-recorder/bullmq";
import { connection, openModel } from "./shared.js";

const model = await openModel();
const config = { learningRate: 0.05 };
const spoolDir = process.env.SHIPPER_SPOOL_DIR;
const shipper =
  spoolDir === undefined
    ? undefined
    : new TrajectoryShipper({ model, spoolDir, trainEvery: { groups: 4, config } });
const answerLength = (t: Trajectory) => String(t.messages().at(-1)?.content ?? "").length;
const coordinator = await TrainingCoordinator.start({
  connection,
  model,
  ...(shipper
    ? { sink: shipper }
    : {
        trainEvery: { groups: 4, config },
        onTrained: ({ batch, step, groups }: { batch: number; step: number; groups: string[] }) =>
          console.log(
            `coordinator: batch ${batch} (${groups.length} groups) trained, step ${step}`,
          ),
      }),
  maxStaleness: 4, // this example enqueues everything at step 0
  maxExceptions: 0.25,
  // Relative within the group: the rollouts that said the word first, then
  // among equals the shorter answer (a one-turn rollout's message count
  // would tie them all). A group where all
  // rollouts scored the same teaches nothing: the coordinator releases it
  // (counted in groups.noSignal; `noSignal: "send"` would train it anyway).
  afterEach: (group) =>
    applyGroupReward(group, (g) =>
      rankRewards(g.trajectories.map((t) => t.reward * 100 - answerLength(t))),
    ),
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
