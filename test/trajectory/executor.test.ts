import { InvalidArgumentError, Trajectory } from "trajectory-recorder";
import { InProcessExecutor } from "trajectory-recorder/core";
import { expect, it } from "vitest";
import { OutcomeChannel } from "../../src/trajectory/index.js";
import { executorContract, runRollout, type Scenario } from "../helpers/executor-contract.js";

const quiet = { warn: () => {} };

executorContract("in process", async ({ log, gate, concurrency, afterEach }) => {
  const executor = new InProcessExecutor<Scenario>({
    rollout: (scenario, { groupId, index }) => runRollout(scenario, groupId, index, log, gate),
    concurrency,
    afterEach,
    logger: quiet,
  });
  return {
    executor,
    close: async () => {
      gate.open();
      await executor.close();
    },
  };
});

it("bounds the rollouts running at once across every group", async () => {
  let running = 0;
  let peak = 0;
  const executor = new InProcessExecutor<number>({
    concurrency: 3,
    rollout: async (n) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      return new Trajectory({ messages_and_choices: [{ role: "user", content: "x" }], reward: n });
    },
  });
  for (let i = 0; i < 4; i++) await executor.submit({ id: `g${i}`, scenario: i, rollouts: 4 });
  const ids: string[] = [];
  for await (const o of executor.collect()) {
    ids.push(o.id);
    if (ids.length === 4) break;
  }
  await executor.close();
  expect(ids.sort()).toEqual(["g0", "g1", "g2", "g3"]);
  expect(peak).toBe(3);
});

it("gives each rollout a signal that aborts when its group is cancelled", async () => {
  let seen: AbortSignal | undefined;
  const executor = new InProcessExecutor({
    rollout: (_s, { signal }) => {
      seen = signal;
      return new Promise<Trajectory>(() => {});
    },
    logger: quiet,
  });
  await executor.submit({ id: "g", scenario: null, rollouts: 1 });
  while (!seen) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(seen.aborted).toBe(false);
  await executor.cancel("g");
  expect(seen.aborted).toBe(true);
  await executor.close();
});

it("refuses bad options naming the field, and a second id while the first runs", async () => {
  const make = (options: object) => () => new InProcessExecutor(options as never);
  expect(make({})).toThrow(/options\.rollout: expected a function/);
  expect(make({ rollout: () => null, concurrency: 0 })).toThrow(/options\.concurrency/);
  expect(make({ rollout: () => null, maxExceptions: -1 })).toThrow(/options\.maxExceptions/);
  expect(make({ rollout: () => null, afterEach: "no" })).toThrow(/options\.afterEach/);
  const executor = new InProcessExecutor({
    rollout: () => new Promise<Trajectory>(() => {}),
    logger: quiet,
  });
  await executor.submit({ id: "g", scenario: 1, rollouts: 1 });
  const error = await executor
    .submit({ id: "g", scenario: 1, rollouts: 1 })
    .catch((e: unknown) => e);
  expect(InvalidArgumentError.isInstance(error)).toBe(true);
  expect((error as InvalidArgumentError).argument).toBe("request.id");
  await executor.close();
  await expect(executor.submit({ id: "h", scenario: 1, rollouts: 1 })).rejects.toThrow(/closed/);
});

it("admits one collecting loop at a time", async () => {
  const executor = new InProcessExecutor({
    rollout: () => new Trajectory({ messages_and_choices: [], reward: 0 }),
  });
  const first = executor.collect()[Symbol.asyncIterator]();
  expect(() => executor.collect()[Symbol.asyncIterator]()).toThrow(/one consumer at a time/);
  await first.return?.();
  expect(() => executor.collect()[Symbol.asyncIterator]()).not.toThrow();
  await executor.close();
});

it("counts an outcome delivered only once the loop asks for the next; a loop that left takes nothing", async () => {
  const failed = (id: string) => ({ status: "failed" as const, id, error: new Error(id) });
  const channel = new OutcomeChannel("T");
  const left = channel.iterate()[Symbol.asyncIterator]();
  const waiting = left.next();
  await left.return?.();
  expect(await waiting).toEqual({ done: true, value: undefined });

  let delivered = false;
  const pushed = channel.push(failed("a")).then(() => {
    delivered = true;
  });
  // The loop that left, asked again, still takes nothing.
  expect(await left.next()).toEqual({ done: true, value: undefined });
  const loop = channel.iterate()[Symbol.asyncIterator]();
  expect((await loop.next()).value?.id).toBe("a");
  await new Promise((resolve) => setTimeout(resolve, 5));
  expect(delivered).toBe(false);
  const second = loop.next();
  await pushed;
  expect(delivered).toBe(true);
  expect(channel.close()).toBe(0);
  expect((await second).done).toBe(true);

  const other = new OutcomeChannel("T");
  const untaken = other.push(failed("b"));
  expect(other.close()).toBe(1);
  await expect(untaken).rejects.toThrow(/closed before this group was collected/);
});
