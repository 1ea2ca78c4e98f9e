// The standalone proxy's control API from an orchestrator's side: zod-checked
// bodies with the field path in the error, the rollout lifecycle, groups
// handed to a shipper, and the control key.
import OpenAI from "openai";
import type { TrajectoryGroup } from "trajectory-recorder";
import { startRecordingProxy } from "trajectory-recorder/proxy";
import { afterEach, expect, it } from "vitest";
import { startVllmServer } from "../helpers/vllm-server.js";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function setup(options: Record<string, unknown> = {}) {
  const up = await startVllmServer({
    respond: (body) => ({ content: `you said ${body.messages.at(-1).content}` }),
  });
  closers.push(() => up.close());
  const shipped: TrajectoryGroup[] = [];
  const proxy = await startRecordingProxy({
    upstream: { baseURL: up.baseURL },
    shipper: { add: (g) => void shipped.push(g) },
    logger: { warn: () => {} },
    ...options,
  });
  closers.push(() => proxy.close());
  const call = async (method: string, path: string, body?: unknown, key?: string) => {
    const r = await fetch(`${proxy.url}${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  return { proxy, call, shipped };
}

it("opens a rollout, records the agent's calls, takes reward and metrics, finishes with the Trajectory JSON, groups and ships", async () => {
  const { proxy, call, shipped } = await setup();
  const ids: string[] = [];
  for (const word of ["one", "two"]) {
    const opened = await call("POST", "/rollouts", { metadata: { word } });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({ status: "open", base_url: proxy.baseURL, group: null });
    expect(opened.body.api_key).toMatch(/^trr-/);
    const openai = new OpenAI({ baseURL: opened.body.base_url, apiKey: opened.body.api_key });
    await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: word }],
    });
    const patched = await call("PATCH", `/rollouts/${opened.body.id}`, {
      reward: 0.5,
      metrics: { turns: 1 },
    });
    expect(patched.body).toMatchObject({ reward: 0.5, metrics: { turns: 1 } });
    expect(patched.body.api_key).toBeUndefined();
    const finished = await call("POST", `/rollouts/${opened.body.id}/finish`, {
      reward: word === "one" ? 1 : 0,
      logs: ["scored"],
    });
    expect(finished.status).toBe(200);
    expect(finished.body.trajectory).toMatchObject({
      reward: word === "one" ? 1 : 0,
      metadata: { word },
      metrics: { turns: 1 },
      logs: ["scored"],
    });
    expect(finished.body.trajectory.messages_and_choices.at(-1)).toMatchObject({
      message: { content: `you said ${word}` },
    });
    expect(
      finished.body.trajectory.messages_and_choices.at(-1).logprobs.content.length,
    ).toBeGreaterThan(0);
    // The agent's key stops working with its rollout (and the SDK is told not to retry).
    await expect(
      openai.chat.completions.create({ model: "m", messages: [] }),
    ).rejects.toMatchObject({ status: 409 });
    ids.push(opened.body.id);
  }
  const group = await call("POST", "/groups", { rollouts: ids, metadata: { task: "echo" } });
  expect(group.status).toBe(201);
  const again = await call("POST", "/groups", { rollouts: [ids[0]] });
  expect(again.status).toBe(409);
  expect(again.body.error.param).toBe("body.rollouts.0");
  const got = await call("GET", `/groups/${group.body.id}`);
  expect(got.body.group.trajectories.map((t: any) => t.reward)).toEqual([1, 0]);
  const ship = await call("POST", `/groups/${group.body.id}/ship`);
  expect(ship.body).toEqual({ id: group.body.id, shipped: true });
  expect(shipped).toHaveLength(1);
  expect(shipped[0]?.trajectories.map((t) => t.metadata.word)).toEqual(["one", "two"]);
  expect((await call("GET", `/rollouts/${ids[0]}`)).status).toBe(404);
});

it("names the field in every refusal: zod paths, bad JSON, unknown ids, open rollouts in a group, no trainer", async () => {
  const { call } = await setup();
  const bad = await call("POST", "/rollouts", { metadata: "x" });
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ code: "invalid_body", param: "body.metadata" });
  expect(bad.body.error.message).toMatch(/^body\.metadata: /);
  const opened = await call("POST", "/rollouts", {});
  const reward = await call("PATCH", `/rollouts/${opened.body.id}`, {
    reward: "high",
    metrics: { x: "y" },
  });
  expect(reward.body.error.issues.map((i: any) => i.path)).toEqual([
    "body.reward",
    "body.metrics.x",
  ]);
  const extra = await call("PATCH", `/rollouts/${opened.body.id}`, { rewrd: 1 });
  expect(extra.body.error.message).toContain("rewrd");
  expect((await call("POST", "/rollouts", "{not json")).body.error.code).toBe("invalid_json");
  expect((await call("GET", "/rollouts/rollout-999")).status).toBe(404);
  const open = await call("POST", "/groups", { rollouts: [opened.body.id] });
  expect(open.status).toBe(409);
  expect(open.body.error.message).toContain("still open");
  const empty = await call("POST", "/groups", { rollouts: [] });
  expect(empty.body.error.param).toBe("body.rollouts");
  const train = await call("POST", "/train", { groups: ["group-1"] });
  expect(train.status).toBe(409);
  expect(train.body.error.code).toBe("no_model");
  expect((await call("GET", "/nowhere")).status).toBe(404);
});

it("asks for the control key when it has one, and refuses to listen beyond loopback without one", async () => {
  const { call } = await setup({ apiKey: "control-key-0123" });
  expect((await call("POST", "/rollouts", {})).status).toBe(401);
  expect((await call("POST", "/rollouts", {}, "wrong-key-01234")).status).toBe(401);
  expect((await call("POST", "/rollouts", {}, "control-key-0123")).status).toBe(201);
  await expect(
    startRecordingProxy({
      upstream: { baseURL: "http://127.0.0.1:9/v1" },
      host: "0.0.0.0",
      allowRemote: true,
    }),
  ).rejects.toThrow(/options\.apiKey: the proxy would listen on 0\.0\.0\.0/);
});
