// A BigInt in every position of a group, and in an extra field of a recorded
// chat call, is refused with our error naming its path (never JSON's bare
// TypeError); shipper options of every shape are accepted or refused naming
// the field.
import fc from "fast-check";
import {
  Recorder,
  TrainableModel,
  TrainingClient,
  TrajectoryGroup,
  TrajectoryShipper,
} from "trajectory-recorder";
import { type Emulator, startEmulator } from "trajectory-recorder/emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { toWireGroups } from "../../src/training/index.js";
import { anything, check } from "./helpers.js";

let emu: Emulator;
let client: TrainingClient;
let model: TrainableModel;

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  client = new TrainingClient({ apiKey: "fuzz-key", baseURL: emu.url });
  model = await TrainableModel.register(client, {
    project: "fuzz",
    name: "bigint",
    baseModel: "toy",
  });
});
afterAll(async () => {
  await emu.close();
});

const choice = (content: string) => ({
  index: 0,
  finish_reason: "stop",
  message: { role: "assistant", content, tool_calls: [] },
  logprobs: { content: [{ token: content, logprob: -0.5, bytes: null, top_logprobs: [] }] },
  token_ids: [7],
  prompt_token_ids: [1, 2],
});
const trajectory = (content: string, reward: number) => ({
  messages_and_choices: [{ role: "user", content: "say red" }, choice(content)],
  tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
  reward,
  metrics: { turns: 1 },
  metadata: { scenario: "a" },
  logs: [],
});
const groupJson = () => ({
  trajectories: [trajectory("red", 1), trajectory("blue", 0)],
  metadata: { scenario: "a" },
  metrics: {},
  logs: [],
  exceptions: [],
});

/** Every path inside `value`, containers and leaves. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [at];
  const inner = Array.isArray(value)
    ? value.flatMap((v, i) => paths(v, [...at, i]))
    : Object.entries(value).flatMap(([k, v]) => paths(v, [...at, k]));
  return [at, ...inner];
}

function setAt(root: unknown, path: (string | number)[], value: unknown): void {
  let at = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path.at(-1) as string | number] = value;
}

const isOurs = (error: unknown) =>
  error instanceof Error && error.name !== "TypeError" && !/serialize a BigInt/.test(error.message);

it("a BigInt in any position of a group's JSON is named by its path by toWireGroups and train", async () => {
  const all = paths(groupJson()).filter((p) => p.length > 0);
  expect(all.length).toBeGreaterThan(40);
  for (const path of all) {
    const json = groupJson();
    setAt(json, path, 7n);
    const last = String(path.at(-1));
    let wireError: unknown;
    try {
      toWireGroups([json as never], "train");
    } catch (error) {
      wireError = error;
    }
    expect(isOurs(wireError), path.join(".")).toBe(true);
    expect((wireError as Error).message, path.join(".")).toContain(last);
    const trained = await model.train([json as never]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isOurs(trained), path.join(".")).toBe(true);
  }
});

it("a BigInt added to any object of a TrajectoryGroup is named by shipper.add and model.train", async () => {
  const shipper = new TrajectoryShipper({ model, flushOnExit: false, validate: false });
  const objects = paths(groupJson()).filter((p) => {
    let v: unknown = groupJson();
    for (const k of p) v = (v as Record<string | number, unknown>)[k];
    return typeof v === "object" && v !== null && !Array.isArray(v) && !p.includes("logprobs");
  });
  expect(objects.length).toBeGreaterThan(10);
  let tried = 0;
  for (const path of objects) {
    const group = TrajectoryGroup.fromJSON(groupJson());
    let target: unknown = group;
    for (const k of path) target = (target as Record<string | number, unknown>)[k];
    // The group's and trajectories' own objects are classes: a field set on
    // them is not part of their JSON. Every plain object inside them is.
    if (typeof target !== "object" || target === null) continue;
    if (Object.getPrototypeOf(target) !== Object.prototype) continue;
    tried += 1;
    (target as Record<string, unknown>).fuzz_big = 7n;
    for (const [name, run] of [
      ["add", () => shipper.add(group)],
      ["train", () => model.train([group])],
    ] as const) {
      const error = await (async () => {
        try {
          await run();
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      const where = `${name} ${path.join(".")}`;
      expect(isOurs(error), `${where}: ${(error as Error)?.message}`).toBe(true);
      expect((error as Error).message, where).toContain("fuzz_big");
    }
  }
  expect(tried).toBeGreaterThan(8);
  await shipper.close();
});

it("a BigInt in an extra field of a recorded chat call is named; unwrapped, the SDK's own error stays", async () => {
  const recorder = new Recorder();
  const wrapped = recorder.wrap(client.createOpenAI());
  const body = {
    model: "wandb-artifact:///local/fuzz/bigint",
    messages: [{ role: "user" as const, content: "hi" }],
    extra_thing: { deep: [1, 2n] },
  };
  let named: unknown;
  await recorder.rollout(async () => {
    try {
      await wrapped.chat.completions.create(body as never);
    } catch (error) {
      named = error;
    }
  });
  expect((named as Error).name).toBe("InvalidArgumentError");
  expect((named as Error).message).toContain("body.extra_thing.deep[1]");
  const raw = await client
    .createOpenAI()
    .chat.completions.create(body as never)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect((raw as Error).name).toBe("TypeError");
});

const OPTION_KEYS = [
  "split",
  "concurrency",
  "maxQueuedBytes",
  "maxAttempts",
  "backoff",
  "exitTimeoutMs",
  "logger",
] as const;

it("shipper options of every shape are taken or refused naming the field", async () => {
  const shapes = fc.record(
    {
      ...Object.fromEntries(OPTION_KEYS.map((k) => [k, anything])),
      // Never a string: a fuzzed spool directory would be created on disk.
      spoolDir: anything.filter((v) => typeof v !== "string"),
    },
    { requiredKeys: [] },
  );
  await check(
    shapes,
    async (options) => {
      let shipper: TrajectoryShipper | undefined;
      try {
        shipper = new TrajectoryShipper({ ...(options as object), model, flushOnExit: false });
      } catch (error) {
        expect((error as Error).name).toBe("InvalidArgumentError");
        expect((error as Error).message).toMatch(/options\.\w+/);
        const field = /options\.(\w+)/.exec((error as Error).message)?.[1];
        expect(Object.keys(options as object)).toContain(field);
        return;
      }
      await shipper.close({ timeoutMs: 100 });
    },
    300,
  );
  for (const [options, field] of [
    [{ concurrency: Object.create(null) }, "options.concurrency"],
    [{ split: 5 }, "options.split"],
    [{ maxQueuedBytes: -5 }, "options.maxQueuedBytes"],
  ] as const) {
    expect(() => new TrajectoryShipper({ ...(options as object), model } as never)).toThrow(field);
  }
});
