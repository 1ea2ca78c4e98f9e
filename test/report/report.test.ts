import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { loadJsonl, renderReport, stepStats, writeReport } from "../../src/report/index.js";
import { recordedRun } from "./fixture.js";

const traj = (reward: number, text = "red") => ({
  messages_and_choices: [
    { role: "user", content: "say red" },
    {
      index: 0,
      finish_reason: "stop",
      message: { role: "assistant", content: text },
      logprobs: { content: [{ token: text, logprob: -0.5, top_logprobs: [], bytes: [1] }] },
    },
  ],
  reward,
});

it("computes the mean, spread and range of each step's rewards", () => {
  const stats = stepStats({
    steps: [
      { step: 1, split: "train", groups: [{ trajectories: [traj(1), traj(0)] }] },
      { step: 0, split: "train", groups: [{ trajectories: [traj(0.5)] }, { trajectories: [] }] },
      { step: 2, split: "train", groups: [] },
    ],
  });
  expect(stats).toEqual([
    { step: 0, split: "train", mean: 0.5, std: 0, min: 0.5, max: 0.5, count: 1 },
    { step: 1, split: "train", mean: 0.5, std: 0.5, min: 0, max: 1, count: 2 },
  ]);
});

it("renders one self-contained page: no external resource, data that cannot close its script", () => {
  const html = renderReport({
    title: "run <1>",
    steps: [{ step: 0, split: "train", groups: [{ trajectories: [traj(1, "</script><b>")] }] }],
  });
  expect(html).toContain("<title>run &lt;1&gt;</title>");
  expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  expect(html.match(/<\/script>/g)).toHaveLength(2);
  const data = /<script type="application\/json" id="report-data">([^<]*)<\/script>/.exec(html);
  const parsed = JSON.parse(data![1]!);
  expect(parsed.steps[0].groups[0].trajectories[0].messages_and_choices[1].message.content).toBe(
    "</script><b>",
  );
  // Alternatives and bytes are left out to keep the file small.
  expect(
    parsed.steps[0].groups[0].trajectories[0].messages_and_choices[1].logprobs.content[0],
  ).toEqual({
    token: "</script><b>",
    logprob: -0.5,
  });
});

it("reads JSONL of groups, of steps and of lone trajectories, and names a bad line", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "report-jsonl-"));
  const file = path.join(dir, "groups.jsonl");
  const lines = [
    { trajectories: [traj(0), traj(1)], metadata: { step: 1 } },
    { trajectories: [traj(1)] },
    { step: 1, split: "val", trajectory_groups: [{ trajectories: [traj(0.5)] }] },
    { ...traj(0.25), step: 2 },
  ];
  await writeFile(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  const run = await loadJsonl(file);
  expect(
    run.steps.map((s) => [s.split, s.step, s.groups.map((g) => g.trajectories.length)]),
  ).toEqual([
    ["train", 0, [1]],
    ["train", 1, [2]],
    ["val", 1, [1]],
    ["train", 2, [1]],
  ]);
  await writeFile(file, `${JSON.stringify(lines[0])}\nnot json\n`);
  await expect(loadJsonl(file)).rejects.toThrow(`${file}:2 is not JSON`);
});

it("writes the report of an emulator data directory: each training job at its step, and logged splits", async () => {
  const { dataDir, modelName } = await recordedRun();
  const out = path.join(dataDir, "out", "report.html");
  const result = await writeReport({ dataDir, out });
  expect(result).toEqual({ path: out, steps: 3, trajectories: 36 });
  const html = await readFile(out, "utf8");
  expect(html).toContain(`demo/${modelName.replace("<", "&lt;").replace(">", "&gt;")}`);
  // train at steps 0 and 1 (the checkpoints the rollouts came from), val logged at step 2.
  expect(html).toMatch(
    /<td>train<\/td><td>0<\/td>.*<td>train<\/td><td>1<\/td>.*<td>val<\/td><td>2<\/td>/s,
  );
  await expect(writeReport({ out })).rejects.toThrow("exactly one of dataDir");
  await expect(writeReport({ dataDir: path.join(dataDir, "missing"), out })).rejects.toThrow(
    "Cannot read the emulator's state",
  );
});
