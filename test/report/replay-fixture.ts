// A production store and an emulator run that trained groups replayed from
// it, built the way a user builds them: sessions stored with feedback (one
// the infrastructure failed), `replayGroups` sampling their states again, one
// sample marked as an infrastructure failure, and `model.train`.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { TrainableModel, TrainingClient } from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { replayGroups } from "trajectory-recorder/replay";
import { TrajectoryStore } from "trajectory-recorder/store";
import type { TrajectoryWire } from "../../src/wire/index.js";

export interface ReplayRun {
  /** The store's directory and the emulator's data directory. */
  storeDir: string;
  dataDir: string;
  /** The stored trajectories: one replayed, one the infrastructure failed. */
  ids: { replayed: string; failed: string };
  /** The rewards of the replayed group's samples, in order (the marked one included). */
  rewards: number[];
  /** Each sample's last answer. */
  answers: string[];
}

const answer = (content: string) => ({
  finish_reason: "stop",
  index: 0,
  logprobs: null,
  message: { role: "assistant" as const, content, refusal: null },
});

function conversation(topic: string, metadata: Record<string, unknown>): TrajectoryWire {
  return {
    messages_and_choices: [{ role: "user", content: `please say ${topic}` }, answer("no")],
    tools: null,
    additional_histories: [],
    reward: 0,
    initial_policy_version: 0,
    final_policy_version: 0,
    metrics: {},
    metadata,
    logs: [],
  };
}

export async function replayRun(): Promise<ReplayRun> {
  const root = await mkdtemp(path.join(tmpdir(), "report-replay-"));
  const storeDir = path.join(root, "store");
  const dataDir = path.join(root, "emulator");
  const ids = { replayed: "trj_replayed00000000000000", failed: "trj_failed0000000000000000" };
  const store = await TrajectoryStore.open({ dir: storeDir, logger: { warn: () => {} } });
  store.put({
    id: ids.replayed,
    session: "alice",
    status: "finished",
    calls: 1,
    trajectory: conversation("apple", {}),
  });
  store.addFeedback({ trajectory_id: ids.replayed, reward: 0 });
  store.put({
    id: ids.failed,
    session: "bob",
    status: "finished",
    calls: 1,
    trajectory: conversation("cat", { infra_failure: "upstream_error" }),
  });
  store.addFeedback({ trajectory_id: ids.failed, reward: 0 });

  const emu = await startEmulator({ port: 0, apiKeys: ["k"], dataDir });
  try {
    const model = await TrainableModel.register(
      new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 }),
      { project: "p", name: "replayed", baseModel: "toy" },
    );
    // Longer answers score higher, so the group's rewards differ.
    const { groups } = await replayGroups({
      store,
      model,
      n: 4,
      reward: (t) => String(t.messages().at(-1)?.content ?? "").length + 1,
      select: { ids: [ids.replayed] },
      requestOptions: { max_tokens: 4, seed: 21 },
      logger: { info: () => {} },
    });
    const group = groups[0];
    if (!group) throw new Error("the replay gave no group to train");
    group.trajectories[3]?.markInfraFailure("stream_cut", "the test cut it");
    await model.train(groups, {}, { pollIntervalMs: 10, logger: { info: () => {} } });
    return {
      storeDir,
      dataDir,
      ids,
      rewards: group.trajectories.map((t) => t.reward),
      answers: group.trajectories.map((t) => String(t.messages().at(-1)?.content ?? "")),
    };
  } finally {
    await store.close();
    await emu.close();
  }
}
