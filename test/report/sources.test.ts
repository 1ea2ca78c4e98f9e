// The report's newer pieces without a browser: trainer metrics under ART's
// names, groups marked as left out, runs combined, the service's checkpoints
// as a run, and the live server's refusals.
import { request } from "node:http";
import { expect, it } from "vitest";
import {
  artTrainingMetrics,
  combineRuns,
  notTrainedReason,
  type ReportRun,
  renderReport,
  serveReport,
  stepStats,
  trajectoryMetricStats,
} from "../../src/report/index.js";

const t = (
  reward: number,
  metadata?: Record<string, unknown>,
  metrics?: Record<string, unknown>,
) => ({
  messages_and_choices: [{ role: "user", content: "q" }],
  reward,
  ...(metadata ? { metadata } : {}),
  ...(metrics ? { metrics } : {}),
});

it("names the service's training metrics as ART does, whichever naming they came in", () => {
  expect(
    artTrainingMetrics({
      loss: 1,
      policy_loss: 2,
      entropy: 0.5,
      grad_norm: 3,
      learning_rate: 1e-5,
      num_trainable_tokens: 40,
      tokens_per_second: 99,
      mean_importance_ratio: 1,
      group_metric_acc: 0.5,
      bad: Number.NaN,
    }),
  ).toEqual({
    "loss/train": 2,
    "loss/entropy": 0.5,
    "loss/grad_norm": 3,
    "loss/learning_rate": 1e-5,
    "data/step_trainer_tokens": 40,
    mean_importance_ratio: 1,
    group_acc: 0.5,
  });
  // Already ART's (model.train's result): kept, and beats a raw key renamed onto it.
  expect(artTrainingMetrics({ "loss/train": 5, policy_loss: 7 })).toEqual({ "loss/train": 5 });
});

it("summarises the trajectories' own metrics per step, booleans as 0/1", () => {
  expect(
    trajectoryMetricStats([
      t(0, undefined, { calls: 1, ok: true, note: "x" }),
      t(0, undefined, { calls: 3, ok: false }),
      t(0),
    ]),
  ).toEqual({ calls: [2, 1, 1, 3, 2], ok: [0.5, 0.5, 0, 1, 2] });
});

it("reads every form of 'left out of training', and never names a group by it", () => {
  const leftOut = {
    trajectories: [t(1, { left_out: "no_reward_signal" }), t(1, { left_out: "no_reward_signal" })],
  };
  expect(notTrainedReason(leftOut)).toBe("left out of training (no reward signal)");
  expect(notTrainedReason({ metadata: { not_trained: "job failed" }, trajectories: [t(1)] })).toBe(
    "job failed",
  );
  expect(notTrainedReason({ metadata: { trained: false }, trajectories: [t(1)] })).toBe(
    "left out of training",
  );
  expect(notTrainedReason({ trajectories: [t(1, { left_out: "x" }), t(0)] })).toBeUndefined();
  const html = renderReport({ steps: [{ step: 0, split: "train", groups: [leftOut] }] });
  const index = JSON.parse(/id="report-index">(.*?)<\/script>/s.exec(html)![1]!);
  expect(index.groups[0]).toMatchObject({
    scenario: "group 1",
    trained: false,
    skip: "left out of training (no reward signal)",
  });
  // Its rewards still count in the step's mean.
  expect(html).toContain("0/1 · 1 not trained");
});

it("combines runs: each step, job and summary keeps its run; labels are made unique", () => {
  const run: ReportRun = {
    title: "p/m",
    steps: [{ step: 0, split: "train", groups: [{ trajectories: [t(0), t(1)] }] }],
    training: [{ step: 0, metrics: { loss: 1 } }],
    summaries: [{ step: 1, split: "train", mean: 0.5, std: 0.1, min: 0.4, max: 0.6, count: 0 }],
  };
  const both = combineRuns([{ run }, { run }]);
  expect(both.title).toBe("p/m vs p/m (2)");
  expect(both.steps.map((s) => s.run)).toEqual(["p/m", "p/m (2)"]);
  expect(both.training?.map((s) => s.run)).toEqual(["p/m", "p/m (2)"]);
  // A step known only from a summary is drawn from it.
  expect(stepStats(both).map((s) => [s.run, s.step, s.mean])).toEqual([
    ["p/m", 0, 0.5],
    ["p/m (2)", 0, 0.5],
    ["p/m", 1, 0.5],
    ["p/m (2)", 1, 0.5],
  ]);
});

it("serves on loopback only, refuses other Host names and methods, and says when the run cannot be read yet", async () => {
  await expect(serveReport({ load: async () => ({ steps: [] }), host: "0.0.0.0" })).rejects.toThrow(
    "host: expected 127.0.0.1, ::1 or localhost",
  );
  await expect(serveReport({ load: async () => ({ steps: [] }), interval: 1 })).rejects.toThrow(
    "options.interval: expected a number of milliseconds of at least 50, received 1.",
  );
  let fail = true;
  const server = await serveReport({
    load: async () => {
      if (fail) throw new Error("no state yet");
      return { steps: [{ step: 0, split: "train", groups: [{ trajectories: [t(1)] }] }] };
    },
  });
  const port = Number(new URL(server.url).port);
  const ask = (method: string, p: string, host = `127.0.0.1:${port}`) =>
    new Promise<{ status?: number; body: string }>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port, method, path: p, headers: { host } },
        (res) => {
          let body = "";
          res.on("data", (d) => (body += d));
          res.on("end", () => resolve({ status: res.statusCode, body }));
        },
      );
      req.on("error", reject);
      req.end();
    });
  try {
    expect((await ask("GET", "/", `rebind.example:${port}`)).status).toBe(421);
    expect((await ask("POST", "/")).status).toBe(405);
    expect((await ask("GET", "/nope")).status).toBe(404);
    const waiting = await ask("GET", "/");
    expect(waiting.status).toBe(200);
    expect(waiting.body).toContain("cannot read it yet: no state yet");
    const before = JSON.parse((await ask("GET", "/version")).body).version;
    fail = false;
    const after = JSON.parse((await ask("GET", "/version")).body).version;
    expect(after).not.toBe(before);
    expect((await ask("GET", "/")).body).toContain(`"version":${JSON.stringify(after)}`);
  } finally {
    await server.close();
  }
});
