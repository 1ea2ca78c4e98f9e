// The emulator's /log takes one request of 150,000 trajectories (it answered
// 500, "Maximum call stack size exceeded", when the rewards were spread into
// Math.min / Math.max).
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, apiKeys: { "scale-key": "me" }, maxBodyBytes: 2 ** 30 });
});
afterAll(async () => {
  await emu.close();
});

it("logs a group of 150,000 trajectories and reports their rewards", async () => {
  const headers = { authorization: "Bearer scale-key", "content-type": "application/json" };
  const model = (await (
    await fetch(`${emu.url}/preview/models`, {
      method: "POST",
      headers,
      body: JSON.stringify({ project: "scale", name: "log", base_model: "toy" }),
    })
  ).json()) as { id: string };
  const n = 150_000;
  const one = (reward: number) =>
    `{"messages_and_choices":[{"role":"user","content":"hi"}],"reward":${reward}}`;
  const items = Array.from({ length: n }, (_, i) => one(i % 3));
  const body = `{"split":"val","trajectory_groups":[{"trajectories":[${items.join(",")}]}]}`;
  const r = await fetch(`${emu.url}/preview/models/${model.id}/log`, {
    method: "POST",
    headers,
    body,
  });
  expect(r.status).toBe(200);
  expect(await r.json()).toMatchObject({
    num_trajectories: n,
    reward_min: 0,
    reward_max: 2,
  });
}, 120_000);
