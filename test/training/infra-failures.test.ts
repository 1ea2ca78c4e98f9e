// A rollout marked as an infrastructure failure (an upstream 503 the agent
// caught, a cut stream) is not a zero reward: it is left out of its group's
// mean and standard deviation, never trained on, logged under `train` marked
// as left out, and counted per step.
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  applyGroupReward,
  hasRewardSignal,
  TrainableModel,
  TrainingClient,
  Trajectory,
  TrajectoryGroup,
  TrajectoryShipper,
  zScores,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadDataDir } from "../../src/report/load.js";
import { stepStats } from "../../src/report/run.js";
import { trainableTrajectory } from "../helpers/trainable.js";

/** A trainable trajectory (ART JSON), marked as an infrastructure failure when `infra` is given. */
const traj = (reward: number, infra?: string) => ({
  ...trainableTrajectory(reward),
  ...(infra ? { metadata: { infra_failure: infra } } : {}),
});

let emu: Emulator;
let dataDir: string;
let model: TrainableModel;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "infra-failures-"));
  emu = await startEmulator({ port: 0, apiKeys: ["k"], dataDir });
  model = await TrainableModel.register(
    new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 }),
    { project: "p", name: "infra", baseModel: "toy" },
  );
});
afterEach(async () => {
  await emu.close();
});

const quiet = () => {
  const out: string[] = [];
  const push = (m: string) => {
    out.push(m);
  };
  return { out, info: push, warn: push, error: push };
};

/** The emulator's saved state, after close. */
async function state() {
  await emu.close();
  return JSON.parse(await readFile(path.join(dataDir, "emulator-state.json"), "utf8"));
}

describe("train leaves infrastructure failures out", () => {
  it("trains on the healthy rollouts, logs the marked one as left out, and counts it in the step's metrics", async () => {
    const log = quiet();
    const group = { trajectories: [traj(1), traj(0, "upstream_error"), traj(0), traj(0.5)] };
    const result = await model.train([group], {}, { pollIntervalMs: 10, logger: log });
    expect(result.jobId).not.toBeNull();
    expect(result.infraFailures).toBe(1);
    expect(result.metrics["data/step_num_infra_failures"]).toBe(1);
    expect(log.out[0]).toMatch(/left out 1 trajectory\(ies\) marked as infrastructure failures/);
    const cps = await model.client.models.checkpoints.list(model.id, { limit: 10, order: "asc" });
    const step0 = cps.data.find((c) => c.step === 0)?.metrics ?? {};
    // The mean is the healthy rollouts' (0.5), not dragged down by a zero.
    expect(step0["train/reward"]).toBeCloseTo(0.5);
    expect(step0["train/num_infra_failures"]).toBe(1);
    expect(step0["train/num_trajectories"]).toBe(4);
    const saved = await state();
    const job = saved.jobs[0];
    const sent = job.request.trajectory_groups[0].trajectories;
    expect(sent.map((t: { reward: number }) => t.reward)).toEqual([1, 0, 0.5]);
    expect(sent.every((t: { metadata?: object }) => !("infra_failure" in (t.metadata ?? {})))).toBe(
      true,
    );
    const logged = saved.logs.flatMap((l: { trajectory_groups: unknown[] }) => l.trajectory_groups);
    expect(logged).toHaveLength(1);
    expect(logged[0].trajectories.map((t: { metadata: object }) => t.metadata)).toEqual([
      { infra_failure: "upstream_error", left_out: "infra_failure" },
    ]);
    // The report counts it at the step and keeps it out of the step's mean.
    const run = await loadDataDir(dataDir);
    const train = stepStats(run).find((s) => s.split === "train" && s.step === 0);
    expect(train).toMatchObject({ mean: 0.5, count: 3, infraFailures: 1 });
  });

  it("a zero from a failed rollout gives a tied group no signal; a group of failures creates no job", async () => {
    const log = quiet();
    const tied = { trajectories: [traj(1), traj(1), traj(0, "stream_cut")] };
    expect(hasRewardSignal(tied as never)).toBe(false);
    const result = await model.train([tied], {}, { pollIntervalMs: 10, logger: log });
    expect(result).toMatchObject({ jobId: null, skipped: "no_reward_signal", infraFailures: 1 });
    const failed = { trajectories: [traj(0, "transport"), traj(0, "timeout")] };
    const none = await model.train([failed], {}, { logger: log });
    expect(none).toMatchObject({ jobId: null, skipped: "infra_failures", infraFailures: 2 });
    expect((await state()).jobs).toHaveLength(0);
  });

  it("the shipper's trainEvery never trains on a marked rollout, and says so through the shipper's logger", async () => {
    const log = quiet();
    const shipper = new TrajectoryShipper({
      model,
      flushOnExit: false,
      logger: log,
      trainEvery: { groups: 1, pollIntervalMs: 10 },
    });
    await shipper.add({ trajectories: [traj(1), traj(0), traj(0, "upstream_error")] });
    await shipper.close({ timeoutMs: 20_000 });
    // train's own line, through the shipper's logger (not train's stderr default).
    expect(log.out).toContain(
      'TrajectoryShipper: train: left out 1 trajectory(ies) marked as infrastructure failures (metadata.infra_failure), logged under "train" with metadata.left_out = "infra_failure".',
    );
    const saved = await state();
    const sent = saved.jobs[0].request.trajectory_groups[0].trajectories;
    expect(sent.map((t: { reward: number }) => t.reward)).toEqual([1, 0]);
  });
});

describe("group rewards leave infrastructure failures out", () => {
  it("a group reward sees only the healthy rollouts: their mean and spread, not a fake zero's", async () => {
    const ts = [1, 2, 3, 0].map((r) => new Trajectory({ metrics: { score: r } }));
    ts[3]?.markInfraFailure("upstream_error");
    const group = new TrajectoryGroup({ trajectories: ts });
    let seen = 0;
    await applyGroupReward(group, (g) => {
      seen = g.trajectories.length;
      return zScores(g.trajectories.map((t) => Number(t.metrics.score)));
    });
    expect(seen).toBe(3);
    expect(ts.map((t) => Number(t.reward.toFixed(4)))).toEqual([-1.2247, 0, 1.2247, 0]);
  });
});
