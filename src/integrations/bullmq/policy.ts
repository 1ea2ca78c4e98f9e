import type { Redis } from "ioredis";
import type { Cluster } from "./options.js";

/** Raises the published step (never lowers it) and tells every worker. */
const RAISE = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')
local new = tonumber(ARGV[1])
if new > cur then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return new
end
return cur`;

export const policyKeys = (cluster: Cluster) => ({
  step: cluster.key("step"),
  channel: cluster.key("policy"),
});

export async function publishStep(client: Redis, cluster: Cluster, step: number): Promise<number> {
  const k = policyKeys(cluster);
  return Number(await client.eval(RAISE, 2, k.step, k.channel, String(step)));
}

export async function readStep(client: Redis, cluster: Cluster): Promise<number> {
  const value = await client.get(policyKeys(cluster).step);
  return value === null ? 0 : Number(value);
}
