// One error family: every error class the package exports carries the
// family's mark, answers isInstance() for its own instances and its
// subclasses' (from any copy of the code), and says no to everything else.

import * as root from "trajectory-recorder";
import * as bullmq from "trajectory-recorder/bullmq";
import * as core from "trajectory-recorder/core";
import * as errs from "trajectory-recorder/errors";
import { describe, expect, it, vi } from "vitest";
import { createOutcome } from "../../src/client/create-outcome.js";

type ErrorClass = (abstract new (
  ...args: never[]
) => Error) & {
  isInstance(value: unknown): boolean;
};
const errorClasses = (mod: Record<string, unknown>) =>
  Object.entries(mod).filter(
    (e): e is [string, ErrorClass] =>
      typeof e[1] === "function" && (e[1] as { prototype?: unknown }).prototype instanceof Error,
  );
const exported = [
  ...errorClasses(root),
  ...errorClasses(errs),
  ...errorClasses(core),
  ...errorClasses(bullmq),
];
/** An instance made without running the constructor: what the mark is about is the class. */
const instanceOf = (Class: ErrorClass) => Object.create(Class.prototype) as Error;

describe("the error family", () => {
  it("covers every exported error class", () => {
    expect(exported.length).toBeGreaterThanOrEqual(30);
    for (const [name, Class] of exported) {
      expect(typeof Class.isInstance, name).toBe("function");
      expect(root.TrajectoryRecorderError.isInstance(instanceOf(Class)), name).toBe(true);
      expect(instanceOf(Class) instanceof root.TrajectoryRecorderError, name).toBe(true);
      expect(Class.isInstance(instanceOf(Class)), name).toBe(true);
    }
  });

  it("says no to other errors and values", () => {
    const others = [new Error("x"), new TypeError("x"), new RangeError("x"), {}, null, "e", 1];
    for (const value of others) {
      expect(root.TrajectoryRecorderError.isInstance(value)).toBe(false);
      expect(value instanceof root.TrajectoryRecorderError).toBe(false);
      for (const [, Class] of exported) expect(Class.isInstance(value)).toBe(false);
    }
  });

  it("follows the class tree: a subclass is its base, not its sibling", () => {
    const e = new errs.NotFoundError({ method: "GET", path: "/v1/x" }, 404, {}, new Headers());
    expect(root.APIError.isInstance(e)).toBe(true);
    expect(errs.TrainingClientError.isInstance(e)).toBe(true);
    expect(errs.NotFoundError.isInstance(e)).toBe(true);
    expect(errs.ConflictError.isInstance(e)).toBe(false);
    expect(root.InvalidArgumentError.isInstance(e)).toBe(false);
    // instanceof of a subclass stays the plain prototype check.
    expect(e instanceof errs.ConflictError).toBe(false);
    expect(e instanceof root.APIError).toBe(true);
  });

  it("keeps the engine's classes where they were: TypeError and RangeError", () => {
    const e = new root.InvalidArgumentError("f", "x", "a number", "s");
    expect(e).toBeInstanceOf(TypeError);
    expect(root.TrajectoryRecorderError.isInstance(e)).toBe(true);
    expect(errs.InvalidRewardError.prototype).toBeInstanceOf(RangeError);
  });

  it("works across two copies of the code", async () => {
    vi.resetModules();
    const copy = (await import("../../src/index.js")) as unknown as typeof root;
    const copyErrs = (await import("../../src/errors.js")) as unknown as typeof errs;
    expect(copy.APIError).not.toBe(root.APIError);
    expect(copyErrs.APIError).toBe(copy.APIError);
    const e = new copyErrs.RateLimitError(
      { method: "POST", path: "/v1/x" },
      429,
      {},
      new Headers(),
    );
    expect(e instanceof root.APIError).toBe(false); // what isInstance is for
    expect(root.APIError.isInstance(e)).toBe(true);
    expect(errs.RateLimitError.isInstance(e)).toBe(true);
    expect(errs.NotFoundError.isInstance(e)).toBe(false);
    expect(e instanceof root.TrajectoryRecorderError).toBe(true);
    expect(
      copy.TrajectoryRecorderError.isInstance(new root.InvalidArgumentError("f", "x", "y", 1)),
    ).toBe(true);
  });

  it("is what the package throws", async () => {
    vi.stubEnv("WANDB_API_KEY", "");
    const thrown = async (f: () => unknown) => {
      try {
        await f();
      } catch (error) {
        return error;
      }
      return "did not throw";
    };
    const errors = [
      await thrown(() => new root.TrainingClient({ apiKey: "" })),
      await thrown(() => new root.TrainingClient({ apiKey: "k", baseURL: "localhost:1" })),
      await thrown(() => root.rankRewards(null as never)),
      await thrown(() => root.Trajectory.fromJSON({ reward: "high" })),
      await thrown(() => new bullmq.RolloutProducer({} as never)),
      await thrown(() =>
        root.validateTrajectory({
          messages_and_choices: [{ role: "tool", content: "x", tool_call_id: "c1" }],
          reward: 0,
        }),
      ),
      await thrown(() => bullmq.retrain({ connection: {} }, [1] as never)),
      await thrown(() => bullmq.RolloutWorker.start({ connection: {} } as never)),
    ];
    for (const e of errors)
      expect(root.TrajectoryRecorderError.isInstance(e), `${errors.indexOf(e)}: ${e}`).toBe(true);
  });
});

describe("createOutcome: may a failed create request have reached the service?", () => {
  const target = { method: "POST", path: "/v1/preview/training-jobs" };
  const api = (status: number) => root.APIError.generate(target, status, {}, new Headers());
  it.each([
    [
      "a failed GET before the POST",
      Object.assign(new Error("x"), { method: "GET", status: 500 }),
      "retry",
    ],
    ["429", api(429), "retry"],
    ["503", api(503), "retry"],
    [
      "connection refused",
      new errs.APIConnectionError(target, Object.assign(new Error("c"), { code: "ECONNREFUSED" })),
      "retry",
    ],
    ["400", api(400), "refused"],
    ["422", api(422), "refused"],
    ["not a request's error", new root.InvalidTrainingOptionsError("train", ["x"]), "refused"],
    ["500", api(500), "uncertain"],
    ["408", api(408), "uncertain"],
    [
      "a reset after sending",
      new errs.APIConnectionError(target, Object.assign(new Error("r"), { code: "ECONNRESET" })),
      "uncertain",
    ],
    ["a timeout", new errs.APIConnectionTimeoutError(target, 10), "uncertain"],
  ])("%s: %s", (_, error, outcome) => {
    expect(createOutcome(error)).toBe(outcome);
  });
});
