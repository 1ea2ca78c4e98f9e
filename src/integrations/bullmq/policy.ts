import type { Redis } from "ioredis";
import { LUA, runScript } from "./lua/index.js";
import type { Cluster } from "./options.js";

export const policyKeys = (cluster: Cluster) => ({
  step: cluster.key("step"),
  channel: cluster.key("policy"),
});

/** Raises the published step (never lowers it) and tells every worker. */
export async function publishStep(client: Redis, cluster: Cluster, step: number): Promise<number> {
  const k = policyKeys(cluster);
  return Number(await runScript(client, LUA.stepRaise, [k.step, k.channel], [step]));
}

export async function readStep(client: Redis, cluster: Cluster): Promise<number> {
  const value = await client.get(policyKeys(cluster).step);
  return value === null ? 0 : Number(value);
}
