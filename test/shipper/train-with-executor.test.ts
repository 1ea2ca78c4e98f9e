import { InvalidArgumentError, Trajectory } from "trajectory-recorder";
import { InProcessExecutor, trainWithExecutor } from "trajectory-recorder/core";
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
