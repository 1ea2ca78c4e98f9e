// evaluateCheckpoints against the emulator: each chosen checkpoint answers the
// same scenarios, and the groups are logged as `val`, named and pinned to
// their step.
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { TrainingClient } from "../../src/client/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import { Recorder } from "../../src/recorder/index.js";
import { evaluateCheckpoints, TrainableModel } from "../../src/training/index.js";
import { InvalidArgumentError } from "../../src/util/argument-error.js";

it("answers the scenarios on each chosen checkpoint, pins the step, keeps failures and logs the rest as val", async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), "evaluate-"));
  const emu = await startEmulator({ port: 0, apiKeys: { k: "alice" }, dataDir });
  let modelId = "";
  try {
    const client = new TrainingClient({ apiKey: "k", baseURL: emu.url, maxRetries: 0 });
    const model = await TrainableModel.register(client, {
      project: "p",
      name: "m",
      baseModel: "emulator/tiny",
    });
    modelId = model.id;
    const recorder = new Recorder({ logger: { warn() {} } as never });
    const served: string[] = [];
    const results = await evaluateCheckpoints(model, {
      scenarios: ["red", "blue"],
      steps: [0],
      recorder,
      rolloutsPerScenario: 3,
      validate: false,
      rollout: async (colour, ctx) => {
        expect(ctx.model).toBe(model.inferenceName(0));
        expect(ctx.scenario).toBe(colour);
        if (colour === "blue" && ctx.attempt === 1) throw new Error("the judge was down");
        return recorder.rollout(async (t) => {
          const r = await ctx.openai.chat.completions.create({
            model: "",
            messages: [{ role: "user", content: `say ${colour}` }],
            max_tokens: 3,
          });
          served.push(r.model);
          t.reward = r.choices[0]?.message.content?.includes(colour) ? 1 : 0;
        });
      },
    });
    expect(new Set(served)).toEqual(new Set([model.inferenceName(0)]));
    expect(results).toHaveLength(1);
    const [r] = results;
    expect(r!.step).toBe(0);
    expect(r!.split).toBe("val");
    expect(
      r!.groups.map((g) => [g.metadata.scenario, g.trajectories.length, g.exceptions.length]),
    ).toEqual([
      ["red", 3, 0],
      ["blue", 2, 1],
    ]);
    expect(r!.groups[1]!.exceptions[0]!.message).toBe("the judge was down");
    expect(Object.keys(r!.rewards)).toEqual(["red", "blue"]);
    for (const t of r!.groups.flatMap((g) => g.trajectories)) {
      expect(t.metadata).toMatchObject({ checkpoint_step: 0 });
      expect([t.initial_policy_version, t.final_policy_version]).toEqual([0, 0]);
    }
    // Bad options are named before anything runs.
    const rollout = async () => {
      throw new Error("never called");
    };
    await expect(
      evaluateCheckpoints(model, { scenarios: [], steps: [0], rollout }),
    ).rejects.toThrow(
      "evaluateCheckpoints(model, options): options.scenarios: expected a non-empty array of scenarios",
    );
    await expect(
      evaluateCheckpoints(model, { scenarios: ["a"], steps: [1.5], rollout }),
    ).rejects.toThrow(InvalidArgumentError);
    await expect(
      evaluateCheckpoints(model, { scenarios: ["a"], steps: [0], rollout, rolloutsPerScenario: 0 }),
    ).rejects.toThrow("options.rolloutsPerScenario: expected an integer of 1 or more");
  } finally {
    await emu.close();
  }
  // Logged under val, both groups, as the service kept them (its state is written on close).
  const state = JSON.parse(await readFile(path.join(dataDir, "emulator-state.json"), "utf8"));
  const logs = state.logs.filter((l: { model_id: string }) => l.model_id === modelId);
  expect(
    logs.map((l: { split: string; trajectory_groups: unknown[] }) => [
      l.split,
      l.trajectory_groups.length,
    ]),
  ).toEqual([["val", 2]]);
}, 60_000);
