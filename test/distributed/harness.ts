// One place that starts what every distributed test needs: a real Redis, the
// emulator behind a tap that records training jobs, and a registered model.
import OpenAI from "openai";
import { Recorder, TrainableModel, TrainingClient, type Trajectory } from "trajectory-recorder";
import type { DistributedLogger } from "trajectory-recorder/bullmq";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { type RedisServer, startRedis } from "./redis-server.js";
import { type ServiceTap, startTap } from "./service-tap.js";

export const KEY = "k";

export interface Harness {
  redis: RedisServer;
  emu: Emulator;
  tap: ServiceTap;
  model: TrainableModel;
  close(): Promise<void>;
}

export async function startHarness(name = `m${Date.now()}`): Promise<Harness> {
  const redis = await startRedis();
  const emu = await startEmulator({ port: 0, apiKeys: [KEY] });
  const tap = await startTap(emu.url);
  const client = new TrainingClient({ apiKey: KEY, baseURL: tap.url });
  const model = await TrainableModel.register(client, {
    project: "dist",
    name,
    baseModel: "emulator/toy-bigram",
  });
  return {
    redis,
    emu,
    tap,
    model,
    close: async () => {
      await tap.close();
      await emu.close();
      await redis.close();
    },
  };
}

/** The model name of a step; step 0 is the base model (it has no checkpoint). */
export const inferenceNameOf = (model: TrainableModel) => (step: number) =>
  model.inferenceName(step > 0 ? step : undefined);

/** A wrapped client and a one-call rollout against the emulator. */
export function agent(baseURL: string) {
  const recorder = new Recorder();
  const openai = recorder.wrap(new OpenAI({ apiKey: KEY, baseURL, maxRetries: 0 }));
  // The index keeps a group's rewards apart: the service refuses groups
  // whose rewards are all equal (nothing to learn).
  const say = async (model: string, trajectory: Trajectory, target: string, index: number) => {
    const r = await openai.chat.completions.create({
      model,
      messages: [{ role: "user", content: `please say ${target}` }],
      max_tokens: 4,
    });
    trajectory.reward = (r.choices[0]?.message.content?.includes(target) ? 1 : 0) + index / 10;
  };
  return { recorder, openai, say };
}

/** A logger that keeps its lines, for assertions. */
export function memoryLogger(): DistributedLogger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (m: string) => {
    lines.push(m);
    if (process.env.DEBUG_DISTRIBUTED) console.log(m);
  };
  return { lines, info: keep, warn: keep, error: keep };
}

/** Resolves once `predicate` holds, checked after each call of the returned `poke`. */
export function when(predicate: () => boolean): { poke: () => void; done: Promise<void> } {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  const poke = () => {
    if (predicate()) resolve();
  };
  return { poke, done };
}

/**
 * Resolves once a condition read from Redis or a counter holds, checked
 * every 50 ms: waits for a state, never for a fixed time.
 */
export async function until(
  condition: () => Promise<boolean> | boolean,
  what = "the condition",
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
