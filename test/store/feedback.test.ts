import { describe, expect, it } from "vitest";
import {
  aggregateFeedback,
  FeedbackConflictError,
  FeedbackNotFoundError,
  InvalidFeedbackError,
  parseFeedback,
  TrajectoryStore,
} from "../../src/store/index.js";
import { tempDir, trajectory } from "./helpers.js";

const open = async () => {
  const store = await TrajectoryStore.open({ dir: tempDir(), logger: { warn() {} } });
  store.put({ id: "t1", session: "s", status: "finished", trajectory: trajectory(3), calls: 3 });
  return store;
};

describe("feedback by trajectory id", () => {
  it("sets the trajectory's reward and metrics, and makes it eligible", async () => {
    const store = await open();
    const { feedback, created } = store.addFeedback({
      trajectory_id: "t1",
      reward: 0.75,
      metrics: { resolved: true },
      comment: "good answer",
      source: "browser",
    });
    expect(created).toBe(true);
    expect(feedback).toMatchObject({
      trajectory_id: "t1",
      reward: 0.75,
      n: 1,
      comment: "good answer",
    });
    expect(feedback.feedback_id).toMatch(/^fb_/);
    const stored = store.get("t1");
    expect(stored?.trajectory.reward).toBe(0.75);
    expect(stored?.trajectory.metrics).toEqual({ latency_ms: 12, resolved: true });
    expect(stored).toMatchObject({ reward: 0.75, eligible: true });
    expect(stored?.feedback).toEqual([feedback]);
    // The comment stays with the feedback, out of the trajectory.
    expect(JSON.stringify(stored?.trajectory)).not.toContain("good answer");
    await store.close();
  });

  it("returns the stored record for a resend with the same key and content", async () => {
    const store = await open();
    const body = { trajectory_id: "t1", reward: 1, metrics: { a: 1, b: 2 }, idempotency_key: "k1" };
    const first = store.addFeedback(body);
    const again = store.addFeedback({ ...body, metrics: { b: 2, a: 1 } });
    expect(again).toEqual({ feedback: first.feedback, created: false });
    expect(store.get("t1")?.feedback).toHaveLength(1);
    await store.close();
  });

  it("refuses a resend with other content with 409, naming the first field that differs", async () => {
    const store = await open();
    store.addFeedback({ trajectory_id: "t1", reward: 1, comment: "x", idempotency_key: "k1" });
    const error = (() => {
      try {
        store.addFeedback({ trajectory_id: "t1", reward: 0, comment: "y", idempotency_key: "k1" });
      } catch (e) {
        return e;
      }
    })();
    expect(FeedbackConflictError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ field: "reward", status: 409 });
    expect((error as Error).message).toMatch(
      /idempotency_key "k1" was already stored with a different reward/,
    );
    expect(() =>
      store.addFeedback({ trajectory_id: "t1", reward: 1, idempotency_key: "k1" }),
    ).toThrow(expect.objectContaining({ field: "comment" }));
    expect(store.get("t1")?.trajectory.reward).toBe(1);
    await store.close();
  });

  it("answers 404 for an id the store does not hold", async () => {
    const store = await open();
    const error = (() => {
      try {
        store.addFeedback({ trajectory_id: "nope", reward: 1 });
      } catch (e) {
        return e;
      }
    })();
    expect(FeedbackNotFoundError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 404, trajectoryId: "nope" });
    await store.close();
  });

  it("keeps per-call values apart from the task reward, which the latest feedback gives", async () => {
    const store = await open();
    store.addFeedback({
      trajectory_id: "t1",
      turns: [
        { call: 1, reward: 1 },
        { call: 2, reward: 0 },
      ],
    });
    // No task reward yet: the mean of the per-call values.
    expect(store.get("t1")?.trajectory.reward).toBe(0.5);
    store.addFeedback({ trajectory_id: "t1", reward: 0.2, turns: [{ call: 2, reward: 1 }] });
    store.addFeedback({ trajectory_id: "t1", reward: 0.9 });
    const t = store.get("t1")?.trajectory;
    expect(t?.reward).toBe(0.9);
    expect(t?.metrics).toEqual({
      latency_ms: 12,
      turn_reward_1: 1,
      turn_reward_2: 1,
      shaping_reward: 2,
    });
    expect(() =>
      store.addFeedback({ trajectory_id: "t1", turns: [{ call: 4, reward: 1 }] }),
    ).toThrow(/turns\[0\]\.call: the trajectory has 3 calls, not 4/);
    await store.close();
  });

  it("lets a feedback say a trajectory is not eligible, the latest one deciding", () => {
    expect(aggregateFeedback([]).eligible).toBeNull();
    expect(aggregateFeedback([{ trajectory_id: "t", reward: 1, eligible: false }]).eligible).toBe(
      false,
    );
    expect(
      aggregateFeedback([
        { trajectory_id: "t", eligible: false },
        { trajectory_id: "t", reward: 1 },
      ]).eligible,
    ).toBe(false);
    expect(
      aggregateFeedback([
        { trajectory_id: "t", eligible: false },
        { trajectory_id: "t", eligible: true },
      ]),
    ).toMatchObject({ eligible: true, reward: null });
  });
});

describe("parseFeedback", () => {
  const problems = (body: unknown) => {
    try {
      parseFeedback(body);
    } catch (e) {
      expect(InvalidFeedbackError.isInstance(e)).toBe(true);
      return (e as InvalidFeedbackError).problems;
    }
    throw new Error("parsed");
  };

  it("names unknown fields by their path", () => {
    expect(problems({ trajectory_id: "t", rewrad: 1 })).toEqual([
      expect.stringMatching(/^rewrad: unknown field/),
    ]);
    expect(problems({ trajectory_id: "t", turns: [{ call: 1, reward: 1, x: 2 }] })).toEqual([
      expect.stringMatching(/^turns\[0\]\.x: unknown field/),
    ]);
  });

  it("names a bad value's path and refuses what cannot be a reward", () => {
    expect(problems({ trajectory_id: "t", reward: "1" })[0]).toMatch(/^reward: /);
    expect(problems({ trajectory_id: "t", reward: Number.NaN })[0]).toMatch(/^reward: /);
    expect(problems({ trajectory_id: "t", turns: [{ call: 0, reward: 1 }] })[0]).toMatch(
      /^turns\[0\]\.call: /,
    );
    expect(problems({ trajectory_id: "t", metrics: { x: "high" } })[0]).toMatch(/^metrics\.x: /);
    expect(problems({ trajectory_id: "t", metrics: { shaping_reward: 1 } })[0]).toMatch(
      /kept for the per-call values/,
    );
    expect(problems({ trajectory_id: "t", comment: "x".repeat(4097) })[0]).toMatch(/^comment: /);
    expect(problems({ trajectory_id: "t", idempotency_key: "k".repeat(201) })[0]).toMatch(
      /^idempotency_key: /,
    );
    expect(problems({ reward: 1 })[0]).toMatch(/^trajectory_id: /);
    expect(problems(null)[0]).toMatch(/^body: /);
  });
});
