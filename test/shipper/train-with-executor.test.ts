import {
  InvalidArgumentError,
  TrainableModel,
  TrainingClient,
  Trajectory,
} from "trajectory-recorder";
import { InProcessExecutor, trainWithExecutor } from "trajectory-recorder/core";
import { startEmulator } from "trajectory-recorder/emulator";
import { expect, it } from "vitest";

const executor = new InProcessExecutor({
  rollout: () => new Trajectory({ messages_and_choices: [], reward: 0 }),
});
const model = {} as never;
const good = { scenarios: [1, 2], rolloutsPerGroup: 2, trainEvery: { groups: 1 } };

it("refuses bad options naming the field, before any group is submitted", async () => {
  const cases: [unknown, object, string][] = [
    [{}, good, "executor"],
    [executor, { ...good, rolloutsPerGroup: 0 }, "options.rolloutsPerGroup"],
    [executor, { ...good, rolloutsPerGroup: 2.5 }, "options.rolloutsPerGroup"],
    [executor, { ...good, scenarios: 5 }, "options.scenarios"],
    [executor, { ...good, trainEvery: { groups: 0 } }, "options.trainEvery.groups"],
    [executor, { ...good, maxGroupsInFlight: -1 }, "options.maxGroupsInFlight"],
    [executor, { ...good, groupId: "g" }, "options.groupId"],
  ];
  for (const [target, options, field] of cases) {
    const error = await trainWithExecutor(model, target as never, options as never).catch(
      (e: unknown) => e,
    );
    expect(InvalidArgumentError.isInstance(error), field).toBe(true);
    expect((error as InvalidArgumentError).argument).toBe(field);
  }
  // The shipper's own check names the model.
  await expect(trainWithExecutor(model, executor, good)).rejects.toThrow(/options\.model/);
  expect(executor.stats().submitted).toBe(0);
  await executor.close();
});

it("stops on its signal: cancels the groups still out, closes the shipper, and counts each", async () => {
  const emu = await startEmulator({ port: 0, apiKeys: ["k"] });
  try {
    const client = new TrainingClient({ apiKey: "k", baseURL: emu.url });
    const model = await TrainableModel.register(client, {
      project: "p",
      name: `stop${Date.now()}`,
      baseModel: "emulator/toy-bigram",
    });
    const stop = new AbortController();
    let started = 0;
    // Groups 0-2 finish; 3 and 4 never do: the loop is stopped once both run.
    const executor = new InProcessExecutor<number>({
      rollout: (n, { index, signal }) => {
        started++;
        if (n < 3)
          return new Trajectory({
            messages_and_choices: [{ role: "user", content: `scenario ${n}` }],
            reward: index,
          });
        if (n === 4 && index === 1) setTimeout(() => stop.abort(), 20);
        return new Promise<Trajectory>((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason)),
        );
      },
    });
    async function* endless() {
      for (let n = 0; ; n++) yield n;
    }
    const lines: string[] = [];
    const logger = { warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
    const result = await trainWithExecutor(model, executor, {
      scenarios: endless(),
      rolloutsPerGroup: 2,
      trainEvery: { groups: 100 },
      maxGroupsInFlight: 2,
      shipper: { flushOnExit: false, logger, validate: false },
      signal: stop.signal,
    });
    expect(result).toMatchObject({ submitted: 5, scored: 3, failed: 0, cancelled: 2 });
    expect(result.shipper).toMatchObject({ shipped: 3, failed: 0, trainingJobs: 0 });
    expect(started).toBe(10);
    expect(executor.stats()).toMatchObject({ running: 0, scored: 3, cancelled: 2 });
    await executor.close();
  } finally {
    await emu.close();
  }
});
