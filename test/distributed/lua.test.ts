// The BullMQ integration's Redis scripts: one .lua file each, named with the
// number of KEYS it takes, every one loaded by the build and accepted by a
// real Redis; a call with another number of keys is refused before it runs.
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LUA, runScript } from "../../src/integrations/bullmq/lua/index.js";
import { type RedisServer, startRedis } from "./redis-server.js";

const dir = fileURLToPath(new URL("../../src/integrations/bullmq/lua/", import.meta.url));
let redis: RedisServer;
let client: Redis;
beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.connection);
});
afterAll(async () => {
  client.disconnect();
  await redis.close();
});

it("has every .lua file named with its key count, each in the scripts the code runs", () => {
  const files = readdirSync(dir).filter((f) => f.endsWith(".lua"));
  expect(files).toHaveLength(22);
  for (const f of files) expect(f).toMatch(/^[a-z-]+\.\d+-keys?\.lua$/);
  const scripts = Object.values(LUA);
  expect(
    scripts.map((s) => `${s.name}.${s.keys}-key${s.keys === 1 ? "" : "s"}.lua`).sort(),
  ).toEqual(files.sort());
  // Each script says which KEYS it reads: as many as its name counts.
  for (const s of scripts) {
    const used = new Set([...s.source.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1])));
    expect(Math.max(...used), s.name).toBe(s.keys);
  }
});

it("every script compiles in Redis, and a call with the wrong number of keys is refused", async () => {
  for (const s of Object.values(LUA)) {
    expect(await client.script("LOAD", s.source)).toMatch(/^[0-9a-f]{40}$/);
  }
  await expect(runScript(client, LUA.stepRaise, ["only-one"], [1])).rejects.toThrow(
    "Lua script step-raise takes 2 KEYS, was given 1.",
  );
  expect(Number(await runScript(client, LUA.stepRaise, ["s", "c"], [3]))).toBe(3);
  expect(Number(await runScript(client, LUA.stepRaise, ["s", "c"], [2]))).toBe(3);
});
