import { RolloutProducer, readProgress, unhanded } from "trajectory-recorder/bullmq";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Child, runChild } from "../e2e/child.js";
import { type Harness, startHarness } from "./harness.js";

let h: Harness;
const children: Child[] = [];
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (process.env.DEBUG_DISTRIBUTED) console.log(`--- ${c.proc.pid}\n${c.output()}`);
    if (c.proc.exitCode === null) {
      c.proc.kill("SIGKILL");
      await c.exit;
    }
  }
  await h.close();
});

const spawn = (fixture: string, config: object) => {
  const child = runChild(`../../distributed/fixtures/${fixture}`, [JSON.stringify(config)]);
  children.push(child);
  return child;
};
const kill9 = async (child: Child) => {
  child.proc.kill("SIGKILL");
  await child.exit;
};

it("loses and duplicates nothing when a worker and the coordinator are killed with SIGKILL midway", async () => {
  const port = h.redis.port;
  const workers = [0, 1, 2].map(() =>
    spawn("worker.ts", {
      port,
      baseURL: h.tap.url,
      modelName: h.model.inferenceName(),
      pauseMs: 300,
    }),
  );
  await Promise.all(workers.map((w) => w.waitFor(/ready \d+/)));
  const coordinatorConfig = {
    port,
    baseURL: h.tap.url,
    project: h.model.project,
    name: h.model.name,
    trainEvery: 3,
    scorePauseMs: 400,
  };
  const first = spawn("coordinator.ts", coordinatorConfig);
  await first.waitFor(/ready \d+/);

  const ids = ["red", "cat", "apple", "two", "dog", "blue"].map((t) => `g-${t}`);
  const producer = new RolloutProducer({ connection: h.redis.connection });
  await producer.enqueue(ids.map((id) => ({ id, payload: { target: id.slice(2) }, rollouts: 4 })));
  await producer.close();

  // A worker dies between the two calls of a rollout: its lock lapses and
  // another worker runs that rollout again from the start.
  const victim = workers[0] as Child;
  await victim.waitFor(/start \S+ attempt 1\n/);
  const cut = /start (\S+) attempt 1\n/.exec(victim.output())?.[1] as string;
  await kill9(victim);
  expect(victim.output()).not.toContain(`done ${cut}`);

  // The coordinator dies while it scores a group, after it stored another.
  await first.waitFor(/collected \S+\n[\s\S]*scoring \S+\n/);
  await kill9(first);
  const second = spawn("coordinator.ts", coordinatorConfig);
  await second.waitFor(/total=6\n/);

  const others = workers
    .slice(1)
    .map((w) => w.output())
    .join("");
  // Run again after its worker died: ctx.attempt counts that run.
  expect(others).toContain(`start ${cut} attempt 2`);
  expect(others).toContain(`done ${cut}`);

  // What the service was sent: every group once, each with all its rollouts.
  expect(h.tap.jobs).toHaveLength(2);
  const sent = h.tap.jobs.flat();
  expect(sent.map((g) => g.metadata.group_id).sort()).toEqual([...ids].sort());
  for (const g of sent) {
    expect(g.trajectories.map((t) => t.metadata.rollout_index)).toEqual([0, 1, 2, 3]);
    expect(g.exceptions).toEqual([]);
    for (const t of g.trajectories) {
      expect(t.initial_policy_version).toEqual(expect.any(Number));
      expect(t.final_policy_version).toBeGreaterThanOrEqual(t.initial_policy_version as number);
    }
  }
  const p = await readProgress({ connection: h.redis.connection });
  expect(p.groups).toMatchObject({ finished: 6, failed: 0, trained: 6, stale: 0 });
  expect(p.rollouts).toMatchObject({ finished: 24, failed: 0, queued: 0 });
  expect(p.trainingJobs).toBe(2);
}, 120_000);

it("a coordinator killed between the job's creation and saving its id: the next one reports the batch's groups instead of training them again", async () => {
  const port = h.redis.port;
  const worker = spawn("worker.ts", {
    port,
    baseURL: h.tap.url,
    modelName: h.model.inferenceName(),
    pauseMs: 0,
  });
  await worker.waitFor(/ready \d+/);
  const coordinatorConfig = {
    port,
    baseURL: h.tap.url,
    project: h.model.project,
    name: h.model.name,
    trainEvery: 2,
    scorePauseMs: 0,
  };
  const first = spawn("coordinator.ts", { ...coordinatorConfig, hangOnJobCreated: true });
  await first.waitFor(/ready \d+/);
  const ids = ["g-red", "g-cat"];
  const producer = new RolloutProducer({ connection: h.redis.connection });
  await producer.enqueue(ids.map((id) => ({ id, payload: { target: id.slice(2) }, rollouts: 2 })));
  await producer.close();
  await first.waitFor(/created \S+/);
  await kill9(first);

  const second = spawn("coordinator.ts", coordinatorConfig);
  await second.waitFor(/groups\.uncertain/);
  expect(second.output()).toMatch(/batch 1 \(2 groups: g-\w+, g-\w+\) was being sent/);
  const p = await readProgress({ connection: h.redis.connection, ids: true });
  expect(p.groups).toMatchObject({ uncertain: 2, trained: 0, training: 0, total: 2 });
  expect(p.ids?.uncertain).toEqual(["g-cat", "g-red"]);
  // The service saw the job once: 0 groups trained twice.
  expect(h.tap.jobs).toHaveLength(1);
  expect(await unhanded({ connection: h.redis.connection })).toMatchObject({
    uncertain: ["g-cat", "g-red"],
  });
}, 120_000);
