// A Python agent (the official openai SDK, in its own process) trained on the
// emulator through t.baseURL: the demo's fruit-stall task, the reward rises.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import {
  gatherTrajectoryGroups,
  Recorder,
  TrainableModel,
  TrainingClient,
  TrajectoryGroup,
  validateGroup,
} from "trajectory-recorder";
import { startEmulator } from "trajectory-recorder/emulator";
import { expect, it } from "vitest";
import { FRUITS, question, scenario, scenarioMetadata, stockReward } from "../../src/demo/task.js";
import { applyReward } from "../../src/rewards/index.js";
import { AGENT, python } from "./helpers.js";

/** The Python agent as a long-lived process running many rollouts at once (one per job line). */
function agentProcess() {
  const child: ChildProcessWithoutNullStreams = spawn(python(), [AGENT, "--serve"], {
    env: { PATH: process.env.PATH },
  });
  const waiting = new Map<number, (r: { answer?: string; error?: string }) => void>();
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const r = JSON.parse(line);
    waiting.get(r.id)?.(r);
    waiting.delete(r.id);
  });
  let next = 0;
  return {
    run(job: Record<string, unknown>): Promise<{ answer?: string; error?: string }> {
      const id = next++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ ...job, id })}\n`);
      });
    },
    stderr: () => stderr,
    close: () => child.kill(),
  };
}

it("trains a Python subprocess agent on the emulator through t.baseURL: the reward rises", async () => {
  const emulator = await startEmulator({ port: 0, apiKeys: ["py-train-key"] });
  const agent = agentProcess();
  const model = await TrainableModel.register(
    new TrainingClient({ apiKey: "py-train-key", baseURL: emulator.url }),
    {
      project: "proxy",
      name: "python-fruit-stall",
      baseModel: "emulator/toy",
    },
  );
  const recorder = new Recorder({ upstream: model });
  try {
    const gather = async (step: number) => {
      const groups = await gatherTrajectoryGroups(
        FRUITS.map((fruit, f) =>
          TrajectoryGroup.from(
            Array.from({ length: 8 }, (_, i) => {
              const k = 1_000_000 + step * 10_000 + f * 100 + i;
              const s = scenario(fruit, k);
              return () =>
                recorder.rollout(
                  async (t) => {
                    const r = await agent.run({
                      base_url: t.baseURL,
                      api_key: t.apiKey,
                      question: question(s),
                      stock: s.stock,
                      stream: i % 2 === 0,
                      max_tokens: 3,
                      seed: k,
                      model: "",
                    });
                    if (r.error)
                      throw new Error(`the Python agent failed: ${r.error}\n${agent.stderr()}`);
                  },
                  { metadata: scenarioMetadata(s) },
                );
            }),
          ),
        ),
        { concurrency: 16, afterEach: (group) => applyReward(group, stockReward) },
      );
      const all = groups.flatMap((g) => g.trajectories);
      return { groups, mean: all.reduce((a, t) => a + t.reward, 0) / all.length };
    };
    const rewards: number[] = [];
    for (let step = 0; step < 4; step++) {
      const { groups, mean } = await gather(step);
      rewards.push(mean);
      for (const g of groups)
        expect(
          validateGroup(g, { mode: "warn", logger: { warn: () => {} } } as never).problems,
        ).toEqual([]);
      await model.train(
        groups,
        { learningRate: 2e-5 },
        { pollIntervalMs: 10, logger: { info: () => {} } },
      );
    }
    rewards.push((await gather(4)).mean);
    expect(rewards.at(-1)!).toBeGreaterThan(rewards[0]! + 0.2);
  } finally {
    agent.close();
    await recorder.close();
    await emulator.close();
  }
}, 240_000);
