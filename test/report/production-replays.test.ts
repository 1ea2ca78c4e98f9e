// The Production view beside a training run: each production trajectory with
// the replayed groups the run trained from its state (their answers and
// rewards), and a table of infrastructure failures per step, among the
// trajectories each checkpoint served and among those trained at the step.
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { writeReport } from "../../src/report/index.js";
import { type ReplayRun, replayRun } from "./replay-fixture.js";

let fx: ReplayRun;
let html: string;
beforeAll(async () => {
  fx = await replayRun();
  const out = path.join(fx.storeDir, "..", "report.html");
  const written = await writeReport({ dataDir: fx.dataDir, store: fx.storeDir, out });
  expect(written.production).toBe(2);
  html = await readFile(out, "utf8");
}, 60_000);
afterAll(async () => {
  await rm(path.dirname(fx.storeDir), { recursive: true, force: true });
});

const rows = () =>
  JSON.parse(
    /<script type="application\/json" id="production-index">([^<]*)<\/script>/.exec(html)![1]!,
  ) as any[];

it("puts each replayed group the run trained beside the production trajectory whose state it replayed", () => {
  const byId = new Map(rows().map((r) => [r.id, r]));
  const replayed = byId.get(fx.ids.replayed);
  expect(replayed.replays).toHaveLength(1);
  const [group] = replayed.replays;
  expect(group).toMatchObject({ step: 0, split: "train" });
  // The sample left out as an infrastructure failure is shown, marked; the
  // job itself trained on the other three.
  expect(group.samples.map((s: any) => s.infraFailure)).toEqual([null, null, null, "stream_cut"]);
  const trained = group.samples.filter((s: any) => s.infraFailure === null);
  expect(trained.map((s: any) => s.reward)).toEqual(fx.rewards.slice(0, 3));
  expect(trained.map((s: any) => s.text)).toEqual(fx.answers.slice(0, 3));
  expect(byId.get(fx.ids.failed).replays).toEqual([]);
});

it("marks the production trajectory the infrastructure failed, and records the step that served each", () => {
  const byId = new Map(rows().map((r) => [r.id, r]));
  expect(byId.get(fx.ids.failed)).toMatchObject({ infraFailure: "upstream_error", version: 0 });
  expect(byId.get(fx.ids.replayed)).toMatchObject({ infraFailure: null, version: 0 });
});

it("counts infrastructure failures per step, served in production and in the training groups", () => {
  const table = /<div class="card" id="p-infra">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? "";
  expect(table).toContain("Infrastructure failures per step");
  const step0 = /<tr data-step="0">([\s\S]*?)<\/tr>/.exec(table)?.[1] ?? "";
  expect(step0).toContain('<td class="num" data-col="served">1 of 2</td>');
  expect(step0).toContain('<td class="num" data-col="trained">1 of 4</td>');
});
