import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import {
  groupAdvantages,
  loadJsonl,
  renderReport,
  stepStats,
  writeReport,
} from "../../src/report/index.js";
import { pageTokens } from "../../src/report/tokens.js";
import { SCRIPT } from "../../src/report/viewer.js";
import { recordedRun, SCENARIOS } from "./fixture.js";

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

/** The page's index and chunks, as the browser reads them. */
function pageData(html: string) {
  const index = JSON.parse(
    /<script type="application\/json" id="report-index">([^<]*)<\/script>/.exec(html)![1]!,
  );
  const chunks: any[] = [];
  for (const m of html.matchAll(
    /<script type="application\/json" id="chunk-(\d+)">([^<]*)<\/script>/g,
  ))
    chunks[Number(m[1])] = JSON.parse(m[2]!);
  return { index, trajectories: chunks.flat() };
}

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

it("computes advantages as the trainer does: centred, scaled by the std unless scale_rewards is off, balanced", () => {
  const a = groupAdvantages([1, 0, 0, 1]);
  expect(a.map((x) => Number(x.toFixed(5)))).toEqual([1, -1, -1, 1]);
  expect(groupAdvantages([1, 0, 0, 1], false)).toEqual([0.5, -0.5, -0.5, 0.5]);
  expect(groupAdvantages([1, 0], false, 0.5)).toEqual([0.5, -0.25]);
  expect(groupAdvantages([0.5, 0.5, 0.5])).toEqual([0, 0, 0]);
});

it("turns vLLM token ids into the text they produced, and keeps each token's probability and alternatives", () => {
  // The recorder's defaults: token ids, whose bytes spell the label itself.
  const label = (id: number) => ({
    token: `token_id:${id}`,
    bytes: [...Buffer.from(`token_id:${id}`)],
  });
  const ids = pageTokens(
    {
      content: [
        {
          ...label(6),
          logprob: -0.1,
          top_logprobs: [
            { ...label(6), logprob: -0.1 },
            { ...label(9), logprob: -2.3 },
          ],
        },
        { ...label(7), logprob: -1.2, top_logprobs: [] },
        { ...label(2), logprob: -0.01, top_logprobs: [] },
      ],
    },
    "three apples",
  );
  expect(ids).toEqual({
    mode: "order",
    extra: 1,
    tokens: [
      [
        "three",
        -0.1,
        [
          [6, -0.1],
          [9, -2.3],
        ],
      ],
      [" apples", -1.2, []],
      ["token_id:2", -0.01, []],
    ],
  });
  // Text tokens whose bytes split a character: each token gets what it completed.
  const euro = [...Buffer.from("€")];
  const split = pageTokens(
    {
      content: [
        { token: "bytes:\\xe2", bytes: euro.slice(0, 2), logprob: -1 },
        { token: "bytes:\\xac", bytes: euro.slice(2), logprob: -1 },
        { token: " 5", bytes: [...Buffer.from(" 5")], logprob: -0.5 },
      ],
    },
    "€ 5",
  );
  expect(split?.mode).toBe("exact");
  expect(split?.tokens.map((t) => t[0])).toEqual(["", "€", " 5"]);
  // A null entry: the logprobs are shown as JSON, never dropped.
  expect(pageTokens({ content: [null] }, "x")).toEqual({
    mode: "raw",
    tokens: [],
    raw: { content: [null] },
  });
});

it("ships a viewer script that parses", () => {
  expect(() => new Function(SCRIPT)).not.toThrow();
});

it("renders one self-contained page: no external resource, data that cannot close its script", () => {
  const html = renderReport({
    title: "run <1>",
    steps: [{ step: 0, split: "train", groups: [{ trajectories: [traj(1, "</script><b>")] }] }],
  });
  expect(html).toContain("<title>run &lt;1&gt;</title>");
  expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  // The index, one chunk and the viewer.
  expect(html.match(/<\/script>/g)).toHaveLength(3);
  const { trajectories } = pageData(html);
  const choice = trajectories[0].histories[0].items[1];
  expect(choice.text).toBe("</script><b>");
  expect(choice.tok).toEqual({ mode: "exact", tokens: [["</script><b>", -0.5, []]] });
});

it("keeps every odd field as data to show, and draws steps and rewards of ±1e308 with finite coordinates", () => {
  const odd = {
    messages_and_choices: [
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:," } }] },
      {
        index: 0,
        finish_reason: "stop",
        message: { role: "assistant", content: "ok", tool_calls: { not: "a list" } },
        logprobs: { content: [null] },
      },
      "not a message",
    ],
    tools: "check_stock",
    additional_histories: [{ messages_and_choices: null }],
    reward: 1e308,
    metrics: { n: 1 },
    logs: ["a log line"],
    novel: { kept: true },
  };
  const html = renderReport({
    steps: [
      { step: -1e308, split: "train", groups: [{ trajectories: [odd as never, traj(-1e308)] }] },
      { step: 1e308, split: "train", groups: [{ trajectories: [traj(0.5)] }] },
    ],
  });
  const coords = [...html.matchAll(/ (?:cx|cy|x1|x2|y1|y2|points)="([^"]*)"/g)].map((m) => m[1]!);
  expect(coords.length).toBeGreaterThan(10);
  for (const c of coords) expect(c).not.toMatch(/NaN|Infinity/);
  const { trajectories } = pageData(html);
  const [main, extra] = trajectories[0].histories;
  expect(main.rawTools).toBe("check_stock");
  expect(main.items[0].rawContent).toEqual([{ type: "image_url", image_url: { url: "data:," } }]);
  expect(main.items[1].rawCalls).toEqual({ not: "a list" });
  expect(main.items[1].tok).toEqual({ mode: "raw", tokens: [], raw: { content: [null] } });
  expect(main.items[2]).toEqual({ k: "x", raw: "not a message" });
  expect(extra.items).toEqual([{ k: "x", raw: null }]);
  expect(trajectories[0].other).toEqual({ novel: { kept: true } });
});

it("builds a step of 200,000 trajectories and a line nested 10,000 deep without a stack overflow", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "report-scale-"));
  const file = path.join(dir, "big.jsonl");
  let deep = "1";
  for (let i = 0; i < 10_000; i++) deep = `{"a":${deep}}`;
  const small = (i: number) =>
    `{"messages_and_choices":[{"role":"user","content":"q${i}"}],"reward":${i % 2},"metadata":{"scenario":"s${i % 50}"}}`;
  const lines = [`{"messages_and_choices":[],"reward":0,"metadata":{"deep":${deep}}}`];
  for (let i = 0; i < 200_000; i++) lines.push(small(i));
  await writeFile(file, `${lines.join("\n")}\n`);
  const out = path.join(dir, "big.html");
  const written = await writeReport({ groupsFile: file, out });
  expect(written.trajectories).toBe(200_001);
  expect(written.bytes).toBe((await stat(out)).size);
  const html = await readFile(out, "utf8");
  // Lazily loaded: the trajectories come in many small chunks the page parses on demand.
  const chunks = html.match(/id="chunk-\d+"/g) ?? [];
  expect(chunks.length).toBeGreaterThan(400);
  expect(html).toContain("nested deeper than 48 levels");
}, 120_000);

it("says so on the page when the run holds nothing", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "report-empty-"));
  const written = await writeReport({ run: { steps: [] }, out: path.join(dir, "empty.html") });
  expect(written.trajectories).toBe(0);
  expect(await readFile(written.path, "utf8")).toContain("Nothing logged");
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

it("writes the report of an emulator run: jobs and their metrics per step, groups named and marked, checkpoints evaluated as val", async () => {
  const { dataDir, modelName, evaluations } = await recordedRun();
  // evaluateCheckpoints answered each scenario twice at each chosen step.
  expect(
    evaluations.map((e) => [e.step, e.split, e.groups.map((g) => g.trajectories.length)]),
  ).toEqual([
    [0, "val", [2, 2]],
    [2, "val", [2, 2]],
  ]);
  for (const e of evaluations)
    for (const t of e.groups.flatMap((g) => g.trajectories)) {
      expect(t.metadata.checkpoint_step).toBe(e.step);
      expect(t.initial_policy_version).toBe(e.step);
    }
  const out = path.join(dataDir, "out", "report.html");
  const result = await writeReport({ dataDir, out });
  expect(result).toMatchObject({ path: out, steps: 3, trajectories: 30 });
  const html = await readFile(out, "utf8");
  expect(html).toContain(`demo/${modelName.replace("<", "&lt;").replace(">", "&gt;")}`);
  const { index, trajectories } = pageData(html);
  // train at steps 0 and 1 (the checkpoints the rollouts came from), val at the evaluated steps 0 and 2.
  expect(index.steps.map((s: any) => [s.split, s.step])).toEqual([
    ["train", 0],
    ["val", 0],
    ["train", 1],
    ["val", 2],
  ]);
  expect(index.groups.map((g: any) => g.scenario).slice(0, 3)).toEqual([...SCENARIOS, "pear"]);
  expect(index.groups.map((g: any) => g.signal).slice(0, 3)).toEqual([true, true, false]);
  expect(index.groups[2].exceptions[0].message).toBe("the sandbox timed out");
  expect(index.training.map((t: any) => [t.step, t.job.status])).toEqual([
    [0, "COMPLETED"],
    [1, "COMPLETED"],
  ]);
  // The service's names, shown under ART's (as model.train returns them), in every report.
  for (const key of [
    "loss/train",
    "loss/entropy",
    "loss/grad_norm",
    "loss/learning_rate",
    "data/step_trainer_tokens",
    "clipped_fraction",
    "mean_importance_ratio",
  ])
    expect(typeof index.training[0].metrics[key]).toBe("number");
  for (const key of ["loss", "policy_loss", "entropy", "grad_norm", "num_trainable_tokens"])
    expect(index.training[0].metrics[key]).toBeUndefined();
  // Val groups were evaluated, never trained: no advantage.
  const val = index.groups.filter((g: any) => index.steps[g.s].split === "val");
  expect(val.length).toBeGreaterThan(0);
  for (const g of val) {
    expect(g.trained).toBe(false);
    expect(index.advantage.slice(g.first, g.first + g.n).every((a: any) => a === null)).toBe(true);
  }
  // The trajectories' own metrics, per step: tool calls (each rollout calls the tool 0 or 1 times).
  const [mean, std, min, max, count] = index.steps[0].m.tool_calls;
  expect(count).toBe(11);
  expect(min).toBeGreaterThanOrEqual(0);
  expect(max).toBeLessThanOrEqual(1);
  expect(mean).toBeGreaterThanOrEqual(min);
  expect(std).toBeGreaterThanOrEqual(0);
  // The advantages the trainer computed: (reward - mean) / (std + 1e-6) per group.
  const first = index.groups[0];
  const rewards = index.reward.slice(first.first, first.first + first.n);
  expect(index.advantage.slice(first.first, first.first + first.n)).toEqual(
    groupAdvantages(rewards),
  );
  // Token ids became words (the emulator, as vLLM, sends each token's text as
  // its bytes, so they decode exactly), and every history is there with its
  // trained Choices.
  const withTool = trajectories.find((t: any) => t.histories.length === 2);
  const [main, sub] = withTool.histories;
  const answer = main.items.find((m: any) => m.k === "c" && m.text);
  expect(answer.tok.mode).toBe("exact");
  // An answer that ended by itself ends with its end token, shown apart (extra).
  const shown = answer.tok.extra ? answer.tok.tokens.slice(0, -1) : answer.tok.tokens;
  expect(shown.map((t: any) => t[0]).join("")).toBe(answer.text);
  if (answer.tok.extra) expect(answer.tok.tokens.at(-1)[0]).toBe("<eos>");
  expect(main.items.some((m: any) => m.role === "tool" && m.callId)).toBe(true);
  expect(sub.items.at(-1).k).toBe("c");
  expect(withTool.logs[0]).toMatch(/^asked about/);
  expect(withTool.metrics.tool_calls).toBeGreaterThan(0);

  await expect(writeReport({ out })).rejects.toThrow("exactly one of dataDir");
  await expect(writeReport({ dataDir: path.join(dataDir, "missing"), out })).rejects.toThrow(
    "Cannot read the emulator's state",
  );
}, 60_000);
