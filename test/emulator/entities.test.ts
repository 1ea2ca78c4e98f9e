// Each key acts for one entity: another entity's models and jobs answer as if
// they did not exist, and a key cannot create models for another entity.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { call, createModel, KEY, start, waitForJob } from "./helpers.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await start(); // KEY is alice's, "other" is bob's
});
afterAll(async () => {
  await emu.close();
});

const BOB = "other";
const group = {
  trajectories: [1, 0].map((reward) => ({
    messages_and_choices: [
      { role: "user", content: "say red" },
      {
        index: 0,
        finish_reason: "length",
        message: { role: "assistant", content: reward ? "red" : "blue" },
        logprobs: { content: [{ token: reward ? "red" : "blue", logprob: -3 }] },
      },
    ],
    reward,
  })),
};

it("answers 404 to another entity's key for every model and job route, as for a missing model", async () => {
  const m = await createModel(emu, "private");
  const job = await call(emu, "POST", "/preview/training-jobs", {
    model_id: m.id,
    trajectory_groups: [group],
  });
  await waitForJob(emu, job.json.id);
  const asBob = (method: string, path: string, body?: unknown) =>
    call(emu, method, path, body, BOB);
  const attempts = [
    await asBob("GET", `/preview/models/${m.id}/checkpoints`),
    await asBob("DELETE", `/preview/models/${m.id}/checkpoints`, { steps: [0] }),
    await asBob("POST", `/preview/models/${m.id}/log`, {
      split: "val",
      trajectory_groups: [group],
    }),
    await asBob("POST", "/preview/training-jobs", { model_id: m.id, trajectory_groups: [group] }),
    await asBob("POST", "/preview/sft-training-jobs", {
      model_id: m.id,
      training_data_url: "file:///nowhere.jsonl",
    }),
    await asBob("GET", `/preview/training-jobs/${job.json.id}`),
    await asBob("GET", `/preview/training-jobs/${job.json.id}/events`),
    await asBob("DELETE", `/preview/models/${m.id}`),
  ];
  for (const r of attempts) {
    expect(r.status).toBe(404);
    expect(r.json.detail).toMatch(/not found/);
  }
  const chat = await asBob("POST", "/chat/completions", {
    model: `wandb-artifact:///alice/${m.project}/${m.name}`,
    messages: [{ role: "user", content: "hi" }],
  });
  expect(chat.status).toBe(404);
  expect(chat.json.error.code).toBe("model_not_found");
  // Nothing happened to alice's model.
  const mine = await call(emu, "GET", `/preview/models/${m.id}/checkpoints`);
  expect(mine.json.data.map((c: any) => c.step)).toEqual([0, 1]);
  expect((await call(emu, "GET", `/preview/training-jobs/${job.json.id}`)).status).toBe(200);
});

it("creates models only for the key's own entity: 403 for another, the key's entity for null", async () => {
  const body = { project: "p", name: "claimed", base_model: "b" };
  const other = await call(emu, "POST", "/preview/models", { ...body, entity: "alice" }, BOB);
  expect(other.status).toBe(403);
  expect(other.json.detail).toMatch(/entity bob.*cannot create models for entity alice/);
  const own = await call(emu, "POST", "/preview/models", { ...body, entity: "bob" }, BOB);
  expect(own.status).toBe(200);
  expect(own.json.entity).toBe("bob");
  const unset = await call(
    emu,
    "POST",
    "/preview/models",
    { ...body, name: "n2", entity: null },
    KEY,
  );
  expect(unset.json.entity).toBe("alice");
  // return_existing finds only the caller's own model of that name.
  const same = await call(emu, "POST", "/preview/models", { ...body, return_existing: true }, KEY);
  expect(same.json.entity).toBe("alice");
  expect(same.json.id).not.toBe(own.json.id);
});

it("lets the single user of an emulator without a key list act as any entity", async () => {
  const open = await startEmulator({ port: 0 });
  try {
    const r = await call(open, "POST", "/preview/models", {
      project: "p",
      name: "n",
      base_model: "b",
      entity: "team",
    });
    expect(r.json.entity).toBe("team");
    expect(
      (await call(open, "GET", `/preview/models/${r.json.id}/checkpoints`, undefined, "any"))
        .status,
    ).toBe(200);
  } finally {
    await open.close();
  }
});
