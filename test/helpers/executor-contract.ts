// What every RolloutExecutor must do, written once and run against each
// implementation (in process, BullMQ on a real Redis): a test file supplies
// a rig that builds the executor around `runRollout`, and calls
// `executorContract(name, makeRig)`.
import { InvalidArgumentError, Trajectory, type TrajectoryGroup } from "trajectory-recorder";
import type { RolloutExecutor, RolloutOutcome } from "trajectory-recorder/core";
import { afterEach, expect, it } from "vitest";

export interface Scenario {
  name: string;
  /** Rollout 1 of the group throws. */
  fail?: boolean;
  /** The group's rollouts wait for `gate.open()`. */
  held?: boolean;
}

/** Rollouts of held groups wait on it. */
export class Gate {
  #open!: () => void;
  readonly opened = new Promise<void>((resolve) => {
    this.#open = resolve;
  });
  open(): void {
    this.#open();
  }
}

/** What the shared tests watch: rollouts started per group. */
export class RolloutLog {
  readonly started = new Map<string, number>();
  count(groupId: string): number {
    return this.started.get(groupId) ?? 0;
  }
}

/**
 * The one rollout every rig runs: counts its start, waits if held, throws if
 * asked, and returns a trajectory whose reward is its index (a group's
 * rewards differ).
 */
export async function runRollout(
  scenario: Scenario,
  groupId: string,
  index: number,
  log: RolloutLog,
  gate: Gate,
): Promise<Trajectory> {
  log.started.set(groupId, log.count(groupId) + 1);
  if (scenario.held) await gate.opened;
  if (scenario.fail && index === 1) throw new Error(`rollout ${index} of ${groupId} broke`);
  return new Trajectory({
    messages_and_choices: [{ role: "user", content: `say ${scenario.name}` }],
    reward: index / 10,
  });
}

export interface RigOptions {
  log: RolloutLog;
  gate: Gate;
  /** Rollouts running at once (in process), or the worker's concurrency. */
  concurrency: number;
  /** Scores each group: marks it, as a judge would. */
  afterEach: (group: TrajectoryGroup) => TrajectoryGroup;
}

export interface Rig {
  executor: RolloutExecutor<Scenario>;
  close(): Promise<void>;
}

export type MakeRig = (options: RigOptions) => Promise<Rig>;

const score = (group: TrajectoryGroup) => {
  group.metadata.scored = true;
  return group;
};

/** Takes outcomes until `n` have come (or `stopWhen` says so), then leaves the loop. */
async function take(
  executor: RolloutExecutor<Scenario>,
  n: number,
  onEach?: (o: RolloutOutcome) => void,
): Promise<RolloutOutcome[]> {
  const out: RolloutOutcome[] = [];
  if (n === 0) return out;
  for await (const o of executor.collect()) {
    out.push(o);
    onEach?.(o);
    if (out.length >= n) break;
  }
  return out;
}

export function executorContract(name: string, makeRig: MakeRig): void {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });
  const start = async (concurrency: number) => {
    const log = new RolloutLog();
    const gate = new Gate();
    rig = await makeRig({ log, gate, concurrency, afterEach: score });
    return { log, gate, executor: rig.executor };
  };

  it(`${name}: hands every group back scored, each once, in the order they finish`, async () => {
    const { gate, executor } = await start(4);
    await executor.submit({ id: "slow", scenario: { name: "slow", held: true }, rollouts: 3 });
    for (const id of ["f1", "f2", "f3"])
      await executor.submit({ id, scenario: { name: id }, rollouts: 3, metadata: { tag: id } });
    // The held group finished last whatever its place in the submissions.
    const first = await take(executor, 3);
    gate.open();
    const last = await take(executor, 1);
    const all = [...first, ...last];
    expect(first.map((o) => o.id).sort()).toEqual(["f1", "f2", "f3"]);
    expect(last.map((o) => o.id)).toEqual(["slow"]);
    for (const o of all) {
      expect(o.status).toBe("scored");
      const group = (o as { group: TrajectoryGroup }).group;
      expect(group.metadata.group_id).toBe(o.id);
      expect(group.metadata.scored).toBe(true);
      if (o.id !== "slow") expect(group.metadata.tag).toBe(o.id);
      expect(group.trajectories.map((t) => t.reward).sort()).toEqual([0, 0.1, 0.2]);
    }
    expect(executor.stats()).toMatchObject({
      submitted: 4,
      running: 0,
      scored: 4,
      failed: 0,
      cancelled: 0,
    });
  });

  it(`${name}: cancel stops the rollouts not started, and the group never comes out`, async () => {
    const { log, gate, executor } = await start(1);
    await executor.submit({ id: "held", scenario: { name: "held", held: true }, rollouts: 2 });
    await executor.submit({ id: "victim", scenario: { name: "victim" }, rollouts: 2 });
    await until(() => log.count("held") >= 1, "the held group's first rollout to start");
    expect(await executor.cancel("victim")).toBe(true);
    expect(await executor.cancel("never-submitted")).toBe(false);
    // Queued behind the cancelled group: once it is back, the victim's turn has passed.
    await executor.submit({ id: "after", scenario: { name: "after" }, rollouts: 1 });
    gate.open();
    const outcomes = await take(executor, 2);
    expect(outcomes.map((o) => o.id).sort()).toEqual(["after", "held"]);
    expect(log.count("victim")).toBe(0);
    expect(executor.stats()).toMatchObject({ submitted: 3, running: 0, scored: 2, cancelled: 1 });
  });

  it(`${name}: loses nothing: a group past maxExceptions comes out failed, the rest scored`, async () => {
    const { executor } = await start(4);
    const ids = ["ok1", "bad", "ok2"];
    for (const id of ids)
      await executor.submit({ id, scenario: { name: id, fail: id === "bad" }, rollouts: 3 });
    const outcomes = await take(executor, 3);
    expect(outcomes.map((o) => o.id).sort()).toEqual([...ids].sort());
    const failed = outcomes.filter((o) => o.status === "failed");
    expect(failed.map((o) => o.id)).toEqual(["bad"]);
    expect((failed[0] as { error: Error }).error.message).toMatch(/bad|exception|rollout/i);
    const s = executor.stats();
    expect(s).toMatchObject({ submitted: 3, running: 0, scored: 2, failed: 1, waiting: 0 });
    expect(s.scored + s.failed + s.cancelled + s.running).toBe(s.submitted);
  });

  it(`${name}: refuses a malformed group naming the field, before anything runs`, async () => {
    const { log, executor } = await start(2);
    const cases: [unknown, string][] = [
      [{ id: "", scenario: {}, rollouts: 2 }, "request.id"],
      [{ scenario: {}, rollouts: 2 }, "request.id"],
      [{ id: "g", scenario: {}, rollouts: 0 }, "request.rollouts"],
      [{ id: "g", scenario: {}, rollouts: 1.5 }, "request.rollouts"],
      [{ id: "g", scenario: {}, rollouts: 2, metadata: "x" }, "request.metadata"],
      [null, "request"],
    ];
    for (const [request, field] of cases) {
      const error = await executor.submit(request as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(InvalidArgumentError.isInstance(error), field).toBe(true);
      expect((error as InvalidArgumentError).argument).toBe(field);
      expect((error as Error).message).toContain(field);
    }
    await expect(executor.cancel(42 as never)).rejects.toThrow(/id: expected a string/);
    expect(log.started.size).toBe(0);
    expect(executor.stats().submitted).toBe(0);
  });
}

/** Resolves once `condition` holds, checked every 20 ms (never a fixed wait). */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
