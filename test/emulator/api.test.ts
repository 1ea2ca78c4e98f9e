import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../../src/emulator/index.js";
import { call, createModel, start, waitForJob } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start();
});
afterAll(async () => {
  await emu.close();
});

function choice(content: string, withLogprobs = true) {
  return {
    index: 0,
    finish_reason: "stop",
    message: { role: "assistant", content },
    logprobs: withLogprobs
      ? {
          content: content
            .split(" ")
            .map((w, i) => ({ token: i ? ` ${w}` : w, logprob: -1, top_logprobs: [] })),
        }
      : null,
  };
}
const group = (rewards: number[], withLogprobs = true) => ({
  trajectories: rewards.map((r) => ({
    messages_and_choices: [
      { role: "user", content: "say red" },
      choice(r > 0 ? "red" : "blue", withLogprobs),
    ],
    reward: r,
  })),
});

describe("auth", () => {
  it("needs no key for health and system-check", async () => {
    expect((await call(emu, "GET", "/health", undefined, null)).status).toBe(200);
    const sc = await call(emu, "GET", "/system-check", undefined, null);
    expect(sc.status).toBe(200);
    // The components the contract names: api, database, cpu_queue, gpu_queue.
    expect(sc.json).toEqual({
      api: true,
      database: true,
      cpu_queue: { success: true, duration: expect.any(Number), error: null },
      gpu_queue: { success: true, duration: expect.any(Number), error: null },
    });
  });
  it("answers 401 with a JSON detail for a missing or unknown key", async () => {
    const missing = await call(emu, "POST", "/preview/models", {}, null);
    expect(missing.status).toBe(401);
    expect(missing.json.detail).toMatch(/Missing bearer/);
    const wrong = await call(emu, "POST", "/chat/completions", {}, "nope");
    expect(wrong.status).toBe(401);
    // Chat completions answer in OpenAI's shape, which plain openai clients read.
    expect(wrong.json.error).toMatchObject({ code: "invalid_api_key", message: /not valid/ });
  });
  it("creates models under the key's entity", async () => {
    const a = await call(emu, "POST", "/preview/models", {
      project: "p",
      name: "x",
      base_model: "b",
    });
    const b = await call(
      emu,
      "POST",
      "/preview/models",
      { project: "p", name: "x", base_model: "b" },
      "other",
    );
    expect(a.json.entity).toBe("alice");
    expect(b.json.entity).toBe("bob");
    expect(a.json.id).not.toBe(b.json.id);
  });
});

describe("models", () => {
  it("validates the body with FastAPI-style detail naming the field", async () => {
    const r = await call(emu, "POST", "/preview/models", { project: "p", name: 3 });
    expect(r.status).toBe(422);
    const locs = r.json.detail.map((d: any) => d.loc.join("."));
    expect(locs).toContain("body.name");
    expect(locs).toContain("body.base_model");
    for (const d of r.json.detail) expect(typeof d.msg).toBe("string");
  });
  it("answers 409 for a duplicate name and returns the same model with return_existing", async () => {
    const m = await createModel(emu, "dup");
    const again = await call(emu, "POST", "/preview/models", {
      project: "demo",
      name: "dup",
      base_model: "b",
    });
    expect(again.status).toBe(409);
    expect(again.json.detail).toMatch(/already exists.*return_existing/);
    const reuse = await call(emu, "POST", "/preview/models", {
      project: "demo",
      name: "dup",
      base_model: "b",
      return_existing: true,
    });
    expect(reuse.status).toBe(200);
    expect(reuse.json.id).toBe(m.id);
    expect(reuse.json).toMatchObject({ entity: "alice", project: "demo", name: "dup" });
    expect(reuse.json.id).toMatch(/^[0-9a-f-]{36}$/);
  });
  it("deletes a model with its checkpoints, then 404s; its finished jobs stay readable", async () => {
    const m = await createModel(emu, "doomed");
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [group([1, 0])],
    });
    await waitForJob(emu, job.json.id);
    const del = await call(emu, "DELETE", `/preview/models/${m.id}`);
    expect(del.json).toEqual({ model_id: m.id, deleted_checkpoints: 2, deleted_run: true });
    expect((await call(emu, "DELETE", `/preview/models/${m.id}`)).status).toBe(404);
    expect((await call(emu, "GET", `/preview/models/${m.id}/checkpoints`)).status).toBe(404);
    expect((await call(emu, "GET", `/preview/training-jobs/${job.json.id}`)).json.status).toBe(
      "COMPLETED",
    );
  });
  it("answers 422 for a non-UUID path id and 404 for an unknown one", async () => {
    const bad = await call(emu, "GET", "/preview/models/not-a-uuid/checkpoints");
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["path", "model_id"]);
    expect((await call(emu, "GET", `/preview/models/${randomUUID()}/checkpoints`)).status).toBe(
      404,
    );
    expect((await call(emu, "GET", "/preview/training-jobs/123")).status).toBe(422);
    expect((await call(emu, "GET", `/preview/training-jobs/${randomUUID()}/events`)).status).toBe(
      404,
    );
  });
});

describe("checkpoints", () => {
  it("pages through random sizes in both orders without skipping or repeating", async () => {
    const m = await createModel(emu, "paged");
    for (let i = 0; i < 7; i++) {
      const job = await call(emu, "POST", "/preview/training-jobs", {
        model_id: m.id,
        trajectory_groups: [group([1, 0])],
      });
      await waitForJob(emu, job.json.id);
    }
    for (const order of ["asc", "desc"] as const) {
      for (let trial = 0; trial < 5; trial++) {
        const steps: number[] = [];
        let after: string | undefined;
        for (;;) {
          const limit = 1 + Math.floor(Math.random() * 4);
          const q = `?order=${order}&limit=${limit}${after ? `&after=${after}` : ""}`;
          const r = await call(emu, "GET", `/preview/models/${m.id}/checkpoints${q}`);
          expect(r.status).toBe(200);
          expect(r.json.object).toBe("list");
          expect(r.json.data.length).toBeLessThanOrEqual(limit);
          if (r.json.data.length) {
            expect(r.json.first_id).toBe(r.json.data[0].id);
            expect(r.json.last_id).toBe(r.json.data.at(-1).id);
          }
          steps.push(...r.json.data.map((c: any) => c.step));
          if (!r.json.has_more) break;
          after = r.json.last_id;
        }
        const expected = [0, 1, 2, 3, 4, 5, 6, 7];
        expect(steps).toEqual(order === "asc" ? expected : expected.reverse());
      }
    }
    const dflt = await call(emu, "GET", `/preview/models/${m.id}/checkpoints`);
    expect(dflt.json.data.map((c: any) => c.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const limit of ["0", "101", "x"]) {
      const r = await call(emu, "GET", `/preview/models/${m.id}/checkpoints?limit=${limit}`);
      expect(r.status).toBe(422);
      expect(r.json.detail[0].loc).toEqual(["query", "limit"]);
    }
    expect(
      (await call(emu, "GET", `/preview/models/${m.id}/checkpoints?order=up`)).json.detail[0].loc,
    ).toEqual(["query", "order"]);
  });
  it("keeps walking when the cursor's checkpoint is deleted mid-walk, in both orders", async () => {
    const m = await createModel(emu, "walk");
    for (let i = 0; i < 5; i++) {
      const job = await call(emu, "POST", "/preview/training-jobs", {
        model_id: m.id,
        trajectory_groups: [group([1, 0])],
      });
      await waitForJob(emu, job.json.id);
    }
    const list = (q: string) => call(emu, "GET", `/preview/models/${m.id}/checkpoints?${q}`);
    const first = await list("limit=2");
    expect(first.json.data.map((c: any) => c.step)).toEqual([0, 1]);
    await call(emu, "DELETE", `/preview/models/${m.id}/checkpoints`, { steps: [1] });
    const rest = await list(`limit=10&after=${first.json.last_id}`);
    expect(rest.status).toBe(200);
    expect(rest.json.data.map((c: any) => c.step)).toEqual([2, 3, 4, 5]);
    const desc = await list("order=desc&limit=2");
    expect(desc.json.data.map((c: any) => c.step)).toEqual([5, 4]);
    await call(emu, "DELETE", `/preview/models/${m.id}/checkpoints`, { steps: [4] });
    const down = await list(`order=desc&limit=10&after=${desc.json.last_id}`);
    expect(down.json.data.map((c: any) => c.step)).toEqual([3, 2, 0]);
    // A cursor that was never an item of this list is still an error.
    expect((await list(`after=${randomUUID()}`)).status).toBe(404);
  });
  it("answers an empty page with first_id and last_id as empty strings, as the OpenAPI documents declare", async () => {
    const m = await createModel(emu, "empty-page");
    const only = await call(emu, "GET", `/preview/models/${m.id}/checkpoints`);
    const past = await call(
      emu,
      "GET",
      `/preview/models/${m.id}/checkpoints?after=${only.json.last_id}`,
    );
    expect(past.json).toEqual({
      object: "list",
      data: [],
      first_id: "",
      last_id: "",
      has_more: false,
    });
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [group([1, 0])],
    });
    const events = await waitForJob(emu, job.json.id);
    const end = await call(
      emu,
      "GET",
      `/preview/training-jobs/${job.json.id}/events?after=${events.at(-1).id}`,
    );
    expect(end.json).toMatchObject({ data: [], first_id: "", last_id: "", has_more: false });
  });
  it("deletes steps and reports the ones that did not exist", async () => {
    const m = await createModel(emu, "cp-del");
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [group([1, 0])],
    });
    await waitForJob(emu, job.json.id);
    const r = await call(emu, "DELETE", `/preview/models/${m.id}/checkpoints`, { steps: [0, 5] });
    expect(r.json).toEqual({ deleted_count: 1, not_found_steps: [5] });
    const left = await call(emu, "GET", `/preview/models/${m.id}/checkpoints`);
    expect(left.json.data.map((c: any) => c.step)).toEqual([1]);
    expect(
      (await call(emu, "DELETE", `/preview/models/${m.id}/checkpoints`, { steps: "x" })).status,
    ).toBe(422);
  });
});

describe("log", () => {
  it("returns the metrics it computed and validates the body", async () => {
    const m = await createModel(emu, "logger");
    const r = await call(emu, "POST", `/preview/models/${m.id}/log`, {
      split: "val",
      model_id: m.id,
      trajectory_groups: [group([1, 0]), group([0.5, 0.5])],
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      split: "val",
      num_groups: 2,
      num_trajectories: 4,
      reward: 0.5,
      reward_min: 0,
      reward_max: 1,
    });
    expect(r.json.reward_std_dev).toBeCloseTo(Math.sqrt(0.125));
    const bad = await call(emu, "POST", `/preview/models/${m.id}/log`, { trajectory_groups: [] });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "split"]);
  });
});

describe("training jobs", () => {
  it("emits started, numeric gradient steps, then one terminal event after the checkpoint is listable", async () => {
    const m = await createModel(emu, "events");
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [group([1, 0, 0]), group([0, 1]), group([1, 1])],
    });
    expect(job.status).toBe(200);
    expect(Object.keys(job.json)).toEqual(["id"]);
    const events = await waitForJob(emu, job.json.id);
    expect(events[0]).toMatchObject({ type: "training_started", data: { num_sequences: 2 } });
    expect(events.slice(1, -1).map((e) => e.type)).toEqual(["gradient_step", "gradient_step"]);
    for (const e of events.slice(1, -1)) {
      for (const v of Object.values(e.data)) expect(typeof v).toBe("number");
    }
    expect(events.at(-1).type).toBe("training_ended");
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const latest = await call(emu, "GET", `/preview/models/${m.id}/checkpoints?order=desc&limit=1`);
    expect(latest.json.data[0].step).toBe(1);
    const status = await call(emu, "GET", `/preview/training-jobs/${job.json.id}`);
    expect(status.json).toMatchObject({
      id: job.json.id,
      status: "COMPLETED",
      error_message: null,
      checkpoint_step: 1,
    });
    // Event pages: after is exclusive, one at a time reaches the end.
    const seen: string[] = [];
    let after = "";
    for (;;) {
      const r = await call(
        emu,
        "GET",
        `/preview/training-jobs/${job.json.id}/events?limit=1${after ? `&after=${after}` : ""}`,
      );
      seen.push(...r.json.data.map((e: any) => e.id));
      if (!r.json.has_more) break;
      after = r.json.last_id;
    }
    expect(seen).toEqual(events.map((e) => e.id));
  });
  it("fails the job with a clear message for choices without logprobs, unless allowed", async () => {
    const m = await createModel(emu, "nolp");
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [group([1, 0], false)],
    });
    const events = await waitForJob(emu, job.json.id);
    expect(events.map((e) => e.type)).toEqual(["training_failed"]);
    expect(events[0].data.error_message).toMatch(
      /trajectory_groups\[0\]\.trajectories\[0\].*without logprobs/,
    );
    const status = await call(emu, "GET", `/preview/training-jobs/${job.json.id}`);
    expect(status.json).toMatchObject({ status: "FAILED" });
    const ok = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [group([1, 0], false)],
      experimental_config: { allow_training_without_logprobs: true },
    });
    expect((await waitForJob(emu, ok.json.id)).at(-1).type).toBe("training_ended");
  });
  it("fails when every group has equal rewards", async () => {
    const m = await createModel(emu, "flat");
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [group([1, 1]), group([0, 0])],
    });
    const events = await waitForJob(emu, job.json.id);
    expect(events).toHaveLength(1);
    expect(events[0].data.error_message).toMatch(/all equal.*nothing to learn/);
  });
  it("rejects an unknown model up front with 404 and bad ids or config with 422", async () => {
    expect(
      (
        await call(emu, "POST", "/preview/training-jobs", {
          model_id: randomUUID(),
          trajectory_groups: [group([1, 0])],
        })
      ).status,
    ).toBe(404);
    const bad = await call(emu, "POST", "/preview/training-jobs", {
      model_id: "m1",
      trajectory_groups: [group([1, 0])],
    });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["body", "model_id"]);
    const m = await createModel(emu, "cfg");
    const typo = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [group([1, 0])],
      experimental_config: { learning_rat: 1 },
    });
    expect(typo.status).toBe(422);
    expect(typo.json.detail[0].loc).toEqual(["body", "experimental_config"]);
  });
  it("points a 422 at the bad trajectory field", async () => {
    const m = await createModel(emu, "shape");
    const r = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [{ trajectories: [{ messages_and_choices: [], reward: "high" }] }],
    });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual([
      "body",
      "trajectory_groups",
      0,
      "trajectories",
      0,
      "reward",
    ]);
    const empty = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [],
    });
    expect(empty.json.detail[0].loc).toEqual(["body", "trajectory_groups"]);
  });
  it("trains from additional_histories too", async () => {
    const m = await createModel(emu, "hist");
    const traj = (r: number) => ({
      messages_and_choices: [{ role: "user", content: "say cat" }, choice(r ? "cat" : "dog")],
      additional_histories: [
        {
          messages_and_choices: [{ role: "user", content: "say fish" }, choice(r ? "fish" : "dog")],
        },
      ],
      reward: r,
    });
    const job = await call(emu, "POST", "/preview/training-jobs", {
      model_id: m.id,
      trajectory_groups: [{ trajectories: [traj(1), traj(0)] }],
    });
    const events = await waitForJob(emu, job.json.id);
    // Two trajectories, each with two trainable turns of one word plus the end token.
    expect(events[1].data.num_trainable_tokens).toBe(8);
  });
});
